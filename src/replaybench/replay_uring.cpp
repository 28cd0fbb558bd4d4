// The ring engines of the replay: one ring per trace thread, each step an
// SQE (READ, WRITE, FSYNC, SYNC_FILE_RANGE, FALLOCATE, FTRUNCATE from 6.9),
// scheduled by replay_queue.hpp.  uring is the plain ring, uring-sqpoll adds
// a submission poll thread, uring-reg registers the trace's files and the
// thread's buffers (READ_FIXED/WRITE_FIXED on fixed files).
#include "replay_queue.hpp"

#include "engines/engine.hpp"
#include "uringkit/ops/fs.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/error.hpp"

#include <fcntl.h>
#include <sys/uio.h>

#include <algorithm>
#include <chrono>
#include <optional>

namespace uringkit::replaybench::detail {
namespace {

RingOptions options_for(const ThreadJob& job) {
    if (!job.sqpoll) return single_thread_options();
    RingOptions o;
    o.sqpoll = true;
    o.sq_thread_idle_ms = 50;  // sleep soon after the run instead of spinning into the next
    o.single_issuer = true;
    o.register_ring_fd = true;
    return o;
}

class RingBackend {
public:
    RingBackend(Ring& ring, bool registered) : ring_(ring), registered_(registered) {
        try {
            ftruncate_op_ = ring_.probe_opcodes().supported(sys::opcode::ftruncate);
        } catch (const RingError&) {
        }
    }
    // IORING_OP_FTRUNCATE came in 6.9: before it, the system call.
    bool queues(Op op) const noexcept { return op != Op::ftruncate || ftruncate_op_; }
    const char* name() const noexcept { return "io_uring_enter"; }
    bool kernel_may_write() const noexcept { return true; }
    std::uint64_t syscalls() const noexcept { return ring_.enter_calls(); }

    bool prepare(unsigned slot, const Step& s, int fd, unsigned char* buf,
                 std::uint32_t n) noexcept {
        io_uring_sqe* sqe = ring_.get_sqe();
        // The SQ holds `depth` entries and at most `depth` are in flight; only
        // an SQPOLL thread that has not consumed them yet leaves it full.
        while (!sqe && ring_.wait_sq_space() >= 0) sqe = ring_.get_sqe();
        if (!sqe) return false;
        const File f = registered_ ? File{Fixed{s.file}} : File{Fd{fd}};
        switch (s.op) {
            case Op::read:
                if (registered_)
                    op::ReadFixed(f, buf, n, s.offset, 0).prepare(*sqe);
                else
                    op::Read(f, buf, n, s.offset).prepare(*sqe);
                break;
            case Op::write:
                if (registered_)
                    op::WriteFixed(f, buf, n, s.offset, 0).prepare(*sqe);
                else
                    op::Write(f, buf, n, s.offset).prepare(*sqe);
                break;
            case Op::fsync:
                op::Fsync(f).prepare(*sqe);
                break;
            case Op::fdatasync:
                op::Fsync(f).datasync().prepare(*sqe);
                break;
            case Op::ftruncate:
                op::Ftruncate(f, s.offset).prepare(*sqe);
                break;
            case Op::sync_range:
                op::SyncFileRange(
                    f, s.offset,
                    static_cast<std::uint32_t>(std::min<std::uint64_t>(s.length, UINT32_MAX)),
                    s.pad[0])
                    .prepare(*sqe);
                break;
            case Op::fallocate:
                op::Fallocate(f, s.pad[0], s.offset, s.length).prepare(*sqe);
                break;
            case Op::trim:
                op::Fallocate(f, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, s.offset, s.length)
                    .prepare(*sqe);
                break;
            case Op::open:
            case Op::close:
                op::Nop().prepare(*sqe);  // never queued: the scheduler skips marks
                break;
        }
        sqe->user_data = slot;
        return true;
    }

    int wait(std::uint64_t deadline_ns) noexcept {
        int ret;
        if (deadline_ns) {
            const std::uint64_t now = monotonic_ns();
            const auto left = std::chrono::nanoseconds(deadline_ns > now ? deadline_ns - now : 0);
            ret = ring_.submit_and_wait_for(1, left);
            if (ret == -EOPNOTSUPP) ret = ring_.submit_and_wait(1);  // before 5.11: wait for one
        } else {
            ret = ring_.submit_and_wait(1);
        }
        if (ret < 0 && ret != -EBUSY && ret != -EAGAIN && ret != -EINTR && ret != -ETIME)
            return ret;
        return 0;
    }
    template <class F>
    void reap(F&& f) {
        ring_.for_each_completion(
            [&](const Completion& c) { f(static_cast<unsigned>(c.user_data), c.res); });
    }

private:
    Ring& ring_;
    bool registered_;
    bool ftruncate_op_ = false;
};

}  // namespace

ThreadResult replay_thread_uring(const ThreadJob& job) {
    // The buffers are made before the ring, so they outlive it on every path.
    std::unique_ptr<engines::BufferArena> arena = make_replay_buffers(job);
    std::optional<Ring> ring;
    try {
        ring.emplace(Ring::create(job.depth, options_for(job)));
        if (job.registered) {
            ring->register_files(*job.fds);  // -1 for a file no step uses: an empty entry
            const iovec iov{arena->data(), arena->bytes()};
            try {
                ring->register_buffers({&iov, 1});
            } catch (const RingError& e) {
                if (e.code().value() == ENOMEM)
                    return replay_unavailable(job, engines::memlock_refusal(iov.iov_len));
                throw;
            }
        }
    } catch (const RingError& e) {
        return replay_unavailable(job, e.what());
    }
    RingBackend backend(*ring, job.registered);
    return replay_queued(job, backend, arena);
}

}  // namespace uringkit::replaybench::detail
