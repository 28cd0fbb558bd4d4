// Operations on the ring's own requests rather than on a file: nop,
// timeouts, cancellation, poll and epoll_wait, and messages to another ring.
#pragma once

#include "uringkit/cxx20.hpp"
#include "uringkit/ops/prep.hpp"
#include "uringkit/sys/uapi.hpp"

#include <linux/time_types.h>
#include <sys/epoll.h>

#include <bit>
#include <cstdint>

namespace uringkit::op {

// Completes at once with res 0: measures the ring's own cost.
struct Nop {
    static constexpr std::uint8_t code = IORING_OP_NOP;
    void prepare(io_uring_sqe& s) const noexcept { s.opcode = code; }
};

// Completes with -ETIME when `ts` passes, or with 0 once `count` other
// completions have been posted (count 0: only the time counts).
class Timeout {
public:
    static constexpr std::uint8_t code = IORING_OP_TIMEOUT;
    // Explicit: a pointer is not a timeout (submit(&ts) must not compile).
    explicit Timeout(const __kernel_timespec* ts, unsigned count = 0) noexcept
        : ts_(ts), count_(count) {}
    Timeout& absolute() noexcept {
        flags_ |= IORING_TIMEOUT_ABS;
        return *this;
    }
    Timeout& flags(unsigned f) noexcept {
        flags_ |= f;
        return *this;
    }
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = -1;
        s.addr = reinterpret_cast<std::uintptr_t>(ts_);
        s.len = 1;
        s.off = count_;
        s.timeout_flags = flags_;
    }

private:
    const __kernel_timespec* ts_;
    unsigned count_;
    unsigned flags_ = 0;
};

// Removes a pending request by its user_data: a Timeout (TimeoutRemove) or
// a PollAdd (PollRemove), which encode it alike.
template <std::uint8_t Code>
class BasicRemove {
public:
    static constexpr std::uint8_t code = Code;
    explicit BasicRemove(std::uint64_t target) noexcept : target_(target) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = -1;
        s.addr = target_;
    }

private:
    std::uint64_t target_;
};
// Removes a pending Timeout by its user_data.
using TimeoutRemove = BasicRemove<IORING_OP_TIMEOUT_REMOVE>;

// Linked after an SQE (which carries .link()): cancels it if it has not
// completed when `ts` passes; that SQE then completes with -ECANCELED and this
// one with -ETIME (or -EALREADY/-ECANCELED when it lost the race).
class LinkTimeout {
public:
    static constexpr std::uint8_t code = IORING_OP_LINK_TIMEOUT;
    explicit LinkTimeout(const __kernel_timespec* ts) noexcept : ts_(ts) {}
    LinkTimeout& absolute() noexcept {
        flags_ |= IORING_TIMEOUT_ABS;
        return *this;
    }
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = -1;
        s.addr = reinterpret_cast<std::uintptr_t>(ts_);
        s.len = 1;
        s.timeout_flags = flags_;
    }

private:
    const __kernel_timespec* ts_;
    unsigned flags_ = 0;
};

// Cancels requests: by user_data (default), or .all() matches, or every
// request on a file (.file()), or .any().  res: 0 found and cancelled, -ENOENT
// none found, -EALREADY already running; with .all(), the number cancelled.
class AsyncCancel {
public:
    static constexpr std::uint8_t code = IORING_OP_ASYNC_CANCEL;
    explicit AsyncCancel(std::uint64_t target) noexcept : target_(target) {}
    static AsyncCancel file(File f) noexcept {
        AsyncCancel c(0);
        c.file_ = f;
        c.flags_ = IORING_ASYNC_CANCEL_FD | (f.fixed() ? IORING_ASYNC_CANCEL_FD_FIXED : 0);
        return c;
    }
    static AsyncCancel any() noexcept {
        AsyncCancel c(0);
        c.flags_ = IORING_ASYNC_CANCEL_ANY;
        return c;
    }
    AsyncCancel& all() noexcept {
        flags_ |= IORING_ASYNC_CANCEL_ALL;
        return *this;
    }
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        // A fixed target is named by cancel_flags (FD_FIXED), not by IOSQE_FIXED_FILE.
        s.fd = file_.raw();
        s.addr = target_;
        s.cancel_flags = flags_;
    }

private:
    std::uint64_t target_;
    File file_ = Fd{-1};
    std::uint32_t flags_ = 0;
};

// The SQE's poll32_events as the kernel reads it: io_uring_sqe's layout
// puts the two 16-bit halves of the mask in little-endian order, so a
// big-endian host swaps them (liburing's __swahw32 in io_uring_prep_poll_add).
constexpr std::uint32_t poll32_events(std::uint32_t events,
                                      std::endian order = std::endian::native) noexcept {
    return order == std::endian::big ? (events << 16) | (events >> 16) : events;
}

// poll(2) for `events` (POLLIN...); .multishot() (5.13) re-arms itself.
class PollAdd {
public:
    static constexpr std::uint8_t code = IORING_OP_POLL_ADD;
    PollAdd(File f, unsigned events) noexcept : f_(f), events_(events) {}
    PollAdd& multishot() noexcept {
        len_ = IORING_POLL_ADD_MULTI;
        return *this;
    }
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.poll32_events = poll32_events(events_);
        s.len = len_;
    }

private:
    File f_;
    unsigned events_;
    std::uint32_t len_ = 0;
};

using PollRemove = BasicRemove<IORING_OP_POLL_REMOVE>;

// epoll_wait(2) on epoll instance `epfd` (IORING_OP_EPOLL_WAIT, 6.15): up
// to `maxevents` ready events into `events`; it waits (without a thread)
// until at least one is ready.  res: the number of events written.
class EpollWait {
public:
    static constexpr std::uint8_t code = sys::opcode::epoll_wait;
    EpollWait(File epfd, epoll_event* events, unsigned maxevents) noexcept
        : f_(epfd), events_(events), max_(maxevents) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.addr = reinterpret_cast<std::uintptr_t>(events_);
        s.len = max_;
    }

private:
    File f_;
    epoll_event* events_;
    unsigned max_;
};

// IORING_OP_MSG_RING (5.18): posts a completion on another ring, with `res`
// = value and the user_data given.  How one thread's loop wakes another's
// (async/mailbox.hpp); the sender gets its own completion (res 0 or -errno).
class MsgRing {
public:
    static constexpr std::uint8_t code = IORING_OP_MSG_RING;
    // `target_ring_fd`: the receiving Ring's fd() (its real descriptor, even
    // when that ring registered it).
    MsgRing(int target_ring_fd, std::uint32_t value, std::uint64_t user_data) noexcept
        : fd_(target_ring_fd), value_(value), user_data_(user_data) {}
    // The target's CQE carries these flags (IORING_MSG_RING_FLAGS_PASS,
    // 6.3; -EINVAL before): what a ring that is not ours can make another
    // ring's completions look like, and so what a consumer must not trust.
    MsgRing& pass_flags(std::uint32_t cqe_flags) noexcept {
        pass_ = true;
        cqe_flags_ = cqe_flags;
        return *this;
    }
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = fd_;
        s.addr = 0;  // IORING_MSG_DATA
        s.len = value_;
        s.off = user_data_;
        if (pass_) {
            s.msg_ring_flags = IORING_MSG_RING_FLAGS_PASS;
            s.file_index = cqe_flags_;
        }
    }

private:
    int fd_;
    std::uint32_t value_;
    std::uint64_t user_data_;
    bool pass_ = false;
    std::uint32_t cqe_flags_ = 0;
};

}  // namespace uringkit::op
