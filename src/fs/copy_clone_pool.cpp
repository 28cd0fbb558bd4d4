// A tree's small files on a file system that shares extents, cloned on a few
// threads.  FICLONE is a blocking system call with no io_uring opcode, and
// most of its time is spent waiting (XFS commits a transaction for each
// clone), so threads overlap it even on few CPUs.  bench/clone_pool.c, which
// does exactly the steps below for 10,000 files of 4 KiB on XFS (reflink=1),
// on a 2-CPU machine at load 11: 1 thread 2.2-3.2 s, 2 threads 1.5-2.0 s,
// 4 threads 1.2-1.4 s; hence 4 by default (CopyOptions::clone_threads).
//
// Each worker takes the next file: open the source (and, for a new tree, take
// its statx there: bench/clone_pool.c does the same), create the destination
// (O_CREAT | O_EXCL | O_NOFOLLOW: its directory is one this copy created),
// FICLONE, fsync with --sync, close both; on any failure the destination is
// removed.  Workers touch nothing shared but an atomic index, their own
// system call count and their own files' outcome slots: the submitting
// thread turns outcomes into counts and messages after joining them, in the
// tree's order.  A clone the file system declines (EOPNOTSUPP, ...) stops
// the pool (not with --reflink=always), and the files not cloned go back to
// the caller for the chains.
#include "copy_chain.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <system_error>
#include <thread>

namespace uringkit::fs::detail {
namespace {

// not_regular: a file whose stat was deferred turned out to be something
// else (replaced since the walk): handed back to be stat'd and copied as what it is.
enum class Step : std::uint8_t { not_taken, done, not_regular, open_src, create, clone, fsync, close };

struct Outcome {
    Step step = Step::not_taken;
    int err = 0;
};

bool declined(int err) noexcept { return err == EOPNOTSUPP || err == ENOTTY || err == EXDEV || err == ENOSYS; }

class ClonePool {
public:
    ClonePool(Ctx& c, Tree& t, std::span<const std::size_t> files)
        : c_(c), t_(t), files_(files), out_(files.size()) {}

    void run(unsigned threads) {
        std::vector<std::thread> pool;
        std::vector<std::uint64_t> syscalls(threads, 0);
        for (unsigned w = 1; w < threads; ++w) {
            try {
                pool.emplace_back([this, &syscalls, w] { work(syscalls[w]); });
            } catch (const std::system_error&) {
                break;  // no more threads: fewer workers, same work
            }
        }
        work(syscalls[0]);  // the submitting thread is a worker too
        for (std::thread& th : pool) th.join();
        for (std::uint64_t n : syscalls) c_.syscalls() += n;
    }

    // After run(): counts, failures and the files that go to the chains, in order.
    void settle(FsPair& pair, std::vector<std::size_t>& rest) {
        for (std::size_t k = 0; k < files_.size(); ++k) {
            const std::size_t e = files_[k];
            const Outcome& o = out_[k];
            const std::string dst(t_.dst[e]);
            switch (o.step) {
            case Step::not_taken:
                if (!c_.stop_requested()) rest.push_back(e);
                break;
            case Step::not_regular:
                rest.push_back(e);
                break;
            case Step::done:
                ++c_.result.files;
                ++c_.result.reflinked_files;
                c_.result.bytes += t_.st[e].stx_size;
                if (c_.o.verify) {
                    if (auto f = verify_copy(c_, t_.src.c_str(e), dst, nullptr)) {
                        c_.report(*f);
                        break;
                    }
                }
                file_done(c_, t_.st[e].stx_size);
                break;
            case Step::open_src:
                c_.report({CopyStatus::bad_input, quoted_message("cannot open", t_.src[e], o.err)});
                break;
            case Step::create:
                c_.report({status_of_write(o.err), quoted_message("cannot create regular file", dst, o.err)});
                break;
            case Step::clone:
                if (declined(o.err)) pair.reflink = Known::no;
                if (c_.o.reflink == Reflink::always) {
                    c_.report({CopyStatus::failure, "cannot clone '" + std::string(t_.src[e]) + "' to '" + dst +
                                                        "' (--reflink=always, " + fs_label(pair.dst_type) +
                                                        "): " + std::strerror(o.err) + " (errno " +
                                                        std::to_string(o.err) + ")"});
                } else if (o.err == ENOSPC || o.err == EDQUOT || o.err == EIO) {
                    c_.report({status_of_write(o.err), errno_message(dst, "FICLONE", o.err)});
                } else {
                    rest.push_back(e);  // copied another way
                }
                break;
            case Step::fsync:
            case Step::close:
                c_.report({status_of_write(o.err), errno_message(dst, o.step == Step::fsync ? "fsync" : "close", o.err)});
                break;
            }
        }
    }

private:
    void work(std::uint64_t& syscalls) {
        for (;;) {
            if (stop_.load(std::memory_order_relaxed) || c_.stop_requested()) return;
            const std::size_t k = next_.fetch_add(1, std::memory_order_relaxed);
            if (k >= files_.size()) return;
            out_[k] = clone_one(files_[k], syscalls);
            if (out_[k].step == Step::clone && declined(out_[k].err) && c_.o.reflink != Reflink::always)
                stop_.store(true, std::memory_order_relaxed);
        }
    }

    Outcome clone_one(std::size_t e, std::uint64_t& syscalls) {
        const char* dst = t_.dst.c_str(e);
        const bool deferred = t_.st_res[e] == kStatDeferred;
        // O_NOFOLLOW and O_NONBLOCK: what the walk saw as a file may since
        // have become a link or a FIFO, which this open must neither follow
        // nor wait on.
        ++syscalls;
        const int s = ::open(t_.src.c_str(e), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
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
            if (!S_ISREG(x.stx_mode)) {
                ++syscalls;
                ::close(s);
                return {Step::not_regular, 0};
            }
            t_.st[e] = x;  // this file's own slots: no other thread touches them
            t_.st_res[e] = 0;
        }
        // The source's permission bits less the umask, no set-ID bits: cp's rule.
        ++syscalls;
        const int d = ::open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, t_.st[e].stx_mode & 0777);
        Outcome out{Step::done, 0};
        if (d < 0) {
            out = {Step::create, errno};
        } else {
            syscalls += 2;
            if (::ioctl(d, FICLONE, s) != 0) out = {Step::clone, errno};
            else if (c_.o.fsync && (++syscalls, ::fsync(d) != 0)) out = {Step::fsync, errno};
            if (::close(d) != 0 && out.step == Step::done) out = {Step::close, errno};
            if (out.step != Step::done) {
                ++syscalls;
                ::unlink(dst);
            }
        }
        ++syscalls;
        ::close(s);
        return out;
    }

    Ctx& c_;
    Tree& t_;
    std::span<const std::size_t> files_;
    std::vector<Outcome> out_;
    std::atomic<std::size_t> next_{0};
    std::atomic<bool> stop_{false};
};

}  // namespace

void clone_in_pool(Ctx& c, Tree& t, FsPair& pair, std::vector<std::size_t>& files) {
    std::vector<std::size_t> rest;
    ClonePool pool(c, t, files);
    pool.run(std::max(1u, std::min<unsigned>(c.o.clone_threads, static_cast<unsigned>(files.size()))));
    pool.settle(pair, rest);
    files.swap(rest);
}

}  // namespace uringkit::fs::detail
