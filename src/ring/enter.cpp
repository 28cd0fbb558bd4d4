// Submission and waiting (liburing's queue.c): io_uring_enter and what its
// results mean, the timed and batching waits, room in the SQ, and copying
// completions out of the CQ.
#include "uringkit/ring/ring.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>

namespace uringkit {

// A relative wait timeout carried through IORING_ENTER_EXT_ARG, with the
// absolute deadline it stands for: when a signal interrupts the wait, the next
// enter waits only for what is left, so periodic signals cannot extend (or,
// faster than the timeout, livelock) the wait.
struct Ring::TimedWait {
    std::chrono::steady_clock::time_point deadline;
    __kernel_timespec ts{};
    sys::getevents_arg arg{};  // arm() fills all but min_wait_usec (0 unless batching)

    // Sets the timeout to what is left (zero once the deadline has passed, so
    // a zero timeout still submits and polls once); false when nothing is left.
    bool arm() noexcept {
        auto left = deadline - std::chrono::steady_clock::now();
        const bool some_left = left > std::chrono::nanoseconds::zero();
        if (!some_left) left = std::chrono::nanoseconds::zero();
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
        ts.tv_sec = static_cast<long long>(ns / 1'000'000'000);
        ts.tv_nsec = static_cast<long long>(ns % 1'000'000'000);
        arg.sigmask = 0;
        arg.sigmask_sz = _NSIG / 8;
        arg.ts = reinterpret_cast<std::uintptr_t>(&ts);
        return some_left;
    }
};

int Ring::enter(unsigned wait_nr, unsigned flags, TimedWait* timed) noexcept {
    // Publish everything prepared since the last call with one release store:
    // the kernel's acquire load of the tail then sees whole SQEs.
    if (barrier::load_relaxed(sq_.ktail) != sq_.tail) barrier::store_release(sq_.ktail, sq_.tail);
    const unsigned to_submit = sq_.tail - barrier::load_acquire(sq_.khead);

    bool need_enter = (flags & IORING_ENTER_GETEVENTS) != 0;
    const bool sqpoll = setup_flags_ & IORING_SETUP_SQPOLL;
    if (sqpoll) {
        // The poll thread consumes the SQ by itself; enter only to wake it.
        // The full fence orders our tail store before the NEED_WAKEUP load
        // (see barrier.hpp): without it the thread can sleep unseen.
        if (to_submit) {
            barrier::full_fence();
            if (barrier::load_relaxed(sq_.kflags) & IORING_SQ_NEED_WAKEUP) {
                flags |= IORING_ENTER_SQ_WAKEUP;
                need_enter = true;
            }
        }
    } else if (to_submit) {
        need_enter = true;
    }
    if (!(flags & IORING_ENTER_GETEVENTS) && (needs_flush() || polls_on_reap())) {
        flags |= IORING_ENTER_GETEVENTS;
        need_enter = true;
    }
    if (!need_enter) return static_cast<int>(to_submit);
    if (timed) return enter_slow(kNotEntered, to_submit, wait_nr, flags, timed);

    // The usual case, kept short: one enter that submits everything and, when
    // asked to, returns with wait_nr completions ready.
    const int r = enter_raw(to_submit, wait_nr, flags, nullptr, 0);
    if (r >= 0 && (sqpoll || static_cast<unsigned>(r) == to_submit) &&
        (!(flags & IORING_ENTER_GETEVENTS) || cq_ready() >= std::min(wait_nr, cq_.entries)))
        return sqpoll ? static_cast<int>(to_submit) : r;
    return enter_slow(r, to_submit, wait_nr, flags, nullptr);
}

// Everything but the usual case: EINTR, a wait cut short by a signal, a
// partial submission, an error, and timed waits.  `r` is the result of the
// enter already made, or kNotEntered.
int Ring::enter_slow(int r, unsigned to_submit, unsigned wait_nr, unsigned flags,
                     TimedWait* timed) noexcept {
    const bool sqpoll = setup_flags_ & IORING_SETUP_SQPOLL;
    const bool waiting = (flags & IORING_ENTER_GETEVENTS) && wait_nr;
    int submitted = 0;  // by this call, over all its enters
    for (bool first = true;; first = false) {
        if (r == kNotEntered) {
            const void* arg = nullptr;
            std::size_t argsz = 0;
            if (timed) {
                if (!timed->arm() && !first) return submitted ? submitted : -ETIME;
                arg = &timed->arg;
                argsz = sizeof timed->arg;
            }
            r = enter_raw(to_submit, wait_nr, flags, arg, argsz);
        }
        if (r == -EINTR) {
            // A signal before anything was submitted, or during the wait of a
            // call with nothing to submit: go again with what is left.
            if (!sqpoll) to_submit = sq_.tail - barrier::load_acquire(sq_.khead);
            r = kNotEntered;
            continue;
        }
        if (r < 0) return submitted ? submitted : r;
        submitted += sqpoll ? static_cast<int>(to_submit) : r;
        // The kernel skips the wait when it submitted fewer than asked (an
        // SQE failed early): report that as is, waiting could never end.
        if (!sqpoll && static_cast<unsigned>(r) != to_submit) return submitted;
        // The kernel also ends a wait early, with fewer than wait_nr ready,
        // when a Timeout operation fires (its CQE is then ready: return, so a
        // Timeout works as a wake-up) or when a signal arrives (it still
        // reports the submitted count).  Wait again, submitting nothing, only
        // when nothing at all is ready: never return from a wait empty-handed.
        if (!waiting || cq_ready() > 0) return submitted;
        to_submit = 0;
        flags &= ~IORING_ENTER_SQ_WAKEUP;
        r = kNotEntered;
    }
}

int Ring::reserve(unsigned n) noexcept {
    if (n > sq_.entries) return -EINVAL;
    const bool sqpoll = setup_flags_ & IORING_SETUP_SQPOLL;
    while (sq_space_left() < n) {
        const unsigned pending = sq_pending();
        const int r = submit();
        if (r < 0) return r;
        if (!sqpoll) {
            // submit() hands the kernel everything prepared; if it took none,
            // it is out of requests until completions are reaped.
            if (sq_pending() >= pending) return -EAGAIN;
            continue;
        }
        if (sq_space_left() >= n) break;
        // Sleeps until the poll thread has room for at least one SQE; it
        // moves the head past its whole batch at once, so this ends.
        const int w = enter_raw(0, 0, IORING_ENTER_SQ_WAIT, nullptr, 0);
        if (w < 0 && w != -EINTR) return w;
    }
    return 0;
}

int Ring::wait_for_completion(std::chrono::nanoseconds timeout) noexcept {
    if (cq_ready() > 0) return 0;
    if (!(features_ & IORING_FEAT_EXT_ARG)) return -EOPNOTSUPP;
    TimedWait timed;
    timed.deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        timed.arm();
        const int r = enter_raw(0, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &timed.arg,
                                sizeof timed.arg);
        if (r >= 0 || cq_ready() > 0) return 0;
        if (r != -EINTR) return r;
        if (std::chrono::steady_clock::now() >= timed.deadline) return -ETIME;
    }
}

int Ring::submit_and_wait_for(unsigned wait_nr, std::chrono::nanoseconds timeout) noexcept {
    if (!(features_ & IORING_FEAT_EXT_ARG)) return -EOPNOTSUPP;
    TimedWait timed;
    timed.deadline = std::chrono::steady_clock::now() + timeout;
    return enter(wait_nr, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &timed);
}

int Ring::submit_and_wait_batch(unsigned wait_nr, std::chrono::microseconds min_wait,
                                std::chrono::nanoseconds timeout) noexcept {
    if (!(features_ & IORING_FEAT_MIN_TIMEOUT) || min_wait.count() <= 0 ||
        min_wait.count() > UINT32_MAX)
        return -EOPNOTSUPP;
    TimedWait timed;
    // Without a timeout past the batch wait the kernel ends every wait at the
    // batch wait, events or not: an idle ring would wake that often.
    timed.deadline = std::chrono::steady_clock::now() +
                     std::max<std::chrono::nanoseconds>(timeout, 2 * min_wait);
    timed.arg.min_wait_usec = static_cast<std::uint32_t>(min_wait.count());
    return enter(wait_nr, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &timed);
}

unsigned Ring::copy_completions(std::span<Completion> out) noexcept {
    unsigned n = 0;
    for (bool entered = false;;) {
        unsigned head = *cq_.khead;
        const unsigned tail = barrier::load_acquire(cq_.ktail);
        for (; head != tail && n < out.size(); ++head, ++n) {
            const io_uring_cqe& c = cq_.cqes[(head & cq_.mask) << cq_.shift];
            out[n] = Completion{c.user_data, c.res, c.flags};
        }
        barrier::store_release(cq_.khead, head);
        if (n == out.size() || !peek_needs_enter(n, entered)) return n;
        entered = true;
        if (flush_overflow() < 0 || cq_ready() == 0) return n;
    }
}

int Ring::flush_overflow() noexcept {
    // Overflowed CQEs come back only through io_uring_enter(GETEVENTS); submit
    // nothing here, so a chain being prepared is not cut in two.
    int r;
    do {
        r = enter_raw(0, 0, IORING_ENTER_GETEVENTS, nullptr, 0);
    } while (r == -EINTR);
    return r;
}

}  // namespace uringkit
