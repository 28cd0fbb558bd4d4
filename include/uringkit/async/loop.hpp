// An event loop over one Ring, and the awaitables that make ring operations
// look like calls.
//
//     async::Loop loop(ring);
//     loop.spawn(echo(loop, fd));                 // runs concurrently, owned by the loop
//     async::Result r = loop.block_on(copy(loop));  // runs until this task is done
//
//     async::Task<void> echo(async::Loop& loop, int fd) {
//         char buf[4096];
//         for (;;) {
//             async::Result n = co_await loop.recv(Fd{fd}, buf, sizeof buf);
//             if (n.res <= 0) break;
//             if (!(co_await loop.send_all(Fd{fd}, buf, n.res)).ok()) break;
//         }
//         co_await loop.close(Fd{fd});
//     }
//
// Every awaitable gives back a Result (the kernel's res and flags); nothing
// throws on the I/O path.  SQEs prepared while the loop handles completions
// go to the kernel together in the next io_uring_enter.
//
// Lifetime rules (docs/library.md, "The async layer"):
//  - An operation's awaiter and the memory it names live until the
//    operation's final completion.  A frame is destroyed only by the loop,
//    and the loop first cancels and drains every operation it started: when
//    an exception ends run()/block_on(), and in ~Loop().
//  - Multishot operations are reachable only through streams (RecvStream,
//    AcceptStream) that cancel and drain when destroyed; submit() refuses a
//    multishot SQE with -EINVAL, and awaits a zero-copy send until its
//    notification.
//  - The loop tags its user_data; a completion it did not ask for (another
//    user of a shared ring) is counted and handed to route_foreign(), never
//    dereferenced.
//  - Nothing on the completion path throws: an SQE that does not fit waits
//    in the loop's queue for the next turn, a chain waits whole.  Out of
//    memory, it waits there too and run() ends with std::bad_alloc after
//    draining; a RecvStream whose queue cannot grow ends with -ENOMEM.
//  - Provided buffers own themselves: a RecvStream's Chunk gives its buffer
//    back when it goes (ring/buffer_ring.hpp, ProvidedBuffer, has its rules).
//  - The public face is Loop; what awaiters and streams share is
//    detail::LoopCore (loop_core.hpp), reached through detail::core(loop).
#pragma once

#include "uringkit/async/loop_core.hpp"

#include <chrono>
#include <cstdint>
#include <stop_token>
#include <string>
#include <utility>

namespace uringkit::async {

// "ftruncate: not supported by this kernel (io_uring has it from Linux 6.9)":
// what a -EOPNOTSUPP refusal of `opcode` means, for an error message.
std::string unsupported(std::uint8_t opcode);

namespace detail {
template <class Op>
struct OpAwaiter;
template <bool Linked, class... Ops>
struct ChainAwaiter;
template <class Op>
struct TimedAwaiter;
template <class Op>
struct StoppableAwaiter;
template <bool Write>
struct FixedAwaiter;
struct SendAllAwaiter;
}  // namespace detail

// The event loop: what a program calls.  Its machinery (slots, the queue of
// SQEs waiting for room, dispatch) is detail::LoopCore, which only the
// awaiters and streams reach.
class Loop : private detail::LoopCore {
public:
    // The ring must outlive the loop and be used only from this thread.
    explicit Loop(Ring& ring) : LoopCore(ring) {}
    // ~Loop() cancels and drains every operation still in flight, then
    // destroys the spawned tasks that have not finished.

    using LoopCore::ring;
    // Waits through `wait` (which must outlive the loop) instead of a plain
    // submit_and_wait(1): the caller reports load to it between turns.
    using LoopCore::set_wait;

    // Starts `task` at once (up to its first suspension) and keeps it until
    // it finishes.  While the loop drains (a destructor in a frame it
    // destroys), the task is destroyed unstarted: nothing it issued could
    // reach the kernel.  An exception it lets escape ends the loop: run() and
    // block_on() cancel and drain everything in flight, destroy every
    // unfinished task, and rethrow it.
    using LoopCore::spawn;
    // Handles completions until every spawned task has finished, or stop().
    using LoopCore::run;
    // Submits what is prepared, waits for at least one completion and handles
    // the batch: one turn of run(), for callers with their own outer loop.
    using LoopCore::run_once;
    // Asks run() to return after the current batch of completions.
    using LoopCore::stop;
    // Runs `task` (and everything spawned meanwhile) until it finishes; returns its value.
    using LoopCore::block_on;
    // Tasks spawned and not finished yet.
    using LoopCore::live_tasks;
    // This loop's SQEs whose final completion has not been handled yet.
    using LoopCore::in_flight;

    // Completions on this ring whose user_data is not this loop's (another
    // user of a shared ring): counted, and handed to the handler if one is
    // set (route_foreign(handler, context)).
    using LoopCore::foreign_completions;
    using LoopCore::ForeignHandler;
    using LoopCore::route_foreign;

    // ---- awaitables -------------------------------------------------------
    // Any typed operation from ops/: co_await loop.submit(op) -> Result, at its
    // final completion.  A link the op sets itself (IOSQE_IO_LINK, HARDLINK)
    // and IOSQE_CQE_SKIP_SUCCESS are cleared: a link would chain another
    // task's SQE; use chain().  A multishot SQE is refused with -EINVAL (use
    // a stream).  While the loop drains (an exception ends run(), ~Loop()),
    // every awaitable resumes at once with -ECANCELED.
    template <class Op>
    detail::OpAwaiter<Op> submit(const Op& op) noexcept {
        return {this, op};
    }
    // The same, cancelled when `token` is stopped (res -ECANCELED; at once,
    // without an SQE, if it already is).  Stop it on this loop's thread.
    template <class Op>
    detail::StoppableAwaiter<Op> submit(const Op& op, std::stop_token token) noexcept {
        return {this, op, std::move(token)};
    }
    // Linked SQEs, one submission: each runs only if the one before succeeded
    // (a short read or write counts as a failure; the rest complete with
    // -ECANCELED).  -> std::array<Result, N>.
    template <class... Ops>
    detail::ChainAwaiter<true, Ops...> chain(const Ops&... ops) noexcept {
        return {this, ops...};
    }
    // Independent SQEs, one submission, awaited together -> std::array<Result, N>.
    template <class... Ops>
    detail::ChainAwaiter<false, Ops...> batch(const Ops&... ops) noexcept {
        return {this, ops...};
    }
    // The operation with a deadline (a linked timeout, one submission): res
    // -ETIME when the deadline passed first, distinct from -ECANCELED.
    template <class Op>
    detail::TimedAwaiter<Op> with_timeout(const Op& op, std::chrono::nanoseconds timeout) noexcept {
        return {this, op, timeout};
    }
    // The same with an absolute deadline on std::chrono::steady_clock
    // (CLOCK_MONOTONIC, which IORING_TIMEOUT_ABS uses).
    template <class Op>
    detail::TimedAwaiter<Op> with_deadline(
        const Op& op, std::chrono::steady_clock::time_point deadline) noexcept {
        return {this, op, deadline.time_since_epoch(), true};
    }
    // A fire-and-forget SQE whose result nobody reads: for operations that
    // name no memory (cancels, closes, msg_ring).  Counted in in_flight().
    using LoopCore::post;

    detail::OpAwaiter<op::Nop> nop() noexcept;
    detail::OpAwaiter<op::Read> read(File f, void* buf, std::uint32_t len,
                                     std::uint64_t off) noexcept;
    detail::OpAwaiter<op::Write> write(File f, const void* buf, std::uint32_t len,
                                       std::uint64_t off) noexcept;
    detail::OpAwaiter<op::Recv> recv(File f, void* buf, std::uint32_t len, int flags = 0) noexcept;
    detail::OpAwaiter<op::Send> send(File f, const void* buf, std::uint32_t len,
                                     int flags = MSG_NOSIGNAL) noexcept;
    detail::OpAwaiter<op::Accept> accept(File listener, int flags = SOCK_CLOEXEC) noexcept;
    detail::OpAwaiter<op::Connect> connect(File f, const sockaddr* addr, socklen_t len) noexcept;
    detail::OpAwaiter<op::Close> close(File f) noexcept;
    detail::OpAwaiter<op::Fsync> fsync(File f) noexcept;
    // Registered buffers lent by value (async/fixed_buffers.hpp): `count`
    // buffers of `size` bytes, owned by this loop and registered with its
    // ring (one pool per ring).  Throws RingError when the kernel refuses
    // (RLIMIT_MEMLOCK before 5.12, a table already registered).
    using LoopCore::register_fixed_buffers;
    // The pool, or nullptr before register_fixed_buffers().
    using LoopCore::fixed_buffers;
    // -> FixedResult{Result, FixedBuffer}: the buffer comes back with the result.
    detail::FixedAwaiter<false> read_fixed(File f, FixedBuffer buf, std::uint64_t offset) noexcept;
    detail::FixedAwaiter<true> write_fixed(File f, FixedBuffer buf, std::uint64_t offset) noexcept;
    // Cancels every pending operation on `f`; res: how many (or -errno).
    detail::OpAwaiter<op::AsyncCancel> cancel_fd(File f) noexcept;
    // Suspends for `d` (res 0 on time; -ECANCELED if cancelled).
    Task<Result> sleep(std::chrono::nanoseconds d);
    // Sends all `len` bytes, continuing after short sends: res len, or the
    // first error (-EPIPE for a send of 0 bytes).  One awaiter in the caller's
    // frame, re-issued from its completion: no Task of its own per send.
    detail::SendAllAwaiter send_all(File f, const void* buf, std::size_t len) noexcept;

    // Provided buffers given back so far, by streams' Chunks and
    // ProvidedBuffer handles made through this loop (every pool).
    using LoopCore::buffers_returned;

private:
    friend detail::LoopCore& detail::core(Loop& loop) noexcept;
};

namespace detail {
inline LoopCore& core(Loop& loop) noexcept {
    return loop;
}
}  // namespace detail

}  // namespace uringkit::async

#include "uringkit/async/awaiters.hpp"
#include "uringkit/async/fixed_buffers.hpp"
