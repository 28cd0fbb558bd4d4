// The replay engines of the peers, scheduled like the ring engines
// (replay_queue.hpp): liburing (the same SQEs through liburing's ring),
// libaio (io_submit + io_getevents: reads, writes, fsync and fdatasync;
// asynchronous only under O_DIRECT, as bench's libaio row says) and
// threadpool (blocking system calls on a pool of workers, the model of
// glibc's POSIX AIO and libuv).  Steps a peer has no request for run as
// their own system call once their file has drained.
#include "replay_queue.hpp"

#include "engines/handoff.hpp"

#ifdef URINGKIT_HAVE_LIBAIO
#include <libaio.h>
#endif
#ifdef URINGKIT_HAVE_LIBURING
#include <liburing.h>
#endif

#include <fcntl.h>
#include <time.h>

#include <algorithm>
#include <cerrno>

namespace uringkit::replaybench::detail {

namespace {

timespec relative_to(std::uint64_t deadline_ns) noexcept {
    const std::uint64_t now = monotonic_ns();
    const std::uint64_t left = deadline_ns > now ? deadline_ns - now : 0;
    return timespec{static_cast<time_t>(left / 1000000000u), static_cast<long>(left % 1000000000u)};
}

#ifdef URINGKIT_HAVE_LIBURING
class LiburingBackend {
public:
    explicit LiburingBackend(io_uring& ring) : ring_(ring) {}
    // liburing 2.3 (Debian 12) has no io_uring_prep_ftruncate: the system call.
    bool queues(Op op) const noexcept { return op != Op::ftruncate; }
    const char* name() const noexcept { return "io_uring_enter (liburing)"; }
    bool kernel_may_write() const noexcept { return true; }
    std::uint64_t syscalls() const noexcept { return enters_; }

    bool prepare(unsigned slot, const Step& s, int fd, unsigned char* buf,
                 std::uint32_t n) noexcept {
        io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
        if (!sqe) return false;  // the SQ holds depth entries, at most depth in flight
        switch (s.op) {
            case Op::read:
                io_uring_prep_read(sqe, fd, buf, n, s.offset);
                break;
            case Op::write:
                io_uring_prep_write(sqe, fd, buf, n, s.offset);
                break;
            case Op::fsync:
                io_uring_prep_fsync(sqe, fd, 0);
                break;
            case Op::fdatasync:
                io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
                break;
            case Op::sync_range:
                io_uring_prep_sync_file_range(
                    sqe, fd, static_cast<unsigned>(std::min<std::uint64_t>(s.length, UINT32_MAX)),
                    s.offset, s.pad[0]);
                break;
            case Op::fallocate:
                io_uring_prep_fallocate(sqe, fd, s.pad[0], s.offset, s.length);
                break;
            case Op::trim:
                io_uring_prep_fallocate(sqe, fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                        s.offset, s.length);
                break;
            case Op::ftruncate:
            case Op::open:
            case Op::close:
                io_uring_prep_nop(sqe);  // never queued
                break;
        }
        io_uring_sqe_set_data64(sqe, slot);
        return true;
    }
    int wait(std::uint64_t deadline_ns) noexcept {
        // One io_uring_enter submits and waits: wait_nr > 0 needs the kernel,
        // and under DEFER_TASKRUN no completion appears without entering.
        ++enters_;
        io_uring_cqe* cqe = nullptr;
        int ret;
        if (deadline_ns) {
            __kernel_timespec ts{};
            const timespec rel = relative_to(deadline_ns);
            ts.tv_sec = rel.tv_sec;
            ts.tv_nsec = rel.tv_nsec;
            ret = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &ts, nullptr);
        } else {
            ret = io_uring_submit_and_wait(&ring_, 1);
        }
        if (ret < 0 && ret != -EBUSY && ret != -EAGAIN && ret != -EINTR && ret != -ETIME)
            return ret;
        return 0;
    }
    template <class F>
    void reap(F&& f) {
        unsigned head, seen = 0;
        io_uring_cqe* cqe;
        io_uring_for_each_cqe(&ring_, head, cqe) {
            f(static_cast<unsigned>(io_uring_cqe_get_data64(cqe)), cqe->res);
            ++seen;
        }
        io_uring_cq_advance(&ring_, seen);
    }

private:
    io_uring& ring_;
    std::uint64_t enters_ = 0;
};
#endif

#ifdef URINGKIT_HAVE_LIBAIO
class LibaioBackend {
public:
    LibaioBackend(io_context_t ctx, unsigned depth)
        : ctx_(ctx), iocbs_(depth), pending_(depth), events_(depth), failed_(depth) {}
    // Native AIO has requests for reads, writes and (since 4.18) fsync and
    // fdatasync; the rest are system calls.
    bool queues(Op op) const noexcept {
        return op == Op::read || op == Op::write || op == Op::fsync || op == Op::fdatasync;
    }
    const char* name() const noexcept { return "io_getevents"; }
    bool kernel_may_write() const noexcept { return true; }
    std::uint64_t syscalls() const noexcept { return calls_; }

    bool prepare(unsigned slot, const Step& s, int fd, unsigned char* buf,
                 std::uint32_t n) noexcept {
        iocb* cb = &iocbs_[slot];
        switch (s.op) {
            case Op::read:
                io_prep_pread(cb, fd, buf, n, static_cast<long long>(s.offset));
                break;
            case Op::write:
                io_prep_pwrite(cb, fd, buf, n, static_cast<long long>(s.offset));
                break;
            case Op::fsync:
                io_prep_fsync(cb, fd);
                break;
            default:
                io_prep_fdsync(cb, fd);
                break;
        }
        cb->data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(slot));
        pending_[prepared_++] = cb;
        return true;
    }
    int wait(std::uint64_t deadline_ns) noexcept {
        // io_submit may take fewer than offered (a short count when the
        // kernel is out of requests); the rest are offered again.  A request
        // it refuses outright (EINVAL: fsync before 4.18) completes with that error.
        unsigned done = 0;
        while (done < prepared_) {
            const int n =
                io_submit(ctx_, static_cast<long>(prepared_ - done), pending_.data() + done);
            ++calls_;
            if (n > 0) {
                done += static_cast<unsigned>(n);
                inflight_ += static_cast<unsigned>(n);
            } else if (n == -EINTR) {
                continue;  // a signal before anything was taken: offer the same again
            } else if (n == -EAGAIN || n == 0) {
                if (inflight_ == 0) return n ? n : -EAGAIN;  // nothing will complete to make room
                break;                                       // offered again after a completion
            } else {
                const iocb* cb = pending_[done++];
                failed_[nfailed_++] = {
                    static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(cb->data)), n};
            }
        }
        std::copy(pending_.begin() + done, pending_.begin() + prepared_, pending_.begin());
        prepared_ -= done;
        nevents_ = 0;
        if (inflight_ == 0) return 0;
        timespec rel{};
        // With failed requests to report, take what is ready without waiting.
        const long min_nr = nfailed_ ? 0 : 1;
        if (deadline_ns) rel = relative_to(deadline_ns);
        const int got = io_getevents(ctx_, min_nr, static_cast<long>(events_.size()),
                                     events_.data(), deadline_ns || nfailed_ ? &rel : nullptr);
        ++calls_;
        if (got < 0 && got != -EINTR) return got;
        nevents_ = got > 0 ? static_cast<unsigned>(got) : 0;
        inflight_ -= nevents_;
        return 0;
    }
    template <class F>
    void reap(F&& f) {
        for (unsigned i = 0; i < nfailed_; ++i) f(failed_[i].slot, failed_[i].res);
        nfailed_ = 0;
        for (unsigned i = 0; i < nevents_; ++i)
            f(static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(events_[i].data)),
              static_cast<long long>(static_cast<long>(events_[i].res)));
        nevents_ = 0;
    }

private:
    struct Failed {
        unsigned slot = 0;
        long long res = 0;
    };
    io_context_t ctx_;
    std::vector<iocb> iocbs_;
    std::vector<iocb*> pending_;
    std::vector<io_event> events_;
    std::vector<Failed> failed_;
    unsigned prepared_ = 0, inflight_ = 0, nevents_ = 0, nfailed_ = 0;
    std::uint64_t calls_ = 0;
};
#endif

// Workers doing each step's own system call (engines::WorkerPool: lock-free
// queues and futex semaphores, each futex call counted), one per slot up to
// kMaxWorkers.
class ThreadpoolBackend {
public:
    static constexpr unsigned kMaxWorkers = 64;

    explicit ThreadpoolBackend(unsigned depth)
        : work_(depth), res_(depth), pool_(depth, std::clamp(depth, 1u, kMaxWorkers), &run, this) {}

    bool queues(Op) const noexcept { return true; }
    const char* name() const noexcept { return "threadpool"; }
    // The workers are joined before the buffers go: nothing writes after.
    bool kernel_may_write() const noexcept { return false; }
    std::uint64_t syscalls() const noexcept { return own_calls_ + pool_.worker_syscalls(); }

    bool prepare(unsigned slot, const Step& s, int fd, unsigned char* buf,
                 std::uint32_t n) noexcept {
        work_[slot] = Work{s, fd, buf, n};
        if (!pool_.hand(slot)) return false;  // at most depth out: never
        ++handed_;
        return true;
    }
    int wait(std::uint64_t deadline_ns) noexcept {
        own_calls_ += pool_.wake(handed_);
        handed_ = 0;
        bool taken = true;
        if (deadline_ns)
            own_calls_ += pool_.wait_until(deadline_ns, taken);
        else
            own_calls_ += pool_.wait();
        ready_ = taken;
        return 0;
    }
    template <class F>
    void reap(F&& f) {
        // The one wait() took, then whatever else is ready.
        while (ready_ || pool_.try_wait()) {
            ready_ = false;
            std::uint32_t s;
            own_calls_ += pool_.take(s);
            f(s, res_[s]);
        }
    }

private:
    struct Work {
        Step step;
        int fd = -1;
        unsigned char* buf = nullptr;
        std::uint32_t len = 0;
    };
    static std::uint64_t run(void* ctx, std::uint32_t s) noexcept {
        auto& self = *static_cast<ThreadpoolBackend*>(ctx);
        const Work& w = self.work_[s];
        std::uint64_t calls = 0;
        long long r;
        do {
            ++calls;
            r = run_step_sync(w.fd, w.step, w.buf, w.len);
        } while (r == -EINTR);
        self.res_[s] = r;
        return calls;
    }

    std::vector<Work> work_;      // by slot: written before the slot is handed over
    std::vector<long long> res_;  // by slot: written by the worker before it hands the slot back
    std::uint32_t handed_ = 0;
    bool ready_ = false;
    std::uint64_t own_calls_ = 0;
    engines::WorkerPool pool_;  // last: its workers stop before the members they use go
};

}  // namespace

ThreadResult replay_thread_liburing(const ThreadJob& job) {
#ifdef URINGKIT_HAVE_LIBURING
    std::unique_ptr<engines::BufferArena> arena = make_replay_buffers(job);
    io_uring ring{};
    // The flags of bench's liburing engine, dropped when the kernel refuses them.
    io_uring_params params{};
    params.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    int r = io_uring_queue_init_params(job.depth, &ring, &params);
    if (r == -EINVAL) {
        params = {};
        r = io_uring_queue_init_params(job.depth, &ring, &params);
    }
    if (r < 0)
        return replay_unavailable(
            job, std::string("io_uring_queue_init (liburing): ") + std::strerror(-r));
    io_uring_register_ring_fd(&ring);  // best effort, as the uring engine
    ThreadResult out;
    {
        LiburingBackend backend(ring);
        out = replay_queued(job, backend, arena);
    }
    io_uring_queue_exit(&ring);
    return out;
#else
    return replay_unavailable(
        job, "liburing was not found when uringkit was built (Debian: liburing-dev)");
#endif
}

ThreadResult replay_thread_libaio(const ThreadJob& job) {
#ifdef URINGKIT_HAVE_LIBAIO
    std::unique_ptr<engines::BufferArena> arena = make_replay_buffers(job);
    io_context_t ctx{};
    const int r = io_setup(static_cast<int>(job.depth), &ctx);
    if (r < 0)
        return replay_unavailable(
            job, std::string("io_setup: ") + std::strerror(-r) +
                     (r == -EAGAIN ? " (depth above /proc/sys/fs/aio-max-nr)" : ""));
    ThreadResult out;
    {
        LibaioBackend backend(ctx, job.depth);
        out = replay_queued(job, backend, arena);
    }
    io_destroy(ctx);
    return out;
#else
    return replay_unavailable(job,
                              "libaio was not found when uringkit was built (Debian: libaio-dev)");
#endif
}

ThreadResult replay_thread_threadpool(const ThreadJob& job) {
    std::unique_ptr<engines::BufferArena> arena = make_replay_buffers(job);
    try {
        ThreadpoolBackend backend(job.depth);
        return replay_queued(job, backend, arena);
    } catch (const std::system_error& e) {
        return replay_unavailable(job, std::string("starting the pool's threads: ") + e.what());
    }
}

}  // namespace uringkit::replaybench::detail
