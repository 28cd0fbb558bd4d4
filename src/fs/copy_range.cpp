// One file's bytes: linked read -> write pairs on the ring, pread/pwrite
// without one, and read/write for sources that are streams.
#include "copy_internal.hpp"

#include "uringkit/sys/page_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace uringkit::fs::detail {
namespace {

bool retryable(int res) noexcept {
    return res == -EINTR || res == -EAGAIN;
}

// Below this a cold source is read through the cache anyway: the probe, the
// second open and its close are three more system calls, worth it only for a
// copy long enough to gain from deep direct reads.
constexpr std::uint64_t kDirectReadMin = 8 * 1024 * 1024;

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
        if (::fstat(fd.get(), &again) != 0 || again.st_ino != st.st_ino ||
            again.st_dev != st.st_dev)
            return {};
    } else if (c.o.source_reads == SourceReads::direct && !c.said_no_direct_read) {
        c.said_no_direct_read = true;
        c.note(std::string("--source-reads direct: ") + src + " does not allow O_DIRECT (" +
               std::strerror(errno) + "); reading it and any like it through the page cache");
    }
    if (fd) {
        ++c.result.direct_read_files;
        ++c.syscalls();  // its close
    }
    return fd;
}

// A read -> write pair per buffer: the read is linked to the write, so the
// write starts only once the read filled the buffer.  A short read cuts the
// link (the write completes -ECANCELED): the part that was read is written on
// its own and the rest read again.  A short write is continued.
class RangeCopier {
public:
    RangeCopier(Ctx& ctx, const RangeJob& job) : c_(ctx), job_(job), segs_(job.qd) {}

    // Returns with nothing of this job in flight, or with the buffers handed
    // to the process for good (c_.kernel_holds_buffers) when the ring failed
    // so that not even a cancel could be reaped.
    std::optional<Failure> run() {
        Ring& ring = *c_.ring;
        for (unsigned k = 0; k < segs_.size(); ++k) next_chunk(k);
        while (in_flight_ > 0) {
            const int r = ring.submit_and_wait(1);
            if (r < 0 && r != -EBUSY && r != -EAGAIN && r != -EINTR) {
                fail(CopyStatus::failure, errno_message(job_.dst_name, "io_uring_enter", r));
                c_.ring_failed = true;
                break;
            }
            ring.for_each_completion([this](const Completion& cq) { complete(cq); });
        }
        if (in_flight_ > 0 &&
            !drain(
                c_, [this] { return in_flight_; }, [this](const Completion& cq) { complete(cq); }))
            failure_->message +=
                "; " + std::to_string(in_flight_) +
                " reads and writes are still in the kernel, their buffers are kept";
        if (!failure_ && interrupted_) failure_ = Failure{CopyStatus::interrupted, "interrupted"};
        return std::move(failure_);
    }
    std::uint64_t bytes() const noexcept { return bytes_; }

private:
    struct Seg {
        std::uint64_t off = 0;
        std::uint32_t len = 0, rd = 0, wr = 0;
        int pending = 0;
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
        if (failure_ || ext_ >= job_.extents.size()) return;
        if (c_.stop_requested()) {  // start nothing new; what is in flight completes
            interrupted_ = true;
            return;
        }
        const Extent& e = job_.extents[ext_];
        if (pos_ < e.begin) pos_ = e.begin;
        const std::uint64_t len = std::min<std::uint64_t>(job_.block_size, e.end - pos_);
        segs_[k] = Seg{pos_, static_cast<std::uint32_t>(len), 0, 0, 0};
        pos_ += len;
        if (pos_ >= e.end) ++ext_;
        issue(k);
    }

    void issue(unsigned k) {
        Seg& s = segs_[k];
        Ring& ring = *c_.ring;
        // Room for the linked pair whole.  Called while completions are
        // reaped, so no reaping here: the SQ (2 x qd) only ever holds this
        // job's unsubmitted SQEs, which one submit clears.
        if (const int r = ring.reserve(2); r < 0) {
            fail(CopyStatus::failure, errno_message(job_.dst_name, "io_uring_enter", r));
            return;
        }
        char* buf = job_.block(c_, k);
        const std::uint32_t wt = write_target(s);
        if (s.wr < wt) {  // written less than was read: finish that first
            prep_write(ring, buf + s.wr, wt - s.wr, s.off + s.wr).user_data(ud(k, 1));
            s.pending = 1;
            ++in_flight_;
            return;
        }
        const std::uint32_t n = read_target(s) - s.rd;
        prep_read(ring, read_fd(s), buf + s.rd, n, s.off + s.rd).user_data(ud(k, 0)).link();
        prep_write(ring, buf + s.rd, n, s.off + s.rd).user_data(ud(k, 1));
        s.pending = 2;
        in_flight_ += 2;
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
    static std::uint64_t ud(unsigned k, unsigned is_write) {
        return std::uint64_t{k} << 1 | is_write;
    }

    // With several chunks in flight their failures can complete in any
    // order (6.1 completed a write past RLIMIT_FSIZE at 1.75 MiB before the
    // one at 1 MiB): the one reported is the lowest offset, where the copy
    // really stopped.  A failure with no offset (the ring's) only ever comes
    // first or not at all, and is never replaced.
    void fail(CopyStatus st, std::string m, std::uint64_t offset = 0) {
        if (failure_ && (offset == 0 || failure_offset_ == 0 || offset >= failure_offset_)) return;
        failure_ = Failure{st, std::move(m)};
        failure_offset_ = offset;
    }

    void complete(const Completion& cq) {
        --in_flight_;
        const auto k = static_cast<unsigned>(cq.user_data >> 1);
        const bool is_write = cq.user_data & 1;
        Seg& s = segs_[k];
        const int res = cq.res;
        if (!is_write) {
            if (res > 0) {
                s.rd += static_cast<std::uint32_t>(res);
                if (s.rd > s.len) s.rd = s.len;  // O_DIRECT tail: bytes past the size are not data
            } else if (res == 0 && s.rd < s.len) {
                fail(CopyStatus::failure, shrank_message(job_.src_name, s.off + s.rd),
                     s.off + s.rd + 1);
            } else if (res < 0 && !retryable(res) && res != -ECANCELED) {
                fail(CopyStatus::failure, io_message(job_.src_name, "read", s.off + s.rd, res),
                     s.off + s.rd + 1);
            }
        } else {
            if (res > 0) {
                s.wr += static_cast<std::uint32_t>(res);
            } else if (res < 0 && !retryable(res) && res != -ECANCELED) {
                fail(status_of_write(res), io_message(job_.dst_name, "write", s.off + s.wr, res),
                     s.off + s.wr + 1);
            }
        }
        if (--s.pending > 0 || failure_) return;
        if (s.rd >= s.len && s.wr >= write_target(s)) {
            bytes_ += s.len;
            if (c_.o.on_progress) c_.o.on_progress(bytes_);
            next_chunk(k);
        } else if (!interrupted_ || s.rd > s.wr) {
            issue(k);  // continue a short transfer (interrupted: only write out what was read)
        }
    }

    Ctx& c_;
    const RangeJob& job_;
    std::vector<Seg> segs_;
    std::size_t ext_ = 0;
    std::uint64_t pos_ = 0;
    std::uint64_t bytes_ = 0;
    unsigned in_flight_ = 0;  // SQEs whose CQE has not been reaped
    bool interrupted_ = false;
    std::optional<Failure> failure_;
    std::uint64_t failure_offset_ = 0;  // 1 + the failed offset; 0: none, or not an I/O failure
};

// The same job with pread/pwrite, when io_uring is not available.
std::optional<Failure> copy_range_sync(Ctx& c, const RangeJob& job, std::uint64_t& bytes) {
    char* buf = job.block(c, 0);
    for (const Extent& e : job.extents) {
        for (std::uint64_t off = e.begin; off < e.end;) {
            if (c.stop_requested()) return Failure{CopyStatus::interrupted, "interrupted"};
            const std::size_t len = std::min<std::uint64_t>(job.block_size, e.end - off);
            const std::size_t want = job.direct ? round_up(len, kDirectAlign) : len;
            std::size_t rd = 0;
            while (rd < len) {
                ++c.syscalls();
                const ssize_t n =
                    ::pread(job.src, buf + rd, want - rd, static_cast<off_t>(off + rd));
                if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
                if (n < 0)
                    return Failure{CopyStatus::failure,
                                   io_message(job.src_name, "read", off + rd, errno)};
                if (n == 0)
                    return Failure{CopyStatus::failure, shrank_message(job.src_name, off + rd)};
                rd += static_cast<std::size_t>(n);
            }
            rd = std::min(rd, len);
            const std::size_t wt = job.direct ? round_up(rd, kDirectAlign) : rd;
            for (std::size_t wr = 0; wr < wt;) {
                ++c.syscalls();
                const ssize_t n =
                    ::pwrite(job.dst, buf + wr, wt - wr, static_cast<off_t>(off + wr));
                if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
                if (n < 0)
                    return Failure{status_of_write(errno),
                                   io_message(job.dst_name, "write", off + wr, errno)};
                wr += static_cast<std::size_t>(n);
            }
            off += len;
            bytes += len;
            if (c.o.on_progress) c.o.on_progress(bytes);
        }
    }
    return std::nullopt;
}

}  // namespace

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

std::optional<Failure> copy_range(Ctx& c, const RangeJob& job, std::uint64_t& bytes) {
    if (!c.ring) return copy_range_sync(c, job, bytes);
    if (c.ring_unusable())
        return Failure{CopyStatus::failure,
                       std::string(job.dst_name) + ": not copied: the ring failed"};
    RangeCopier rc(c, job);
    auto f = rc.run();
    bytes = rc.bytes();
    return f;
}

std::optional<Failure> copy_on_ring(Ctx& c, util::UniqueFd& sfd, const struct stat& st,
                                    Destination& d, const char* src,
                                    const std::vector<Extent>& extents, std::uint64_t& bytes,
                                    bool& direct) {
    const std::string& dst = d.path;
    direct = c.o.direct;
    if (direct) {
        c.syscalls() += 2;
        if (::fcntl(sfd.get(), F_SETFL, O_DIRECT) != 0 ||
            ::fcntl(d.fd.get(), F_SETFL, O_DIRECT) != 0) {
            ::fcntl(sfd.get(), F_SETFL, 0);
            ::fcntl(d.fd.get(), F_SETFL, 0);
            direct = false;
            c.note(std::string("--direct: ") + src + " or " + dst +
                   " does not allow O_DIRECT; copying through the page cache");
        }
    }
    const bool ring = ensure_ring(c) != nullptr;
    util::UniqueFd src_direct;
    if (!direct && ring) src_direct = open_cold_source(c, src, sfd.get(), st);
    const std::size_t block = src_direct ? c.o.direct_read_block_size : c.o.block_size;
    if (!direct && !src_direct && static_cast<std::uint64_t>(st.st_size) > block) {
        // Several reads in flight at neighbouring offsets look random to the
        // readahead heuristics; say it is sequential so the window grows
        // (cold 1 GiB copies were ~1.5x slower without it).
        ++c.syscalls();
        ::posix_fadvise(sfd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
    }
    // Pairs in flight, and the buffer, sized to the file: a 3-byte file
    // needs one 4 KiB block, not qd x 256 KiB (or 16 x 1 MiB) of memory
    // pinned for the ring.
    std::uint64_t chunks = 0;
    for (const Extent& e : extents) chunks += (e.end - e.begin + block - 1) / block;
    const unsigned qd = static_cast<unsigned>(
        std::clamp<std::uint64_t>(chunks, 1, src_direct ? c.o.direct_read_qd : c.o.qd));
    std::uint64_t largest = 0;
    for (const Extent& e : extents) largest = std::max(largest, e.end - e.begin);
    const std::size_t block_size =
        chunks <= 1 ? round_up(std::max<std::uint64_t>(largest, 1), kDirectAlign) : block;
    if (!ensure_big_buffer(c, std::size_t{qd} * block_size))
        return Failure{CopyStatus::failure, dst + ": not copied: the ring failed"};
    RangeJob job{sfd.get(), d.fd.get(),       src, dst,       extents,
                 direct,    src_direct.get(), qd,  block_size};
    auto failure = copy_range(c, job, bytes);
    if (c.kernel_holds_buffers) {  // the ring failed with this job's requests in flight
        // The kernel may still use these descriptors: they stay open (a
        // write to an unlinked temporary harms nothing).
        (void)sfd.release();
        (void)src_direct.release();
        (void)d.fd.release();
    }
    return failure;
}

std::optional<Failure> copy_stream(Ctx& c, int src, int dst, std::string_view src_name,
                                   std::string_view dst_name, std::uint64_t& bytes) {
    const std::size_t block = c.o.block_size;
    if (!ensure_big_buffer(c, block))
        return Failure{CopyStatus::failure,
                       std::string(dst_name) + ": not copied: the ring failed"};
    char* buf = c.big.get();
    for (;;) {
        if (c.stop_requested()) return Failure{CopyStatus::interrupted, "interrupted"};
        ++c.syscalls();
        const ssize_t n = ::read(src, buf, block);
        if (n < 0 && errno == EINTR) continue;  // a signal: the loop looks at the stop flag
        if (n < 0) return Failure{CopyStatus::failure, io_message(src_name, "read", bytes, errno)};
        if (n == 0) return std::nullopt;
        for (ssize_t wr = 0; wr < n;) {
            ++c.syscalls();
            const ssize_t w = ::write(dst, buf + wr, static_cast<std::size_t>(n - wr));
            if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (w < 0)
                return Failure{status_of_write(errno),
                               io_message(dst_name, "write", bytes + wr, errno)};
            wr += w;
        }
        bytes += static_cast<std::uint64_t>(n);
        if (c.o.on_progress) c.o.on_progress(bytes);
    }
}

}  // namespace uringkit::fs::detail
