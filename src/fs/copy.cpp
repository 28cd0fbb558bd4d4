#include "uringkit/fs/copy.hpp"

#include "uringkit/fs/path_list.hpp"
#include "uringkit/fs/walk.hpp"
#include "shared.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/error.hpp"
#include "uringkit/sys/page_cache.hpp"
#include "uringkit/util/unique_fd.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace uringkit::fs {
namespace {

using detail::aligned_buffer;
using detail::Buffer;
using detail::make_ring;

using Clock = std::chrono::steady_clock;

bool retryable(int res) noexcept { return res == -EINTR || res == -EAGAIN; }

CopyStatus status_of_write(int err) noexcept {
    err = err < 0 ? -err : err;
    return err == ENOSPC || err == EFBIG || err == EDQUOT ? CopyStatus::no_space : CopyStatus::failure;
}

// "PATH: write at offset 4096: No space left on device (errno 28)"
std::string io_message(std::string_view path, const char* what, std::uint64_t offset, int err) {
    err = err < 0 ? -err : err;
    char tail[160];
    std::snprintf(tail, sizeof tail, ": %s at offset %llu: %s (errno %d)", what,
                  static_cast<unsigned long long>(offset), std::strerror(err), err);
    return std::string(path) + tail;
}
std::string errno_message(std::string_view path, const char* what, int err) {
    err = err < 0 ? -err : err;
    char tail[160];
    std::snprintf(tail, sizeof tail, ": %s: %s (errno %d)", what, std::strerror(err), err);
    return std::string(path) + tail;
}

std::string shrank_message(std::string_view path, std::uint64_t offset) {
    return std::string(path) + ": end of file at offset " + std::to_string(offset) +
           ", before the size it had when the copy started (the file shrank while being copied)";
}

struct Failure {
    CopyStatus status;
    std::string message;
};

std::string dirname_of(const std::string& path) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}
std::string basename_of(std::string path) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}
std::string join(const std::string& dir, std::string_view name) {
    std::string p = dir;
    if (!p.empty() && p.back() != '/') p += '/';
    p += name;
    return p;
}

// ".NAME.uringkit-XXXXXX" next to `final_path`; the suffix differs per call.
std::string temp_name_for(const std::string& final_path) {
    static std::uint64_t state = static_cast<std::uint64_t>(::getpid()) * 0x9E3779B97F4A7C15ull ^
                                 static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    std::string suffix(6, 'x');
    std::uint64_t v = state;
    for (char& c : suffix) {
        c = alphabet[v % 62];
        v /= 62;
    }
    return join(dirname_of(final_path), "." + basename_of(final_path) + ".uringkit-" + suffix);
}

std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

constexpr std::size_t kDirectAlign = 4096;
constexpr std::size_t kSmallMax = 64 * 1024;  // files up to this size take the one-chain path
// Below this a cold source is read through the cache anyway: the probe, the
// second open and its close are three more system calls, worth it only for a
// copy long enough to gain from deep direct reads.
constexpr std::uint64_t kDirectReadMin = 8 * 1024 * 1024;

struct Extent {
    std::uint64_t begin, end;
};

// The data regions of `fd` (SEEK_DATA/SEEK_HOLE); one region when the file
// has no holes (st_blocks covers st_size) or the file system cannot say.
std::vector<Extent> data_extents(int fd, const struct stat& st, std::uint64_t& syscalls) {
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size == 0) return {};
    if (static_cast<std::uint64_t>(st.st_blocks) * 512 >= size) return {{0, size}};
    std::vector<Extent> out;
    off_t pos = 0;
    while (static_cast<std::uint64_t>(pos) < size) {
        ++syscalls;
        const off_t data = ::lseek(fd, pos, SEEK_DATA);
        if (data < 0) {
            if (errno == ENXIO) break;  // only a hole up to the end
            return {{0, size}};         // SEEK_DATA unsupported: copy everything
        }
        ++syscalls;
        off_t hole = ::lseek(fd, data, SEEK_HOLE);
        if (hole < 0) hole = static_cast<off_t>(size);
        out.push_back({static_cast<std::uint64_t>(data), std::min<std::uint64_t>(hole, size)});
        pos = hole;
    }
    return out;
}

// ---- the job's shared state ------------------------------------------------

struct Ctx {
    const CopyOptions& o;
    const CopySink& sink;
    CopyResult& result;
    std::optional<Ring> ring;
    Buffer big;    // the larger of qd x block_size and its O_DIRECT twin (registered buffer 0)
    Buffer small;  // inflight blocks of kSmallMax (registered buffer 1)
    std::size_t big_size = 0;
    bool fixed_big = false, fixed_small = false;  // registered (RLIMIT_MEMLOCK may allow only the small one)
    bool said_no_direct_read = false;
    mode_t umask = 022;
    unsigned small_slots = 0;

    std::uint64_t& syscalls() { return result.syscalls; }
    void note(const std::string& m) const {
        if (sink.note) sink.note(m);
    }
    char* small_block(unsigned k) const { return small.get() + std::size_t{k} * kSmallMax; }
};

// ---- one file's bytes: ring and pread/pwrite ---------------------------------

struct RangeJob {
    int src, dst;
    std::string_view src_name, dst_name;
    std::vector<Extent> extents;
    bool direct;          // both files O_DIRECT (--direct)
    int src_direct = -1;  // the source opened again with O_DIRECT, for aligned reads (cold source)
    unsigned qd = 0;      // pairs in flight
    std::size_t block_size = 0;

    char* block(const Ctx& c, unsigned k) const { return c.big.get() + std::size_t{k} * block_size; }
};

// A read -> write pair per buffer: the read is linked to the write, so the
// write starts only once the read filled the buffer.  A short read cuts the
// link (the write completes -ECANCELED): the part that was read is written on
// its own and the rest read again.  A short write is continued.
class RangeCopier {
public:
    RangeCopier(Ctx& ctx, const RangeJob& job) : c_(ctx), job_(job), segs_(job.qd) {}

    std::optional<Failure> run() {
        Ring& ring = *c_.ring;
        for (unsigned k = 0; k < segs_.size(); ++k) next_chunk(k);
        while (active_ > 0) {
            const int r = ring.submit_and_wait(1);
            if (r < 0 && r != -EBUSY && r != -EAGAIN && r != -EINTR)
                return Failure{CopyStatus::failure, errno_message(job_.dst_name, "io_uring_enter", r)};
            ring.for_each_completion([this](const Completion& cq) { complete(cq); });
        }
        return std::move(failure_);
    }
    std::uint64_t bytes() const noexcept { return bytes_; }

private:
    struct Seg {
        std::uint64_t off = 0;
        std::uint32_t len = 0, rd = 0, wr = 0;
        int pending = 0;
        bool busy = false;
    };

    std::uint32_t write_target(const Seg& s) const noexcept {
        // O_DIRECT writes whole aligned blocks; the tail past the source's
        // size is cut off by the final ftruncate.
        return job_.direct ? static_cast<std::uint32_t>(round_up(s.rd, kDirectAlign)) : s.rd;
    }
    std::uint32_t read_target(const Seg& s) const noexcept {
        return job_.direct ? static_cast<std::uint32_t>(round_up(s.len, kDirectAlign)) : s.len;
    }

    void next_chunk(unsigned k) {
        Seg& s = segs_[k];
        s.busy = false;
        if (failure_ || ext_ >= job_.extents.size()) return;
        const Extent& e = job_.extents[ext_];
        if (pos_ < e.begin) pos_ = e.begin;
        const std::uint64_t len = std::min<std::uint64_t>(job_.block_size, e.end - pos_);
        s = Seg{pos_, static_cast<std::uint32_t>(len), 0, 0, 0, true};
        pos_ += len;
        if (pos_ >= e.end) ++ext_;
        ++active_;
        issue(k);
    }

    void issue(unsigned k) {
        Seg& s = segs_[k];
        Ring& ring = *c_.ring;
        while (ring.sq_space_left() < 2) ring.submit();
        char* buf = job_.block(c_, k);
        const std::uint32_t wt = write_target(s);
        if (s.wr < wt) {  // written less than was read: finish that first
            prep_write(ring, buf + s.wr, wt - s.wr, s.off + s.wr).user_data(ud(k, 1));
            s.pending = 1;
            return;
        }
        const std::uint32_t n = read_target(s) - s.rd;
        prep_read(ring, read_fd(s), buf + s.rd, n, s.off + s.rd).user_data(ud(k, 0)).link();
        prep_write(ring, buf + s.rd, n, s.off + s.rd).user_data(ud(k, 1));
        s.pending = 2;
    }

    // A cold source is read with O_DIRECT wherever the read starts and ends on
    // the alignment; the unaligned tail at the end of the file, and whatever
    // follows a short read that stopped off the alignment, go through the
    // cache.  The read keeps its exact length, so the linked write does too.
    int read_fd(const Seg& s) const noexcept {
        if (job_.src_direct < 0) return job_.src;
        // The buffer is aligned, so aligned offsets within it are too.
        const bool aligned = (s.off | s.rd | s.len) % kDirectAlign == 0;
        return aligned ? job_.src_direct : job_.src;
    }

    Sqe prep_read(Ring& ring, int fd, char* p, std::uint32_t n, std::uint64_t off) {
        if (c_.fixed_big) return ring.prepare(op::ReadFixed(Fd{fd}, p, n, off, 0));
        return ring.prepare(op::Read(Fd{fd}, p, n, off));
    }
    Sqe prep_write(Ring& ring, const char* p, std::uint32_t n, std::uint64_t off) {
        if (c_.fixed_big) return ring.prepare(op::WriteFixed(Fd{job_.dst}, p, n, off, 0));
        return ring.prepare(op::Write(Fd{job_.dst}, p, n, off));
    }
    static std::uint64_t ud(unsigned k, unsigned is_write) { return std::uint64_t{k} << 1 | is_write; }

    void fail(CopyStatus st, std::string m) {
        if (!failure_) failure_ = Failure{st, std::move(m)};
    }

    void complete(const Completion& cq) {
        const auto k = static_cast<unsigned>(cq.user_data >> 1);
        const bool is_write = cq.user_data & 1;
        Seg& s = segs_[k];
        const int res = cq.res;
        if (!is_write) {
            if (res > 0) {
                s.rd += static_cast<std::uint32_t>(res);
                if (s.rd > s.len) s.rd = s.len;  // O_DIRECT tail: bytes past the size are not data
            } else if (res == 0 && s.rd < s.len) {
                fail(CopyStatus::failure, shrank_message(job_.src_name, s.off + s.rd));
            } else if (res < 0 && !retryable(res) && res != -ECANCELED) {
                fail(CopyStatus::failure, io_message(job_.src_name, "read", s.off + s.rd, res));
            }
        } else {
            if (res > 0) {
                s.wr += static_cast<std::uint32_t>(res);
            } else if (res < 0 && !retryable(res) && res != -ECANCELED) {
                fail(status_of_write(res), io_message(job_.dst_name, "write", s.off + s.wr, res));
            }
        }
        if (--s.pending > 0) return;
        if (failure_) {
            s.busy = false;
            --active_;
            return;
        }
        if (s.rd >= s.len && s.wr >= write_target(s)) {
            bytes_ += s.len;
            --active_;
            if (c_.o.on_progress) c_.o.on_progress(bytes_);
            next_chunk(k);
        } else {
            issue(k);
        }
    }

    Ctx& c_;
    const RangeJob& job_;
    std::vector<Seg> segs_;
    std::size_t ext_ = 0;
    std::uint64_t pos_ = 0;
    std::uint64_t bytes_ = 0;
    unsigned active_ = 0;
    std::optional<Failure> failure_;
};

// The same job with pread/pwrite, when io_uring is not available.
std::optional<Failure> copy_range_sync(Ctx& c, const RangeJob& job, std::uint64_t& bytes) {
    char* buf = job.block(c, 0);
    for (const Extent& e : job.extents) {
        for (std::uint64_t off = e.begin; off < e.end;) {
            const std::size_t len = std::min<std::uint64_t>(job.block_size, e.end - off);
            const std::size_t want = job.direct ? round_up(len, kDirectAlign) : len;
            std::size_t rd = 0;
            while (rd < len) {
                ++c.syscalls();
                const ssize_t n = ::pread(job.src, buf + rd, want - rd, static_cast<off_t>(off + rd));
                if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
                if (n < 0) return Failure{CopyStatus::failure, io_message(job.src_name, "read", off + rd, errno)};
                if (n == 0) return Failure{CopyStatus::failure, shrank_message(job.src_name, off + rd)};
                rd += static_cast<std::size_t>(n);
            }
            rd = std::min(rd, len);
            const std::size_t wt = job.direct ? round_up(rd, kDirectAlign) : rd;
            for (std::size_t wr = 0; wr < wt;) {
                ++c.syscalls();
                const ssize_t n = ::pwrite(job.dst, buf + wr, wt - wr, static_cast<off_t>(off + wr));
                if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
                if (n < 0) return Failure{status_of_write(errno), io_message(job.dst_name, "write", off + wr, errno)};
                wr += static_cast<std::size_t>(n);
            }
            off += len;
            bytes += len;
            if (c.o.on_progress) c.o.on_progress(bytes);
        }
    }
    return std::nullopt;
}

// ---- one regular file, through a temporary name ------------------------------

// Restores what `cp` keeps: the mode always (creation applied the umask), the
// times and owner with -p.  Owner changes that are not allowed are ignored,
// as coreutils does without root.
void keep_attributes(Ctx& c, int fd, const char* path, mode_t mode, const struct timespec* times, uid_t uid,
                     gid_t gid) {
    const mode_t perm = mode & 07777;
    if (c.o.preserve) {
        ++c.syscalls();
        if (fd >= 0 ? ::fchown(fd, uid, gid) : ::fchownat(AT_FDCWD, path, uid, gid, AT_SYMLINK_NOFOLLOW)) {
            // not permitted: keep ours
        }
    }
    if ((perm & c.umask) || (c.o.preserve && (perm & 07000))) {
        ++c.syscalls();
        if (fd >= 0) (void)::fchmod(fd, perm);
        else (void)::fchmodat(AT_FDCWD, path, perm, 0);
    }
    if (c.o.preserve && times) {
        ++c.syscalls();
        if (fd >= 0) (void)::futimens(fd, times);
        else (void)::utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW);
    }
}

// The source opened a second time with O_DIRECT when it is large and mostly
// not in the page cache (or when asked); otherwise none.  Why, measured on a
// cold 1 GiB file (bench/results/files_cp.md): the bytes are copied once
// instead of twice (user + system time 0.52 s against 1.25 s through the
// cache), and the source does not push other files out of the cache.  fio
// read this disk at ~2 GB/s with 16 x 1 MiB O_DIRECT reads against ~1 GB/s
// buffered, but the copy's wall time moved with the disk more than with the
// path (0.96x as a geometric mean over ten series).
util::UniqueFd open_cold_source(Ctx& c, const char* src, int sfd, const struct stat& st) {
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (c.o.source_reads == SourceReads::page_cache || size == 0) return {};
    if (c.o.source_reads == SourceReads::automatic) {
        if (size < kDirectReadMin) return {};
        sys::PageCacheStat pc;
        ++c.syscalls();
        if (sys::page_cache_stat(sfd, 0, size, pc) != 0 || pc.cached * 2 >= pc.pages) return {};
    }
    ++c.syscalls();
    util::UniqueFd fd(::open(src, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_DIRECT));
    struct stat again {};
    if (fd) {
        ++c.syscalls();
        // The same file, not one renamed into its place since the first open.
        if (::fstat(fd.get(), &again) != 0 || again.st_ino != st.st_ino || again.st_dev != st.st_dev) return {};
    } else if (c.o.source_reads == SourceReads::direct && !c.said_no_direct_read) {
        c.said_no_direct_read = true;
        c.note(std::string("--source-reads direct: ") + src + " does not allow O_DIRECT (" + std::strerror(errno) +
               "); reading it and any like it through the page cache");
    }
    if (fd) {
        ++c.result.direct_read_files;
        ++c.syscalls();  // its close
    }
    return fd;
}

// Copies regular file `src` to `dst`.  With `in_place` (a fresh tree being
// built under a temporary directory name) it writes `dst` directly; otherwise
// it writes a temporary name beside `dst` and renames it over `dst` at the
// end.  `expected_size` (from the walk) turns a size change into an error.
std::optional<Failure> copy_file(Ctx& c, const char* src, const std::string& dst, bool in_place,
                                 std::optional<std::uint64_t> expected_size) {
    ++c.syscalls();
    const int sfd = ::open(src, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (sfd < 0) return Failure{CopyStatus::bad_input, errno_message(src, "cannot open", errno)};
    struct stat st {};
    ++c.syscalls();
    if (::fstat(sfd, &st) != 0) {
        const int e = errno;
        ::close(sfd);
        return Failure{CopyStatus::bad_input, errno_message(src, "cannot stat", e)};
    }
    if (expected_size && *expected_size != static_cast<std::uint64_t>(st.st_size)) {
        ::close(sfd);
        return Failure{CopyStatus::failure, std::string(src) + ": changed size while being copied"};
    }
    const std::string write_path = in_place ? dst : temp_name_for(dst);
    ++c.syscalls();
    const int dfd = ::open(write_path.c_str(),
                           O_WRONLY | O_CREAT | O_CLOEXEC | (in_place ? O_TRUNC : O_EXCL), st.st_mode & 07777);
    if (dfd < 0) {
        const int e = errno;
        ::close(sfd);
        return Failure{e == ENOENT || e == ENOTDIR ? CopyStatus::bad_input : status_of_write(e),
                       errno_message(write_path, "cannot create", e)};
    }
    std::optional<Failure> failure;
    auto fail = [&](CopyStatus s, std::string m) {
        if (!failure) failure = Failure{s, std::move(m)};
    };

    bool direct = c.o.direct;
    if (direct) {
        c.syscalls() += 2;
        if (::fcntl(sfd, F_SETFL, O_DIRECT) != 0 || ::fcntl(dfd, F_SETFL, O_DIRECT) != 0) {
            ::fcntl(sfd, F_SETFL, 0);
            ::fcntl(dfd, F_SETFL, 0);
            direct = false;
            c.note(std::string("--direct: ") + src + " or " + dst +
                   " does not allow O_DIRECT; copying through the page cache");
        }
    }
    util::UniqueFd src_direct;
    if (!direct && c.ring) src_direct = open_cold_source(c, src, sfd, st);
    if (!direct && !src_direct && static_cast<std::uint64_t>(st.st_size) > c.o.block_size) {
        // Several reads in flight at neighbouring offsets look random to the
        // readahead heuristics; say it is sequential so the window grows
        // (cold 1 GiB copies were ~1.5x slower without it).
        ++c.syscalls();
        ::posix_fadvise(sfd, 0, 0, POSIX_FADV_SEQUENTIAL);
    }
    RangeJob job{sfd, dfd, src, dst, data_extents(sfd, st, c.syscalls()), direct, src_direct.get(),
                 src_direct ? c.o.direct_read_qd : c.o.qd, src_direct ? c.o.direct_read_block_size : c.o.block_size};
    std::uint64_t bytes = 0;
    if (c.ring) {
        RangeCopier rc(c, job);
        if (auto f = rc.run()) fail(f->status, f->message);
        bytes = rc.bytes();
    } else if (auto f = copy_range_sync(c, job, bytes)) {
        fail(f->status, f->message);
    }
    const auto size = static_cast<std::uint64_t>(st.st_size);
    const std::uint64_t data_end = job.extents.empty() ? 0 : job.extents.back().end;
    if (!failure && (direct || data_end < size)) {
        ++c.syscalls();
        if (::ftruncate(dfd, static_cast<off_t>(size)) != 0)
            fail(status_of_write(errno), io_message(write_path, "truncate", size, errno));
    }
    if (!failure) {  // a source that changed size under us is an error, not a short copy
        struct stat after {};
        ++c.syscalls();
        if (::fstat(sfd, &after) == 0 && after.st_size != st.st_size)
            fail(CopyStatus::failure, std::string(src) + ": changed size while being copied (" +
                                          std::to_string(st.st_size) + " -> " + std::to_string(after.st_size) +
                                          " bytes)");
    }
    if (!failure) {
        const struct timespec times[2] = {st.st_atim, st.st_mtim};
        keep_attributes(c, dfd, nullptr, st.st_mode, times, st.st_uid, st.st_gid);
        if (c.o.fsync) {
            ++c.syscalls();
            if (::fsync(dfd) != 0) fail(status_of_write(errno), errno_message(write_path, "fsync", errno));
        }
    }
    c.syscalls() += 2;
    ::close(sfd);
    if (::close(dfd) != 0 && !failure) fail(status_of_write(errno), errno_message(write_path, "close", errno));
    if (!failure && !in_place) {
        ++c.syscalls();
        if (::rename(write_path.c_str(), dst.c_str()) != 0)
            fail(CopyStatus::failure, errno_message(dst, "cannot rename into place", errno));
    }
    if (failure) {
        ++c.syscalls();
        ::unlink(write_path.c_str());
        return failure;
    }
    ++c.result.files;
    c.result.bytes += bytes;
    return std::nullopt;
}

// ---- trees -------------------------------------------------------------------

struct TreeEntry {
    EntryType type;
};

struct Tree {
    PathList src, dst;  // dst: where the entry is written (inside the staging directory for a new tree)
    PathList final_dst; // where it ends up (== dst for a new tree)
    std::vector<TreeEntry> entries;
    std::vector<struct statx> st;
    std::vector<int> st_res;
};

void walk_tree(Ctx& c, const std::string& src, const std::string& dst, const std::string& final_dst, Tree& t,
               std::optional<Failure>& failure) {
    std::vector<DirEntry> list;
    const int r = read_directory(src.c_str(), list, c.syscalls());
    if (r < 0) {
        if (!failure) failure = Failure{CopyStatus::bad_input, errno_message(src, "cannot read directory", r)};
        return;
    }
    for (const DirEntry& e : list) {
        t.src.push(src, e.name);
        t.dst.push(dst, e.name);
        t.final_dst.push(final_dst, e.name);
        EntryType type = e.type;
        if (type == EntryType::unknown) {
            struct stat sb {};
            ++c.syscalls();
            type = ::lstat(t.src.c_str(t.src.size() - 1), &sb) == 0 ? type_of(sb.st_mode) : EntryType::other;
        }
        t.entries.push_back({type});
        if (type == EntryType::directory) walk_tree(c, join(src, e.name), join(dst, e.name), join(final_dst, e.name), t, failure);
    }
}

// rm -r of a staging directory we created, after a failure.
void remove_tree(const std::string& path, std::uint64_t& syscalls) {
    std::vector<DirEntry> list;
    if (read_directory(path.c_str(), list, syscalls) == 0)
        for (const DirEntry& e : list) {
            const std::string p = join(path, e.name);
            if (e.type == EntryType::directory) remove_tree(p, syscalls);
            else {
                ++syscalls;
                if (::unlink(p.c_str()) != 0 && errno == EISDIR) remove_tree(p, syscalls);
            }
        }
    ++syscalls;
    ::rmdir(path.c_str());
}

// Small files, one linked chain each on two fixed-file slots:
//   open src -> open dst -> read -> write [-> fsync] -> close src -> close dst [-> rename]
// Everything is IOSQE_IO_LINK, so a failure or a short read or write cancels
// the rest of the chain (-ECANCELED); the file is then redone on the large-file
// path, which continues short transfers and checks the source's size.
class ChainCopier {
public:
    ChainCopier(Ctx& c, Tree& t, std::span<const std::size_t> files, bool in_place)
        : c_(c), t_(t), files_(files), in_place_(in_place), slots_(c.small_slots) {
        for (unsigned s = 0; s < slots_.size(); ++s) free_.push_back(static_cast<unsigned>(slots_.size()) - 1 - s);
    }

    std::optional<Failure> run() {
        Ring& ring = *c_.ring;
        std::size_t next = 0;
        while ((next < files_.size() && !failure_) || active_ > 0) {
            while (!failure_ && next < files_.size() && !free_.empty() && ring.sq_space_left() >= kSteps) {
                start(free_.back(), files_[next++]);
                free_.pop_back();
            }
            const unsigned want = std::max(1u, outstanding_ / 2);
            const int r = ring.submit_and_wait(want);
            if (r < 0 && r != -EBUSY && r != -EAGAIN && r != -EINTR)
                throw std::system_error(errno_code(r), "io_uring_enter");
            ring.for_each_completion([this](const Completion& cq) { complete(cq); });
        }
        return std::move(failure_);
    }
    const std::vector<std::size_t>& redo() const noexcept { return redo_; }
    const std::vector<std::size_t>& done() const noexcept { return done_; }

private:
    enum Step : unsigned { kOpenSrc, kOpenDst, kRead, kWrite, kFsync, kCloseSrc, kCloseDst, kRename, kSteps };
    struct Slot {
        std::size_t entry = 0;
        int res[kSteps] = {};
        unsigned pending = 0;
        std::string tmp;
    };

    std::uint64_t ud(unsigned slot, Step s) const noexcept { return std::uint64_t{slot} << 4 | s; }

    void start(unsigned slot, std::size_t e) {
        Ring& ring = *c_.ring;
        Slot& s = slots_[slot];
        s.entry = e;
        std::fill(std::begin(s.res), std::end(s.res), 0);
        const struct statx& st = t_.st[e];
        const auto size = static_cast<std::uint32_t>(st.stx_size);
        const Fixed a{2 * slot}, b{2 * slot + 1};
        const char* target = t_.dst.c_str(e);
        if (!in_place_) {
            s.tmp = temp_name_for(t_.final_dst.c_str(e));
            target = s.tmp.c_str();
        }
        unsigned n = 0;
        ring.prepare(op::OpenAt(AT_FDCWD, t_.src.c_str(e), O_RDONLY | O_NOCTTY).into_slot(a.index))
            .user_data(ud(slot, kOpenSrc)).link();
        ring.prepare(op::OpenAt(AT_FDCWD, target, O_WRONLY | O_CREAT | O_EXCL, st.stx_mode & 07777).into_slot(b.index))
            .user_data(ud(slot, kOpenDst)).link();
        n += 2;
        if (size > 0) {
            char* buf = c_.small_block(slot);
            if (c_.fixed_small) {
                ring.prepare(op::ReadFixed(a, buf, size, 0, 1)).user_data(ud(slot, kRead)).link();
                ring.prepare(op::WriteFixed(b, buf, size, 0, 1)).user_data(ud(slot, kWrite)).link();
            } else {
                ring.prepare(op::Read(a, buf, size, 0)).user_data(ud(slot, kRead)).link();
                ring.prepare(op::Write(b, buf, size, 0)).user_data(ud(slot, kWrite)).link();
            }
            n += 2;
        }
        if (c_.o.fsync) {
            ring.prepare(op::Fsync(b)).user_data(ud(slot, kFsync)).link();
            ++n;
        }
        ring.prepare(op::Close(a)).user_data(ud(slot, kCloseSrc)).link();
        Sqe last = ring.prepare(op::Close(b)).user_data(ud(slot, kCloseDst));
        n += 2;
        if (!in_place_) {
            last.link();
            ring.prepare(op::RenameAt(AT_FDCWD, s.tmp.c_str(), AT_FDCWD, t_.final_dst.c_str(e)))
                .user_data(ud(slot, kRename));
            ++n;
        }
        s.pending = n;
        outstanding_ += n;
        ++active_;
    }

    void fail(CopyStatus st, std::string m) {
        if (!failure_) failure_ = Failure{st, std::move(m)};
    }

    void complete(const Completion& cq) {
        --outstanding_;
        const auto slot = static_cast<unsigned>(cq.user_data >> 4);
        const auto step = static_cast<Step>(cq.user_data & 15);
        Slot& s = slots_[slot];
        s.res[step] = cq.res;
        if (--s.pending > 0) return;
        evaluate(slot);
        free_.push_back(slot);
        --active_;
    }

    void evaluate(unsigned slot) {
        Slot& s = slots_[slot];
        const std::size_t e = s.entry;
        const auto size = static_cast<int>(t_.st[e].stx_size);
        const int* r = s.res;
        bool redo = false;
        if (r[kOpenSrc] < 0) {
            fail(CopyStatus::bad_input, errno_message(t_.src[e], "cannot open", r[kOpenSrc]));
        } else if (r[kOpenDst] < 0) {
            fail(r[kOpenDst] == -ENOENT ? CopyStatus::failure : status_of_write(r[kOpenDst]),
                 errno_message(in_place_ ? t_.dst[e] : std::string_view(s.tmp), "cannot create", r[kOpenDst]));
        } else if (size > 0 && r[kRead] < 0 && !retryable(r[kRead])) {
            fail(CopyStatus::failure, io_message(t_.src[e], "read", 0, r[kRead]));
        } else if (size > 0 && r[kRead] != size) {
            redo = true;  // short (the big path checks whether the file shrank) or EINTR/EAGAIN
        } else if (size > 0 && r[kWrite] < 0 && !retryable(r[kWrite]) && r[kWrite] != -ECANCELED) {
            fail(status_of_write(r[kWrite]), io_message(t_.dst[e], "write", 0, r[kWrite]));
        } else if (size > 0 && r[kWrite] != size) {
            redo = true;
        } else if (c_.o.fsync && r[kFsync] < 0) {
            fail(status_of_write(r[kFsync]), errno_message(t_.dst[e], "fsync", r[kFsync]));
        } else if (!in_place_ && r[kRename] < 0) {
            fail(CopyStatus::failure, errno_message(t_.final_dst[e], "cannot rename into place", r[kRename]));
        } else {
            ++c_.result.files;
            c_.result.bytes += static_cast<std::uint64_t>(size);
            done_.push_back(e);
            return;
        }
        // The temporary must not outlive a failed chain.
        if (!in_place_ && r[kOpenDst] >= 0) {
            ++c_.syscalls();
            ::unlink(s.tmp.c_str());
        }
        if (redo) redo_.push_back(e);
    }

    Ctx& c_;
    Tree& t_;
    std::span<const std::size_t> files_;
    bool in_place_;
    std::vector<Slot> slots_;
    std::vector<unsigned> free_;
    std::vector<std::size_t> redo_, done_;
    unsigned outstanding_ = 0;
    std::size_t active_ = 0;
    std::optional<Failure> failure_;
};

std::optional<Failure> copy_symlink(Ctx& c, const char* src, const std::string& dst, bool in_place) {
    char target[PATH_MAX + 1];
    ++c.syscalls();
    const ssize_t n = ::readlink(src, target, PATH_MAX);
    if (n < 0) return Failure{CopyStatus::bad_input, errno_message(src, "cannot read link", errno)};
    target[n] = '\0';
    const std::string where = in_place ? dst : temp_name_for(dst);
    ++c.syscalls();
    if (::symlink(target, where.c_str()) != 0)
        return Failure{status_of_write(errno), errno_message(where, "cannot create link", errno)};
    if (!in_place) {
        ++c.syscalls();
        if (::rename(where.c_str(), dst.c_str()) != 0) {
            const int e = errno;
            ::unlink(where.c_str());
            return Failure{CopyStatus::failure, errno_message(dst, "cannot rename into place", e)};
        }
    }
    ++c.result.symlinks;
    return std::nullopt;
}

std::optional<Failure> copy_tree(Ctx& c, const std::string& src_root, const std::string& target) {
    struct stat tst {};
    ++c.syscalls();
    const bool exists = ::lstat(target.c_str(), &tst) == 0;
    if (exists && !S_ISDIR(tst.st_mode))
        return Failure{CopyStatus::bad_input, target + ": exists and is not a directory (cannot copy a directory onto it)"};
    const bool in_place = !exists;  // a new tree is built under a temporary name, then renamed
    const std::string root = in_place ? temp_name_for(target) : target;

    Tree t;
    t.src.push(src_root);
    t.dst.push(root);
    t.final_dst.push(target);
    t.entries.push_back({EntryType::directory});
    std::optional<Failure> failure;
    walk_tree(c, src_root, root, target, t, failure);
    if (failure) return failure;

    const std::size_t n = t.entries.size();
    std::vector<const char*> ptrs(n);
    for (std::size_t i = 0; i < n; ++i) ptrs[i] = t.src.c_str(i);
    t.st.resize(n);
    t.st_res.resize(n);
    stat_batch(c.ring ? &*c.ring : nullptr, ptrs, AT_SYMLINK_NOFOLLOW,
               STATX_TYPE | STATX_MODE | STATX_SIZE | STATX_BLOCKS | STATX_ATIME | STATX_MTIME | STATX_UID | STATX_GID,
               t.st, t.st_res, c.syscalls());

    auto cleanup = [&](Failure f) -> std::optional<Failure> {
        if (in_place) remove_tree(root, c.syscalls());
        return f;
    };

    // Directories first, in walk order (parents before children), writable by
    // us until the end, when their own modes are applied.
    std::vector<std::size_t> small, large, dirs;
    for (std::size_t i = 0; i < n; ++i) {
        if (t.st_res[i] < 0) return cleanup({CopyStatus::bad_input, errno_message(t.src[i], "cannot stat", t.st_res[i])});
        const mode_t mode = t.st[i].stx_mode;
        if (S_ISDIR(mode)) {
            ++c.syscalls();
            if (::mkdir(t.dst.c_str(i), (mode & 07777) | S_IRWXU) != 0) {
                struct stat ds {};
                if (!(errno == EEXIST && !in_place && ::stat(t.dst.c_str(i), &ds) == 0 && S_ISDIR(ds.st_mode)))
                    return cleanup({status_of_write(errno), errno_message(t.dst[i], "cannot create directory", errno)});
            }
            dirs.push_back(i);
            ++c.result.dirs;
        } else if (S_ISLNK(mode)) {
            if (auto f = copy_symlink(c, t.src.c_str(i), std::string(t.dst[i]), in_place)) return cleanup(*f);
        } else if (S_ISREG(mode)) {
            const bool sparse = t.st[i].stx_blocks * 512 < t.st[i].stx_size;
            (c.ring && !c.o.direct && !sparse && t.st[i].stx_size <= kSmallMax ? small : large).push_back(i);
        } else {
            ++c.result.skipped;
            c.note(std::string(t.src[i]) + ": skipped: " + kind_name(mode) + ", not copied");
        }
    }

    std::vector<std::size_t> fixups;  // files whose mode or (-p) times and owner need setting
    if (!small.empty()) {
        ChainCopier chains(c, t, small, in_place);
        if (auto f = chains.run()) return cleanup(*f);
        large.insert(large.end(), chains.redo().begin(), chains.redo().end());
        for (std::size_t i : chains.done())
            if (c.o.preserve || (t.st[i].stx_mode & 07777 & c.umask)) fixups.push_back(i);
    }
    for (std::size_t i : large) {
        const bool redone = std::find(small.begin(), small.end(), i) != small.end();
        if (auto f = copy_file(c, t.src.c_str(i), std::string(t.dst[i]), in_place,
                               redone ? std::optional<std::uint64_t>(t.st[i].stx_size) : std::nullopt))
            return cleanup(*f);
    }
    auto times_of = [&](std::size_t i, struct timespec* ts) {
        ts[0] = {t.st[i].stx_atime.tv_sec, t.st[i].stx_atime.tv_nsec};
        ts[1] = {t.st[i].stx_mtime.tv_sec, t.st[i].stx_mtime.tv_nsec};
    };
    for (std::size_t i : fixups) {
        struct timespec ts[2];
        times_of(i, ts);
        keep_attributes(c, -1, t.dst.c_str(i), t.st[i].stx_mode, ts, t.st[i].stx_uid, t.st[i].stx_gid);
    }
    // Directory modes last, deepest first, so a read-only directory was still
    // writable while it was filled.
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
        const std::size_t i = *it;
        struct timespec ts[2];
        times_of(i, ts);
        const mode_t perm = t.st[i].stx_mode & 07777;
        if (((perm | S_IRWXU) & ~c.umask) != perm) {
            ++c.syscalls();
            ::chmod(t.dst.c_str(i), perm);
        }
        keep_attributes(c, -1, t.dst.c_str(i), t.st[i].stx_mode & ~07777, ts, t.st[i].stx_uid, t.st[i].stx_gid);
    }
    if (in_place) {
        ++c.syscalls();
        if (::renameat2(AT_FDCWD, root.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) != 0)
            return cleanup({CopyStatus::failure, errno_message(target, "cannot rename the new tree into place", errno)});
    }
    return std::nullopt;
}

// ---- the job -------------------------------------------------------------------

// Registers both buffers (0: large files, 1: small files).  Without
// CAP_IPC_LOCK pinned pages count against RLIMIT_MEMLOCK (8 MiB by default
// on Debian), which the large one may exceed: then only the small one is
// registered, index 0 left empty, and large files use plain reads and writes.
void register_buffers(Ctx& c) {
    const iovec small{c.small.get(), std::size_t{c.o.inflight} * kSmallMax};
    const iovec both[2] = {{c.big.get(), c.big_size}, small};
    const iovec only_small[2] = {{nullptr, 0}, small};
    for (const auto* iov : {both, only_small}) {
        ++c.syscalls();
        try {
            c.ring->register_buffers(std::span<const iovec>(iov, 2));
            c.fixed_big = iov[0].iov_base != nullptr;
            c.fixed_small = true;
            return;
        } catch (const RingError&) {
        }
    }
}

// Opens, creates and buffered writes to ext4 block, so the kernel runs them
// on io-wq worker threads ("bounded" work), by default up to 4 per CPU.
// Creates in one directory serialize on its lock, and the extra workers spin
// on it: with 64 files in flight, a third of the CPU went to
// rwsem_spin_on_owner.  One worker per CPU made cp -r of 10,000 files in one
// directory ~15% faster warm and ~10% cold on a 2-CPU machine; 4 per CPU was
// no better than the default.  Only -r creates many files, so only -r sets
// it.  Kernels before 5.15 lack the call: no limit.
//
// The limit belongs to the calling thread's io-wq, which all of that
// thread's rings share, not to this ring: the destructor puts back what the
// thread had, so a library caller's own rings are not capped afterwards.
class KernelWorkerLimit {
public:
    explicit KernelWorkerLimit(Ctx& c) {
        unsigned n = c.o.kernel_workers;
        if (n == 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            n = ::sched_getaffinity(0, sizeof set, &set) == 0 ? static_cast<unsigned>(CPU_COUNT(&set)) : 0;
        }
        if (n == 0) return;
        ++c.syscalls();
        try {
            previous_ = c.ring->set_iowq_max_workers(n, 0);
            ring_ = &*c.ring;
            ++c.syscalls();  // the restore
        } catch (const RingError&) {
            if (c.o.kernel_workers) c.note("--kernel-workers: this kernel cannot limit io_uring's workers (needs 5.15)");
        }
    }
    ~KernelWorkerLimit() {
        if (!ring_) return;
        try {
            ring_->set_iowq_max_workers(previous_[0], previous_[1]);  // 0 (none had been set): left as it is
        } catch (const RingError&) {
        }
    }
    KernelWorkerLimit(const KernelWorkerLimit&) = delete;
    KernelWorkerLimit& operator=(const KernelWorkerLimit&) = delete;

private:
    Ring* ring_ = nullptr;
    std::array<unsigned, 2> previous_{};
};

unsigned pow2_at_least(unsigned v) {
    unsigned p = 1;
    while (p < v) p <<= 1;
    return p;
}

// realpath, or empty when it cannot be resolved.
std::string resolved(const std::string& p) {
    char buf[PATH_MAX];
    return ::realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

std::optional<Failure> copy_one(Ctx& c, const std::string& src, const std::string& target) {
    struct stat st {};
    ++c.syscalls();
    const int r = c.o.recursive ? ::lstat(src.c_str(), &st) : ::stat(src.c_str(), &st);
    if (r != 0) return Failure{CopyStatus::bad_input, errno_message(src, "cannot stat", errno)};
    if (S_ISDIR(st.st_mode)) {
        if (!c.o.recursive) return Failure{CopyStatus::bad_input, src + ": is a directory (use -r to copy it)"};
        const std::string rs = resolved(src), rt = resolved(dirname_of(target));
        if (!rs.empty() && !rt.empty() && (rt == rs || rt.rfind(rs + "/", 0) == 0 || rs == "/"))
            return Failure{CopyStatus::bad_input, "cannot copy a directory, " + src + ", into itself, " + target};
        return copy_tree(c, src, target);
    }
    struct stat tst {};
    if (::stat(target.c_str(), &tst) == 0 && tst.st_dev == st.st_dev && tst.st_ino == st.st_ino)
        return Failure{CopyStatus::bad_input, src + " and " + target + " are the same file"};
    if (S_ISLNK(st.st_mode)) return copy_symlink(c, src.c_str(), target, false);
    if (!S_ISREG(st.st_mode)) {
        ++c.result.skipped;
        c.note(src + ": skipped: " + kind_name(st.st_mode) + ", not copied");
        return std::nullopt;
    }
    return copy_file(c, src.c_str(), target, false, std::nullopt);
}

}  // namespace

CopyResult copy(std::span<const std::string> sources, const std::string& dest, const CopyOptions& o,
                const CopySink& sink) {
    CopyResult result;
    auto usage = [&](std::string m) {
        result.status = CopyStatus::usage;
        result.message = std::move(m);
        return result;
    };
    if (sources.empty()) return usage("nothing to copy: name at least one source and a destination");
    for (const std::size_t bs : {o.block_size, o.direct_read_block_size})
        if (bs < kDirectAlign || bs % kDirectAlign || bs > (1u << 30))
            return usage("block size must be a multiple of 4 KiB, at most 1 GiB");
    for (const unsigned qd : {o.qd, o.direct_read_qd})
        if (qd == 0 || qd > 1024) return usage("queue depth must be 1..1024");
    if (o.inflight == 0 || o.inflight > 1024) return usage("files in flight must be 1..1024");
    if (o.kernel_workers > 1024) return usage("kernel workers must be 0 (one per CPU) to 1024");

    Ctx c{o, sink, result, std::nullopt, nullptr, nullptr, 0, false, false, false, 022, o.inflight};
    c.umask = ::umask(0);
    ::umask(c.umask);
    c.syscalls() += 2;

    struct stat dst_st {};
    const bool dest_is_dir = ::stat(dest.c_str(), &dst_st) == 0 && S_ISDIR(dst_st.st_mode);
    ++c.syscalls();
    if (sources.size() > 1 && !dest_is_dir)
        return usage("target " + dest + " is not a directory (several sources need an existing directory)");

    const auto t0 = Clock::now();
    c.big_size = std::max(std::size_t{o.qd} * o.block_size, std::size_t{o.direct_read_qd} * o.direct_read_block_size);
    c.big = aligned_buffer(c.big_size);
    if (!o.force_fallback) {
        std::string why;
        c.ring = make_ring(pow2_at_least(std::max(std::max(o.qd, o.direct_read_qd) * 2, o.inflight * 8)), why);
        if (!c.ring) c.note("io_uring unavailable (" + why + "); copying with read/write instead");
    }
    if (c.ring) {
        c.small = aligned_buffer(std::size_t{o.inflight} * kSmallMax);
        ++c.syscalls();
        c.ring->register_files_sparse(2 * o.inflight);
        register_buffers(c);
    }
    result.used_ring = c.ring.has_value();
    std::optional<KernelWorkerLimit> worker_limit;
    if (c.ring && o.recursive) worker_limit.emplace(c);

    for (const std::string& src : sources) {
        const std::string target = dest_is_dir ? join(dest, basename_of(src)) : dest;
        if (auto f = copy_one(c, src, target)) {
            result.status = f->status;
            result.message = std::move(f->message);
            break;
        }
    }
    result.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (c.ring) result.syscalls += c.ring->enter_calls();
    return result;
}

}  // namespace uringkit::fs
