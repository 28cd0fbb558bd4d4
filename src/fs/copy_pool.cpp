// A tree's small files on a few threads, in one of two ways:
//
// Cloned, on a file system that shares extents.  FICLONE is a blocking
// system call with no io_uring opcode, and most of its time is spent waiting
// (XFS commits a transaction for each clone), so threads overlap it even on
// few CPUs.  bench/clone_pool.c, which does exactly the steps below for
// 10,000 files of 4 KiB on XFS (reflink=1), on a 2-CPU machine at load 11:
// 1 thread 2.2-3.2 s, 2 threads 1.5-2.0 s, 4 threads 1.2-1.4 s; hence 4 by
// default (CopyOptions::clone_threads).
//
// Copied with read and write, when the source's bytes are in the page cache
// (tree_is_cached samples it).  Then nothing waits on the device and the
// chains' cost is io-wq's: io_uring runs every create (O_CREAT) and, on
// ext4, every buffered write on a kernel worker, so each file is handed
// between threads several times, and the workers queue on the directory's
// lock.  Plain system calls on a few threads of our own do the same work
// with no hand-offs: 10,000 files of 4 KiB on ext4, 2 CPUs, warm: chains
// 170 ms, coreutils 119 ms, 1 thread 111 ms, 2 threads 78 ms, 4 threads
// 77 ms (a C prototype of these steps); `uringkit cp -r` itself, same tree:
// 0.24 s against the chains' 0.39 s and coreutils' 0.41 s
// (bench/results/files_cp_tree.md).  A cold tree stays on the chains, which
// keep many reads queued at the device (the prototype, cold: chains 231 ms,
// 2 threads 510 ms).
//
// Each worker takes the next file: open the source (and, for a new tree, take
// its statx there: bench/clone_pool.c does the same), create the destination
// (O_CREAT | O_EXCL | O_NOFOLLOW, relative to its directory's descriptor,
// pinned for the run: the directory is one this copy created),
// FICLONE or read -> write, fsync with --sync, close both; on any failure the
// destination is removed.  Workers touch nothing shared but an atomic index,
// their own system call count, and their own files' outcome slots, each
// published with a release flag: the submitting thread (a worker too) counts
// finished files for progress as it goes, and turns outcomes into counts and
// messages after joining the others, in the tree's order.  A clone the file system declines
// (EOPNOTSUPP,
// ...) stops the pool (not with --reflink=always), and the files not cloned
// go back to the caller for the chains.
#include "copy_chain.hpp"

#include "uringkit/sys/page_cache.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <system_error>
#include <thread>

namespace uringkit::fs::detail {
namespace {

// not_regular: a file whose stat was deferred turned out to be something
// else (replaced since the walk): handed back to be stat'd and copied as what
// it is.  not_small: (read -> write) a deferred file over kSmallMax bytes or
// with holes, and redo: one that ended before its size; both go back, stat'd,
// to the paths that copy such files.
enum class Step : std::uint8_t {
    not_taken,
    done,
    not_regular,
    not_small,
    redo,
    open_src,
    create,
    clone,
    read,
    write,
    changed,
    fsync,
    close
};

struct Outcome {
    Step step = Step::not_taken;
    int err = 0;
    std::uint64_t size_after = 0;  // Step::changed
};

bool declined(int err) noexcept {
    return err == EOPNOTSUPP || err == ENOTTY || err == EXDEV || err == ENOSYS;
}

// Retries a system call that a signal interrupted before it did anything.
template <class F>
ssize_t restarting(F f) {
    ssize_t r;
    do r = f();
    while (r < 0 && errno == EINTR);
    return r;
}

enum class Mode { clone, bytes };

class FilePool {
public:
    FilePool(Ctx& c, Tree& t, const HeldDirs& dirs, Mode mode, std::span<const std::size_t> files)
        : c_(c),
          t_(t),
          dirs_(dirs),
          mode_(mode),
          files_(files),
          out_(files.size()),
          finished_(new std::atomic<bool>[files.size()]),
          shown_(files.size(), 0) {
        for (std::size_t k = 0; k < files.size(); ++k)
            finished_[k].store(false, std::memory_order_relaxed);
    }

    void run(unsigned threads) {
        std::vector<std::thread> pool;
        std::vector<std::uint64_t> syscalls(threads, 0);
        for (unsigned w = 1; w < threads; ++w) {
            try {
                pool.emplace_back([this, &syscalls, w] { work(syscalls[w], false); });
            } catch (const std::system_error&) {
                break;  // no more threads: fewer workers, same work
            }
        }
        work(syscalls[0], true);  // the submitting thread is a worker too
        for (std::thread& th : pool) th.join();
        for (std::uint64_t n : syscalls) c_.syscalls() += n;
    }

    // After run(): counts, failures and the files that go back, in order.
    void settle(FsPair* pair, std::vector<std::size_t>& rest) {
        for (std::size_t k = 0; k < files_.size(); ++k) {
            const std::size_t e = files_[k];
            const Outcome& o = out_[k];
            const std::string dst(t_.dst[e]);
            switch (o.step) {
                case Step::not_taken:
                    if (!c_.stop_requested()) rest.push_back(e);
                    break;
                case Step::not_regular:
                case Step::not_small:
                case Step::redo:
                    rest.push_back(e);
                    break;
                case Step::done:
                    ++c_.result.files;
                    ++(mode_ == Mode::clone ? c_.result.reflinked_files
                                            : c_.result.read_write_files);
                    c_.result.bytes += t_.st[e].stx_size;
                    if (shown_[k]) break;
                    if (c_.o.verify) {
                        if (auto f = verify_copy(c_, t_.src.c_str(e), verify_where(e), nullptr)) {
                            c_.report(*f);
                            break;
                        }
                    }
                    file_done(c_, t_.st[e].stx_size);
                    break;
                case Step::open_src:
                    c_.report(
                        {CopyStatus::bad_input, quoted_message("cannot open", t_.src[e], o.err)});
                    break;
                case Step::create:
                    c_.report({status_of_write(o.err),
                               quoted_message("cannot create regular file", dst, o.err)});
                    break;
                case Step::clone:
                    if (declined(o.err) && pair) pair->reflink = Known::no;
                    if (c_.o.reflink == Reflink::always) {
                        c_.report({CopyStatus::failure,
                                   "cannot clone '" + std::string(t_.src[e]) + "' to '" + dst +
                                       "' (--reflink=always, " + fs_label(pair->dst_type) +
                                       "): " + std::strerror(o.err) + " (errno " +
                                       std::to_string(o.err) + ")"});
                    } else if (o.err == ENOSPC || o.err == EDQUOT || o.err == EIO) {
                        c_.report({status_of_write(o.err), errno_message(dst, "FICLONE", o.err)});
                    } else {
                        rest.push_back(e);  // copied another way
                    }
                    break;
                case Step::read:
                    c_.report({CopyStatus::failure, io_message(t_.src[e], "read", 0, o.err)});
                    break;
                case Step::write:
                    c_.report({status_of_write(o.err), io_message(dst, "write", 0, o.err)});
                    break;
                case Step::changed:
                    c_.report({CopyStatus::failure, std::string(t_.src[e]) +
                                                        ": changed size while being copied (" +
                                                        std::to_string(t_.st[e].stx_size) + " -> " +
                                                        std::to_string(o.size_after) + " bytes)"});
                    break;
                case Step::fsync:
                case Step::close:
                    c_.report(
                        {status_of_write(o.err),
                         errno_message(dst, o.step == Step::fsync ? "fsync" : "close", o.err)});
                    break;
            }
        }
    }

private:
    Where verify_where(std::size_t e) const {
        return {dirs_.held(t_.parent[e]), t_.name(e), std::string(t_.dst[e]), true};
    }

    // `caller`: the thread that called copy(), which alone may run the
    // progress callback (file_done) for files finished so far.
    void work(std::uint64_t& syscalls, bool caller) {
        // read -> write: one file at a time, so one buffer of the largest size a worker copies.
        std::unique_ptr<char[]> buf;
        if (mode_ == Mode::bytes) buf.reset(new char[kSmallMax]);
        for (;;) {
            if (stop_.load(std::memory_order_relaxed) || c_.stop_requested()) return;
            const std::size_t k = next_.fetch_add(1, std::memory_order_relaxed);
            if (k >= files_.size()) return;
            out_[k] = copy_one(files_[k], buf.get(), syscalls);
            if (out_[k].step == Step::clone && declined(out_[k].err) &&
                c_.o.reflink != Reflink::always)
                stop_.store(true, std::memory_order_relaxed);
            finished_[k].store(true, std::memory_order_release);
            if (caller) show_progress();
        }
    }

    // Progress while the pool runs, not only once it is joined: the files
    // finished in order so far, each once (settle() skips them).  Verified
    // files are counted after their check, in settle().
    void show_progress() {
        if (!c_.o.on_file || c_.o.verify) return;
        for (;
             shown_upto_ < files_.size() && finished_[shown_upto_].load(std::memory_order_acquire);
             ++shown_upto_)
            if (out_[shown_upto_].step == Step::done) {
                shown_[shown_upto_] = 1;
                file_done(c_, t_.st[files_[shown_upto_]].stx_size);
            }
    }

    Outcome copy_one(std::size_t e, char* buf, std::uint64_t& syscalls) {
        const bool deferred = t_.st_res[e] == kStatDeferred;
        // O_NOFOLLOW and O_NONBLOCK: what the walk saw as a file may since
        // have become a link or a FIFO, which this open must neither follow
        // nor wait on.
        ++syscalls;
        const int s =
            ::open(t_.src.c_str(e), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
        if (s < 0) return {deferred && errno == ELOOP ? Step::not_regular : Step::open_src, errno};
        if (deferred) {
            struct statx x {};
            ++syscalls;
            if (::statx(s, "", AT_EMPTY_PATH, kTreeStatMask, &x) != 0) {
                const int err = errno;
                ++syscalls;
                ::close(s);
                return {Step::open_src, err};
            }
            t_.st[e] = x;  // this file's own slots: no other thread touches them
            t_.st_res[e] = 0;
            const Step other = !S_ISREG(x.stx_mode) ? Step::not_regular
                               : mode_ == Mode::bytes &&
                                       (x.stx_size > kSmallMax || x.stx_blocks * 512 < x.stx_size)
                                   ? Step::not_small
                                   : Step::done;
            if (other != Step::done) {
                if (other == Step::not_regular)
                    t_.st_res[e] = kStatDeferred;  // stat'd again as what it is
                ++syscalls;
                ::close(s);
                return {other, 0};
            }
        }
        // The source's permission bits less the umask, no set-ID bits: cp's rule.
        ++syscalls;
        const int dir = dirs_.held(t_.parent[e]);
        const int d =
            ::openat(dir, t_.name(e), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     c_.o.preserve.creation_bits(t_.st[e].stx_mode));
        Outcome out{Step::done, 0};
        if (d < 0) {
            out = {Step::create, errno};
        } else {
            out = mode_ == Mode::clone ? clone(s, d, syscalls) : read_write(e, s, d, buf, syscalls);
            if (out.step == Step::done && c_.o.fsync && (++syscalls, ::fsync(d) != 0))
                out = {Step::fsync, errno};
            ++syscalls;
            if (::close(d) != 0 && out.step == Step::done) out = {Step::close, errno};
            if (out.step != Step::done) {
                ++syscalls;
                ::unlinkat(dir, t_.name(e), 0);
            }
        }
        ++syscalls;
        ::close(s);
        return out;
    }

    static Outcome clone(int s, int d, std::uint64_t& syscalls) {
        ++syscalls;
        if (::ioctl(d, FICLONE, s) != 0) return {Step::clone, errno};
        return {Step::done, 0};
    }

    // The file's size as the stat saw it, then its size again: a file that
    // changed size while read is a failure, as on the chains.  One that ends
    // early goes back to the large-file path, which tells a shrunk file from
    // a short read.
    Outcome read_write(std::size_t e, int s, int d, char* buf, std::uint64_t& syscalls) const {
        const std::uint64_t size = t_.st[e].stx_size;
        std::uint64_t got = 0;
        while (got < size) {
            ++syscalls;
            const ssize_t n = restarting([&] { return ::read(s, buf + got, size - got); });
            if (n < 0) return {Step::read, errno};
            if (n == 0) return {Step::redo, 0};
            got += static_cast<std::uint64_t>(n);
        }
        for (std::uint64_t put = 0; put < size;) {
            ++syscalls;
            const ssize_t n = restarting([&] { return ::write(d, buf + put, size - put); });
            if (n <= 0) return {Step::write, n < 0 ? errno : EIO};
            put += static_cast<std::uint64_t>(n);
        }
        struct statx x {};
        ++syscalls;
        if (::statx(s, "", AT_EMPTY_PATH, STATX_SIZE, &x) != 0) return {Step::read, errno};
        if (x.stx_size != size) return {Step::changed, 0, x.stx_size};
        return {Step::done, 0};
    }

    Ctx& c_;
    Tree& t_;
    const HeldDirs& dirs_;
    const Mode mode_;
    std::span<const std::size_t> files_;
    std::vector<Outcome> out_;
    // finished_[k]: out_[k] (and the file's stat) written, published to the caller.
    std::unique_ptr<std::atomic<bool>[]> finished_;
    std::vector<char> shown_;     // caller only: counted by show_progress()
    std::size_t shown_upto_ = 0;  // caller only
    std::atomic<std::size_t> next_{0};
    std::atomic<bool> stop_{false};
};

unsigned threads_for(unsigned wanted, std::size_t files) {
    return std::max(
        1u, std::min<unsigned>(wanted, static_cast<unsigned>(std::min<std::size_t>(files, 64))));
}

// Runs the pool over `files` in batches whose directories fit the
// descriptor budget: each batch's directories are opened and pinned first,
// so the threads only read their descriptors.
void run_pool(Ctx& c, Tree& t, HeldDirs& dirs, Mode mode, FsPair* pair,
              std::vector<std::size_t>& files, unsigned wanted) {
    std::vector<std::size_t> rest;
    for (std::size_t first = 0; first < files.size() && !c.stop_requested();) {
        std::vector<std::size_t> batch, pinned;
        std::size_t k = first, failed_dir = t.dst.size();
        for (; k < files.size(); ++k) {
            const std::size_t dir = t.parent[files[k]];
            if (dir == failed_dir) continue;  // reported once
            if (pinned.empty() || pinned.back() != dir) {
                if (!pinned.empty() && dirs.pinned() >= dirs.budget()) break;
                const int fd = dirs.get(dir);
                if (fd < 0) {
                    c.report(
                        {CopyStatus::failure, dir_failure_message(std::string(t.dst[dir]), fd)});
                    failed_dir = dir;
                    continue;
                }
                dirs.pin(dir);
                pinned.push_back(dir);
            }
            batch.push_back(files[k]);
        }
        first = k;
        FilePool pool(c, t, dirs, mode, batch);
        pool.run(threads_for(wanted, batch.size()));
        pool.settle(pair, rest);
        for (std::size_t dir : pinned) dirs.unpin(dir);
        if (pair && pair->reflink == Known::no &&
            c.o.reflink != Reflink::always) {  // the rest go to the chains
            rest.insert(rest.end(), files.begin() + static_cast<std::ptrdiff_t>(first),
                        files.end());
            break;
        }
    }
    files.swap(rest);
}

}  // namespace

void clone_in_pool(Ctx& c, Tree& t, HeldDirs& dirs, FsPair& pair, std::vector<std::size_t>& files) {
    run_pool(c, t, dirs, Mode::clone, &pair, files, c.o.clone_threads);
}

void copy_in_pool(Ctx& c, Tree& t, HeldDirs& dirs, std::vector<std::size_t>& files) {
    run_pool(c, t, dirs, Mode::bytes, nullptr, files, c.o.copy_threads);
}

bool tree_is_cached(Ctx& c, const Tree& t) {
    // Up to 16 regular files spread over the tree, their first kSmallMax
    // bytes asked after with cachestat(2) (mincore(2) before Linux 6.5),
    // which start no I/O.  (A read with RWF_NOWAIT would start readahead,
    // and on a loaded machine that can finish before the read looks: cold
    // files taken for cached.)  A file system that cannot say counts as not
    // cached: the chains are right either way, the pool only when nothing waits.
    const auto regular =
        static_cast<std::size_t>(std::count(t.type.begin(), t.type.end(), EntryType::regular));
    const std::size_t samples = std::min<std::size_t>(16, regular);
    unsigned asked = 0;
    std::size_t k = 0, r = 0;  // sample k is regular file number k * regular / samples
    for (std::size_t i = 0; i < t.type.size() && k < samples; ++i) {
        if (t.type[i] != EntryType::regular || r++ != k * regular / samples) continue;
        ++k;
        ++c.syscalls();
        const int fd =
            ::open(t.src.c_str(i), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0) continue;  // gone or unreadable: the copy reports it
        struct stat st {};
        sys::PageCacheStat pc;
        c.syscalls() += 3;
        // Replaced since the walk, empty, or with holes (never cached, and
        // not for the pool): says nothing.
        const bool says = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
                          st.st_blocks * 512 >= st.st_size;
        const int rc =
            says ? sys::page_cache_stat(fd, 0, std::min<std::uint64_t>(st.st_size, kSmallMax), pc)
                 : 0;
        ::close(fd);
        if (!says) continue;
        if (rc != 0 || pc.cached < pc.pages) return false;
        ++asked;
    }
    return asked > 0;
}

}  // namespace uringkit::fs::detail
