// One io_uring instance: setup, the shared SQ and CQ, submission, reaping and
// registration.  Single-threaded by design (like a liburing `struct io_uring`):
// one thread prepares, submits and reaps; use one Ring per thread.
//
// The hot path (prepare, submit, reap) allocates nothing and takes no lock.
#pragma once

#include "uringkit/cxx20.hpp"
#include "uringkit/ring/barrier.hpp"
#include "uringkit/ring/sqe.hpp"
#include "uringkit/sys/error.hpp"
#include "uringkit/sys/syscall.hpp"
#include "uringkit/sys/uapi.hpp"

#include <sys/uio.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <span>

namespace uringkit {

struct RingOptions {
    // CQ size; 0 lets the kernel pick (twice the SQ size).  Rounded up to a power of two.
    unsigned cq_entries = 0;
    // A kernel thread polls the SQ, so submission needs no system call while it is awake.
    bool sqpoll = false;
    unsigned sq_thread_idle_ms = 0;  // 0: kernel default (1 s)
    int sq_thread_cpu = -1;          // pin the SQPOLL thread; -1: anywhere
    // Poll for completions instead of interrupts (O_DIRECT on devices with poll queues).
    bool iopoll = false;
    bool single_issuer = false;  // 6.0: only the creating thread submits
    bool defer_taskrun = false;  // 6.1: run completion work only when we wait (needs single_issuer)
    bool coop_taskrun = false;   // 5.19: no IPI to interrupt us for completion work
    bool taskrun_flag = false;   // 5.19: set IORING_SQ_TASKRUN when work is pending
    bool submit_all = false;     // 5.18: keep submitting past a failed SQE
    bool clamp = false;          // clamp oversized entries instead of failing
    int attach_wq = -1;          // share the io-wq of this ring fd
    // Register the ring fd itself (5.18) so each io_uring_enter skips the fd
    // table lookup; stays off where the kernel lacks it.  The registration
    // belongs to the creating thread's table: only there does the ring enter
    // through it (other threads use the plain fd), and only there can it be
    // dropped.  A ring destroyed on another thread stays alive in the kernel
    // until its creating thread exits: call unregister_ring_fd() on the
    // creating thread before handing the ring to another one for good.
    bool register_ring_fd = false;
    // Raw IORING_SETUP_* bits OR-ed in, for flags this struct does not name.
    // SQE128 and CQE32 are refused here with RingError(EINVAL): a ring with
    // 128-byte SQEs is a BigRing (ring/big_ring.hpp), whose type lets the
    // 128-byte operations in.  NO_MMAP (and REGISTERED_FD_ONLY, which needs
    // it) puts the rings in memory of ours, which this class does not do:
    // refused the same way.
    std::uint32_t extra_flags = 0;
};

// Options for the usual ring: one thread creates it and alone submits to and
// reaps from it.  SINGLE_ISSUER (6.0) and DEFER_TASKRUN (6.1) let the kernel
// skip locking and run completion work only when that thread waits; the
// registered ring fd (5.18) saves an fd-table lookup per io_uring_enter.
RingOptions single_thread_options(unsigned cq_entries = 0) noexcept;

// The opcodes the running kernel reports (IORING_REGISTER_PROBE, 5.6).
class OpcodeSupport {
public:
    bool supported(unsigned op) const noexcept {
        return op < 256 && (bits_[op / 64] >> (op % 64)) & 1;
    }
    unsigned last_op() const noexcept { return last_op_; }

private:
    friend class Ring;
    std::uint64_t bits_[4] = {};
    unsigned last_op_ = 0;
};

class BigRing;

namespace detail {
// An operation that fills a whole 128-byte SQE (a passthrough command): its
// prepare() takes a BigSqe&, which only a BigRing hands out.
template <class Op>
concept BigSqeOp = requires(const Op& op, BigSqe& s) {
    op.prepare(s);
};

// A number for the calling thread, never reused within the process (unlike
// a thread id or a thread_local's address after the thread exits).
std::uint64_t next_thread_token() noexcept;
inline thread_local std::uint64_t thread_token = 0;
inline std::uint64_t this_thread_token() noexcept {
    if (thread_token == 0) thread_token = next_thread_token();
    return thread_token;
}
}  // namespace detail

class Ring {
public:
    // Throws RingError naming io_uring_setup or mmap and what the errno usually means.
    explicit Ring(unsigned entries, const RingOptions& options = {});
    // As the constructor, but where this kernel refuses SINGLE_ISSUER or
    // DEFER_TASKRUN (EINVAL before 6.0/6.1) the same ring is set up without
    // them: they change speed, not meaning.  Other failures throw RingError.
    static Ring create(unsigned entries, RingOptions options);
    // The rule create() applies, for any ring type made from RingOptions
    // (BigRing::create too): `make(options)` once as asked, and again
    // without SINGLE_ISSUER/DEFER_TASKRUN where the kernel says EINVAL.
    template <class Make>
    static auto with_taskrun_fallback(RingOptions options, Make&& make) {
        try {
            return make(options);
        } catch (const RingError& e) {
            if (e.code().value() != EINVAL || !(options.single_issuer || options.defer_taskrun))
                throw;
        }
        options.single_issuer = options.defer_taskrun = false;
        // TASKRUN_FLAG alone is EINVAL: it needs COOP_TASKRUN or DEFER_TASKRUN.
        if (!options.coop_taskrun) options.taskrun_flag = false;
        return make(options);
    }
    Ring(Ring&& other) noexcept;
    Ring& operator=(Ring&& other) noexcept;
    Ring(const Ring&) = delete;
    Ring& operator=(const Ring&) = delete;
    ~Ring();

    int fd() const noexcept { return fd_; }
    std::uint32_t features() const noexcept { return features_; }
    bool has_feature(std::uint32_t f) const noexcept { return (features_ & f) == f; }
    std::uint32_t setup_flags() const noexcept { return setup_flags_; }
    unsigned sq_entries() const noexcept { return sq_.entries; }
    unsigned cq_entries() const noexcept { return cq_.entries; }
    bool ring_fd_registered() const noexcept { return enter_flags_ & IORING_ENTER_REGISTERED_RING; }
    // Drops the registered ring fd; call it on the creating thread before
    // the ring moves to another thread for good.  False (and nothing done)
    // on another thread, whose table the index does not belong to.
    bool unregister_ring_fd() noexcept;
    // Completions the kernel could not deliver and counted in the CQ ring's
    // overflow field: without IORING_FEAT_NODROP (before 5.5) those past a
    // full CQ; with it, only those it could not even allocate an overflow
    // entry for, after which a wait fails with -EBADR.  Any count above 0
    // means results are lost.
    unsigned dropped_completions() const noexcept { return barrier::load_relaxed(cq_.koverflow); }
    // The kernel's SQ ring flags now (IORING_SQ_NEED_WAKEUP, IORING_SQ_CQ_OVERFLOW,
    // IORING_SQ_TASKRUN): a snapshot for diagnostics and tests.
    unsigned sq_flags() const noexcept { return barrier::load_relaxed(sq_.kflags); }

    // ---- submission --------------------------------------------------------

    // The next free SQE, zeroed, or nullptr when the SQ is full (nothing is
    // ever overwritten).  In a BigRing the whole 128-byte slot is zeroed.
    // Prefer prepare().
    io_uring_sqe* get_sqe() noexcept {
        const unsigned head = barrier::load_acquire(sq_.khead);
        if (sq_.tail - head >= sq_.entries) return nullptr;
        // SQE i starts at sqes + (i << shift) in 64-byte units (liburing's
        // io_uring_sqe_shift): a 128-byte SQE spans two.
        io_uring_sqe* s = &sq_.sqes[(sq_.tail & sq_.mask) << sq_.shift];
        ++sq_.tail;
        // No stale field from the slot's last use; two fixed-size clears keep
        // the usual ring's one inlined 64-byte clear.
        std::memset(s, 0, sizeof *s);
        if (sq_.shift) std::memset(s + 1, 0, sizeof *s);
        return s;
    }

    // Writes a whole SQE from a typed operation (see ops/ops.hpp).  Empty when
    // the SQ is full: submit() and reap, then try again.  A 128-byte operation
    // (a passthrough command) does not compile here: it needs a BigRing.
    template <class Op>
    requires(!detail::BigSqeOp<Op>) Sqe prepare(const Op& op)
    noexcept {
        io_uring_sqe* s = get_sqe();
        if (s) op.prepare(*s);
        return Sqe(s);
    }
    // A 128-byte operation would run into the next SQE here: it needs a
    // BigRing (ring/big_ring.hpp), whose slots are 128 bytes.
    template <detail::BigSqeOp Op>
    Sqe prepare(const Op&) noexcept = delete;
    // 128-byte SQEs and 32-byte CQEs (IORING_SETUP_SQE128 / CQE32): only a BigRing.
    bool big_sqes() const noexcept { return sq_.shift != 0; }
    bool big_cqes() const noexcept { return cq_.shift != 0; }

    // Free SQEs.  A linked chain must fit whole before its first SQE is
    // prepared: the chain ends at the submit boundary, so a chain split across
    // two submits silently loses its link.
    unsigned sq_space_left() const noexcept {
        return sq_.entries - (sq_.tail - barrier::load_acquire(sq_.khead));
    }
    // Returns 0 once at least `n` SQEs are free (a whole linked chain fits),
    // or -errno; it never loops without progress.  Without SQPOLL a full SQ
    // holds only prepared SQEs, so this submits them.  With SQPOLL the poll
    // thread may complete an SQE (and we may reap it) before it moves the SQ
    // head past it: the SQ can look full with fewer than sq_entries() in
    // flight, and this waits for the thread (IORING_ENTER_SQ_WAIT).  Errors:
    //   -EINVAL          n is larger than the SQ;
    //   -EBUSY, -EAGAIN  the kernel takes no SQE until completions are reaped
    //                    (CQ backpressure: kernels before 5.19 refuse to submit
    //                    while completions overflow) or it lacks memory for a
    //                    request: reap, then call again (reserve(n, f) does);
    //   anything else    the ring cannot submit at all and retrying will not
    //                    help (-EEXIST: a SINGLE_ISSUER ring entered from
    //                    another thread; -EBADR: completions were dropped;
    //                    -EBADF, -EPERM from a seccomp filter, ...).
    int reserve(unsigned n) noexcept;
    // As reserve(n), reaping with f(const Completion&) whenever the kernel
    // asks for that (-EBUSY, -EAGAIN).  When there is nothing to reap it waits
    // for a completion a bounded time (kReserveStallWait, with
    // IORING_FEAT_EXT_ARG), and gives up with the kernel's error after
    // kReserveStalls rounds that reaped nothing.  Not from inside
    // for_each_completion (f would run nested).
    template <class F>
    int reserve(unsigned n, F&& f) {
        for (unsigned stalls = 0;;) {
            const int r = reserve(n);
            if (r != -EBUSY && r != -EAGAIN) return r;
            if (for_each_completion(f) > 0) {
                stalls = 0;
                continue;
            }
            if (++stalls > kReserveStalls) return r;
            const int w = wait_for_completion(kReserveStallWait);
            if (w < 0 && w != -ETIME && w != -EINTR && w != -EOPNOTSUPP) return w;
        }
    }
    static constexpr unsigned kReserveStalls = 100;
    static constexpr std::chrono::milliseconds kReserveStallWait{10};
    // reserve(1): room for one SQE.
    int wait_sq_space() noexcept { return reserve(1); }
    // Prepared SQEs the kernel has not consumed yet.
    unsigned sq_pending() const noexcept { return sq_.tail - barrier::load_acquire(sq_.khead); }

    // Publishes the prepared SQEs and tells the kernel.  Returns how many were
    // submitted, or -errno (EBUSY/EAGAIN: reap completions, then retry).  EINTR
    // is retried.  With SQPOLL no system call is made unless the poll thread
    // sleeps, and the count is what the thread has not consumed yet (as
    // liburing reports it): that can include SQEs of an earlier submit whose
    // completions were already reaped, because the thread moves the SQ head
    // only after issuing its whole batch.
    int submit() noexcept { return enter(0, 0); }
    // Also waits until `wait_nr` completions are ready (capped at the CQ
    // size).  It may return with fewer when the kernel ends the wait early (a
    // Timeout operation fired, a signal arrived) but never with none: an EINTR,
    // also the one the kernel hides behind a successful submission count, is
    // waited through while nothing is ready.  Callers reap and loop.
    int submit_and_wait(unsigned wait_nr) noexcept {
        return enter(wait_nr, wait_nr ? IORING_ENTER_GETEVENTS : 0);
    }
    // As submit_and_wait, giving up after `timeout` (measured from the call,
    // signals included) with -ETIME, or with the submitted count when this
    // call submitted something (IORING_FEAT_EXT_ARG, 5.11; else -EOPNOTSUPP).
    int submit_and_wait_for(unsigned wait_nr, std::chrono::nanoseconds timeout) noexcept;
    // The batching wait (IORING_FEAT_MIN_TIMEOUT, 6.12; else -EOPNOTSUPP):
    // returns once wait_nr completions are ready, or once `min_wait` has
    // passed with at least one ready, or, with none, at the first completion
    // after that.  `timeout` as in submit_and_wait_for.  A busy loop trades up
    // to min_wait of latency for fewer, fuller wake-ups; with DEFER_TASKRUN the
    // kernel does not even wake the thread before that.
    int submit_and_wait_batch(unsigned wait_nr, std::chrono::microseconds min_wait,
                              std::chrono::nanoseconds timeout) noexcept;

    // ---- completion --------------------------------------------------------

    unsigned cq_ready() const noexcept { return barrier::load_acquire(cq_.ktail) - *cq_.khead; }

    // Calls f(const Completion&) for every completion available now and hands
    // the slots back to the kernel.  Completions parked in the kernel's
    // overflow list (IORING_SQ_CQ_OVERFLOW) are flushed in and delivered too,
    // so none is lost however far the CQ was overrun.  f may prepare and
    // submit, but must not reap from this ring.  Returns the number delivered.
    template <class F>
    unsigned for_each_completion(F&& f) {
        return for_each_cqe(
            [&](const io_uring_cqe& c) {
                return Completion{c.user_data, c.res, c.flags};
            },
            f);
    }

    // Copies up to out.size() completions and advances past them.
    unsigned copy_completions(std::span<Completion> out) noexcept;

    // Completion work the kernel holds until we enter the ring: overflowed CQEs
    // (these come back only through io_uring_enter(GETEVENTS)) or deferred task
    // work (IORING_SQ_TASKRUN: raised only on rings set up with
    // IORING_SETUP_TASKRUN_FLAG, as single_thread_options() does).
    bool needs_flush() const noexcept {
        return barrier::load_relaxed(sq_.kflags) & (IORING_SQ_CQ_OVERFLOW | IORING_SQ_TASKRUN);
    }
    // An IOPOLL ring without SQPOLL: the kernel posts a completion only when
    // someone polls for it with io_uring_enter(GETEVENTS), so every reap that
    // finds the CQ empty and every submit enters (liburing's INT_FLAG_CQ_ENTER).
    bool polls_on_reap() const noexcept {
        return (setup_flags_ & (IORING_SETUP_IOPOLL | IORING_SETUP_SQPOLL)) == IORING_SETUP_IOPOLL;
    }
    int flush_overflow() noexcept;
    // Waits up to `timeout` for one completion without submitting anything
    // (a chain being prepared is not cut in two).  0 or -errno (-ETIME when
    // none came; -EOPNOTSUPP without IORING_FEAT_EXT_ARG, 5.11).
    int wait_for_completion(std::chrono::nanoseconds timeout) noexcept;

    // ---- registration ----------------------------------------------------------
    // Each throws RingError naming the call on failure, except update_files()
    // and register_raw(), which return the kernel's -errno: they run between
    // operations in a loop, where the caller acts on the result.

    void register_files(std::span<const int> fds);
    // A table of `count` empty slots, for direct opens and accepts (5.19).
    void register_files_sparse(unsigned count);
    // Replaces slots [offset, offset+fds.size()); -1 empties a slot.  Returns the kernel's result.
    int update_files(unsigned offset, std::span<const int> fds) noexcept;
    void unregister_files();
    void register_buffers(std::span<const iovec> buffers);
    void unregister_buffers();
    void register_eventfd(int eventfd);
    void unregister_eventfd();
    // Caps the kernel's io-wq worker threads (5.15).  io-wq belongs to the
    // calling thread and serves all of its rings, so the limit does too.
    // `bounded`: regular-file and block I/O, and requests without a file yet
    // (opens, creates, statx); `unbounded`: reads and writes that may wait
    // for ever (pipes, sockets, ttys).  0 leaves a kind as it is.  Returns
    // the previous limits {bounded, unbounded}; throws RingError.
    std::array<unsigned, 2> set_iowq_max_workers(unsigned bounded, unsigned unbounded);
    OpcodeSupport probe_opcodes() const;
    // Any IORING_REGISTER_* call; returns the kernel's result (-errno).
    int register_raw(unsigned opcode, const void* arg, unsigned nr_args) const noexcept;

    // ---- counters ------------------------------------------------------------

    // io_uring_enter calls this ring made (EINTR retries included): the real
    // system-call count of the submit and reap paths.
    std::uint64_t enter_calls() const noexcept { return enter_calls_; }

private:
    friend class BigRing;
    // Only BigRing sets up the 128-byte/32-byte layout.
    struct BigLayout {};
    Ring(unsigned entries, const RingOptions& options, BigLayout);
    void setup(unsigned entries, const RingOptions& options, std::uint32_t layout_flags);

    // The reaping loop behind for_each_completion: `copy` turns the CQE into
    // what f receives (read before the head moves past it), then f runs.
    template <class Copy, class F>
    unsigned for_each_cqe(Copy&& copy, F&& f) {
        unsigned total = 0;
        for (bool entered = false;;) {
            unsigned head = *cq_.khead;
            const unsigned tail = barrier::load_acquire(cq_.ktail);
            for (; head != tail; ++head) {
                const auto done = copy(cq_.cqes[(head & cq_.mask) << cq_.shift]);
                barrier::store_release(cq_.khead, head + 1);
                f(done);
                ++total;
            }
            if (!peek_needs_enter(total, entered)) return total;
            entered = true;
            if (flush_overflow() < 0) return total;
            if (cq_ready() == 0) return total;
        }
    }

    struct SubmissionQueue {
        unsigned* khead = nullptr;
        unsigned* ktail = nullptr;
        unsigned* kflags = nullptr;
        unsigned* kdropped = nullptr;
        unsigned mask = 0;
        unsigned entries = 0;
        unsigned tail = 0;   // our next SQE to hand out; published on submit
        unsigned shift = 0;  // 1 with 128-byte SQEs: SQE i is at sqes[i << shift]
        io_uring_sqe* sqes = nullptr;
        void* ring_ptr = nullptr;
        std::size_t ring_size = 0;
        std::size_t sqes_size = 0;
    };
    struct CompletionQueue {
        unsigned* khead = nullptr;
        unsigned* ktail = nullptr;
        unsigned* koverflow = nullptr;
        unsigned mask = 0;
        unsigned entries = 0;
        unsigned shift = 0;  // 1 with 32-byte CQEs: CQE i is at cqes[i << shift]
        io_uring_cqe* cqes = nullptr;
        void* ring_ptr = nullptr;  // == sq.ring_ptr with IORING_FEAT_SINGLE_MMAP
        std::size_t ring_size = 0;
    };

    // After a pass over the CQ that delivered `delivered`: enter to flush
    // overflowed completions (always: none may wait there), or, once and only
    // when the pass found nothing (as liburing's peek), to run deferred
    // completion work (IORING_SQ_TASKRUN) or poll an IOPOLL ring.  A reaper
    // that got completions comes back anyway; entering then would only add
    // system calls.
    bool peek_needs_enter(unsigned delivered, bool entered) const noexcept {
        const unsigned flags = barrier::load_relaxed(sq_.kflags);
        if (flags & IORING_SQ_CQ_OVERFLOW) return true;
        return delivered == 0 && !entered && ((flags & IORING_SQ_TASKRUN) || polls_on_reap());
    }

    struct TimedWait;  // a deadline and the EXT_ARG block that carries it (enter.cpp)
    static constexpr int kNotEntered = -0x7fff'ffff;
    int enter(unsigned wait_nr, unsigned flags, TimedWait* timed = nullptr) noexcept;
    [[gnu::cold, gnu::noinline]] int enter_slow(int r, unsigned to_submit, unsigned wait_nr,
                                                unsigned flags, TimedWait* timed) noexcept;
    void release() noexcept;
    // The one place that enters the kernel: counts the call and uses the
    // registered ring fd only on the thread whose table holds it.
    int enter_raw(unsigned to_submit, unsigned wait_nr, unsigned flags, const void* arg,
                  std::size_t argsz) noexcept {
        ++enter_calls_;
        if (enter_flags_ && detail::this_thread_token() == owner_)
            return sys::io_uring_enter(enter_fd_, to_submit, wait_nr, flags | enter_flags_, arg,
                                       argsz);
        return sys::io_uring_enter(fd_, to_submit, wait_nr, flags, arg, argsz);
    }

    int fd_ = -1;
    int enter_fd_ = -1;         // the registered index when the ring fd is registered
    unsigned enter_flags_ = 0;  // IORING_ENTER_REGISTERED_RING when it is
    std::uint64_t owner_ = 0;   // detail::this_thread_token() of the registering thread
    std::uint32_t features_ = 0;
    std::uint32_t setup_flags_ = 0;
    std::uint64_t enter_calls_ = 0;
    SubmissionQueue sq_;
    CompletionQueue cq_;
};

}  // namespace uringkit
