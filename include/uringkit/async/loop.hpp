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
//    in the loop's queue for the next turn, a chain waits whole.
#pragma once

#include "uringkit/async/batch_wait.hpp"
#include "uringkit/async/result.hpp"
#include "uringkit/async/task.hpp"
#include "uringkit/cxx20.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/buffer_ring.hpp"
#include "uringkit/ring/ring.hpp"

#include <array>
#include <cerrno>
#include <chrono>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <stop_token>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace uringkit::async {

class Loop;
class FixedBuffer;
class FixedBufferPool;

// Something that puts SQEs in the ring and hears their completions: the
// base of every awaiter and stream.
struct Pending {
    // Each completion of an SQE whose user_data came from Loop::track(this).
    void (*complete)(Pending* self, const Completion& c) noexcept = nullptr;
    // Writes the `sqes` consecutive SQEs (a chain is placed whole): called by
    // Loop::issue() at once, or at the next turn when the SQ had no room.
    void (*fill)(Pending* self, io_uring_sqe* const* sqes) noexcept = nullptr;
    Pending* next_deferred = nullptr;
    std::uint8_t sqes = 1;
    bool deferred = false;
};

// A stream waiting for a provided buffer to come back (its recv ended with
// -ENOBUFS): woken by Loop::recycle() on the same BufferRing.
struct BufferWaiter {
    void (*wake)(BufferWaiter* self) noexcept = nullptr;
    BufferWaiter* next_waiter = nullptr;
    const BufferRing* pool = nullptr;
    bool waiting = false;
};

// "ftruncate: not supported by this kernel (io_uring has it from Linux 6.9)":
// what a -EOPNOTSUPP refusal of `opcode` means, for an error message.
std::string unsupported(std::uint8_t opcode);

namespace detail {

// Turns a refused SQE into a NOP that keeps its user_data.
void make_nop(io_uring_sqe& s) noexcept;
// Clears the SQE flags that reach past the SQE itself: a link
// (IOSQE_IO_LINK, IOSQE_IO_HARDLINK) would hold another task's next SQE
// behind this one, and IOSQE_CQE_SKIP_SUCCESS would leave its awaiter
// without a completion.  Links exist only inside Loop::chain().
inline void confine(io_uring_sqe& s) noexcept {
    s.flags &=
        static_cast<std::uint8_t>(~(IOSQE_IO_LINK | IOSQE_IO_HARDLINK | IOSQE_CQE_SKIP_SUCCESS));
}
// The most SQEs one chain may hold.
inline constexpr std::size_t kMaxChain = 16;

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

class Loop {
public:
    // The ring must outlive the loop and be used only from this thread.
    explicit Loop(Ring& ring);
    Loop(const Loop&) = delete;
    Loop& operator=(const Loop&) = delete;
    // Cancels and drains every operation still in flight, then destroys the
    // spawned tasks that have not finished.
    ~Loop();

    Ring& ring() noexcept { return *ring_; }
    // Waits through `wait` (which must outlive the loop) instead of a plain
    // submit_and_wait(1): the caller reports load to it between turns.
    void set_wait(BatchWait* wait) noexcept { wait_ = wait; }

    // Starts `task` at once (up to its first suspension) and keeps it until
    // it finishes.  While the loop drains (a destructor in a frame it
    // destroys), the task is destroyed unstarted: nothing it issued could
    // reach the kernel.  An exception it lets escape ends the loop: run() and
    // block_on() cancel and drain everything in flight, destroy every
    // unfinished task, and rethrow it.
    void spawn(Task<void> task);
    // Handles completions until every spawned task has finished, or stop().
    void run();
    // Submits what is prepared, waits for at least one completion and handles
    // the batch: one turn of run(), for callers with their own outer loop.
    void run_once();
    // Asks run() to return after the current batch of completions.
    void stop() noexcept { stopped_ = true; }
    // Runs `task` (and everything spawned meanwhile) until it finishes; returns its value.
    template <class T>
    T block_on(Task<T> task);
    // Tasks spawned and not finished yet.
    std::size_t live_tasks() const noexcept { return live_; }
    // This loop's SQEs whose final completion has not been handled yet.
    std::size_t in_flight() const noexcept { return in_flight_; }

    // Completions on this ring whose user_data is not this loop's (another
    // user of a shared ring): counted, and handed to `handler` if one is set.
    using ForeignHandler = void (*)(void* context, const Completion& c) noexcept;
    void route_foreign(ForeignHandler handler, void* context) noexcept {
        foreign_handler_ = handler;
        foreign_context_ = context;
    }
    std::uint64_t foreign_completions() const noexcept { return foreign_; }

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
    template <class Op>
    void post(const Op& op) noexcept {
        io_uring_sqe s{};
        op.prepare(s);
        detail::confine(s);
        s.user_data = track(nullptr);
        post_sqe(s);
    }

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
    FixedBufferPool& register_fixed_buffers(unsigned count, std::size_t size);
    // The pool, or nullptr before register_fixed_buffers().
    FixedBufferPool* fixed_buffers() const noexcept { return fixed_.get(); }
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

    // Hands provided buffer `id` back to the kernel and re-arms the streams
    // that were waiting for one of `pool`'s buffers.
    void recycle(BufferRing& pool, std::uint16_t id) noexcept {
        pool.recycle(id);
        ++buffers_returned_;
        if (buffer_waiters_) wake_buffer_waiters(pool);  // inline: on every request's path
    }
    // Provided buffers handed back through recycle() so far (every pool).
    std::uint64_t buffers_returned() const noexcept { return buffers_returned_; }

    // ---- plumbing for awaiters and streams -----------------------------------
    // Places p's SQEs now, or queues p whole until the SQ has room.  False
    // when p needs more SQEs than the ring has, or while the loop drains:
    // a completion handler that starts more then (the rest of a short send)
    // would make the drain wait for an operation nobody cancels.
    bool issue(Pending& p) noexcept {
        // The common case inline (one SQE, nothing queued ahead, room now):
        // it is on every request's path.
        if (p.sqes == 1)
            if (io_uring_sqe* sqe = next_sqe()) {
                p.fill(&p, &sqe);
                return true;
            }
        return issue_slow(p);
    }
    // An SQE to fill now, in order behind anything queued: nullptr when
    // something waits in the loop's queue, the SQ is full (then issue()), or
    // the loop drains (issue() then refuses too).
    // What an awaiter that issue() refused resumes with: -ECANCELED while the
    // loop drains, -EINVAL for a chain longer than the SQ (it could never be
    // one submission).
    std::int32_t issue_refusal(const Pending& p) const noexcept {
        return draining_ || p.sqes <= ring_->sq_entries() ? -ECANCELED : -EINVAL;
    }
    io_uring_sqe* next_sqe() noexcept {
        return !deferred_head_ && posted_.empty() && !draining_ ? ring_->get_sqe() : nullptr;
    }
    // Takes a queued p back before it reached the kernel.
    void withdraw(Pending& p) noexcept;
    // A user_data routed to `target` (nullptr: the result is dropped) until the
    // completion without IORING_CQE_F_MORE.
    std::uint64_t track(Pending* target) noexcept {
        std::uint32_t i = free_head_;
        if (i != kNoSlot) [[likely]]
            free_head_ = slots_[i].next_free;
        else
            i = grow_slots();
        // A free slot's Leftover is already empty: the abandoned path of
        // dispatch_other() leaves it so.
        Slot& s = slots_[i];
        s.target = target;
        s.ud = kTag << 48 | static_cast<std::uint64_t>(s.generation) << 32 | i;
        ++in_flight_;
        return s.ud;
    }
    // A user_data that stays `target`'s for one operation after another (one
    // in flight at a time), until disown() or abandon(): no slot to take and
    // free per operation.  Each SQE that carries it goes through reuse().
    std::uint64_t own_slot(Pending* target) noexcept;
    std::uint64_t reuse(std::uint64_t owned) noexcept {
        ++in_flight_;
        return owned;
    }
    // An owned slot with nothing in flight goes back (abandon() instead while
    // an operation is in flight).
    void disown(std::uint64_t owned) noexcept;
    // A user_data routed to `target` until untrack(): for completions other
    // rings post here (MSG_RING).  Not in flight: nothing to cancel or drain.
    std::uint64_t track_persistent(Pending* target) noexcept;
    void untrack(std::uint64_t ud) noexcept;
    // Submits what is prepared now, without waiting (one io_uring_enter).
    int submit_now() noexcept { return ring_->submit(); }
    // Asks the kernel to cancel the SQE with user_data `ud`.
    void cancel(std::uint64_t ud) noexcept { post(op::AsyncCancel(ud)); }
    // The owner of `ud` is going away: its remaining completions are dropped
    // (their provided buffers go back to `pool`, new descriptors are closed),
    // and the operation is cancelled.
    void abandon(std::uint64_t ud, BufferRing* pool, bool close_results = false) noexcept;
    // The same for an operation on a lent registered buffer: the loop holds
    // `buf` until the final completion, then gives it back to the pool.
    void abandon_fixed(std::uint64_t ud, FixedBuffer&& buf) noexcept;
    // The same for an operation that names memory its owner allocated: the
    // loop keeps `held` until the final completion, then calls drop(held).
    // (When the ring cannot be drained, it is leaked, never freed under the kernel.)
    using Drop = void (*)(void* held) noexcept;
    void abandon_holding(std::uint64_t ud, void* held, Drop drop) noexcept;
    // 0, or the -errno an awaited SQE gets instead of reaching the kernel
    // (the SQE becomes a NOP): -EINVAL for a multishot SQE, -EOPNOTSUPP for an
    // opcode this kernel lacks (async::unsupported() says which release has it).
    std::int32_t refusal(io_uring_sqe& s) const noexcept {
        std::int32_t r = 0;
        if (!opcodes_.supported(s.opcode) && probed_)
            r = -EOPNOTSUPP;
        else if (op::is_multishot(s))
            r = -EINVAL;
        if (r) detail::make_nop(s);
        return r;
    }
    // True while the loop cancels and drains: completions resume nothing.
    bool draining() const noexcept { return draining_; }
    void resume(std::coroutine_handle<> h) noexcept {
        if (!draining_) h.resume();
    }
    void wait_for_buffer(BufferWaiter& w, const BufferRing& pool) noexcept;
    void stop_waiting_for_buffer(BufferWaiter& w) noexcept;

private:
    // A free slot's ud names another index (~i), so no user_data matches it:
    // dispatch() checks tag, generation and liveness in one compare.
    struct Slot {
        std::uint64_t ud = 0;         // the user_data handed out for it while live
        Pending* target = nullptr;    // null for an abandoned or a persistent slot
        std::uint32_t next_free = 0;  // free: the next free slot's index
        std::uint16_t generation = 0;
        bool persistent = false;  // track_persistent(): its target is Leftover::held
        bool owned = false;       // own_slot(): not freed by a final completion
    };
    // What an abandoned slot still holds until its final completion (and a
    // persistent slot's target): apart from Slot, which dispatch() reads on
    // every completion, so that stays small.  Indexed like slots_.
    struct Leftover {
        BufferRing* pool = nullptr;    // where dropped buffers go
        void* held = nullptr;          // memory the operation names, and
        Drop drop = nullptr;           //   what frees it after the final completion
        std::int32_t lent_fixed = -1;  // the registered buffer it still holds
        bool close_results = false;    // descriptors it makes are closed
    };
    static constexpr std::uint32_t kNoSlot = 0xffffffffu;
    // The top 16 bits of every user_data this loop hands out; the next 16 are
    // the slot's generation, the low 32 its index.  A foreign value that
    // happens to carry the tag still has to name a live slot of the right
    // generation.
    static constexpr std::uint64_t kTag = 0x554bULL;
    static std::uint64_t free_ud(std::uint32_t i) noexcept {
        return ~static_cast<std::uint64_t>(i);
    }
    bool live(std::uint32_t i) const noexcept { return slots_[i].ud != free_ud(i); }
    // Whether `ud` is a live slot's user_data: its tag, index and generation.
    bool owns(std::uint64_t ud) const noexcept {
        const auto i = static_cast<std::uint32_t>(ud);
        return i < slot_count_ && slots_[i].ud == ud;
    }
    struct Root;
    static Root run_root(Loop* loop, Task<void> task);

    bool room(unsigned n) noexcept;
    void place(Pending& p) noexcept;
    bool issue_slow(Pending& p) noexcept;
    void post_sqe(const io_uring_sqe& s) noexcept;
    void flush_deferred();
    void wake_buffer_waiters(const BufferRing& pool) noexcept;
    void turn();
    // Routes a completion to its awaiter or stream.  The common case (a live
    // slot with a target) inline, for turn()'s loop; the rest out of line.
    void dispatch(const Completion& c) noexcept {
        const auto i = static_cast<std::uint32_t>(c.user_data);
        if (i < slot_count_) [[likely]] {
            Slot& slot = slots_[i];
            if (slot.ud == c.user_data && slot.target) [[likely]] {
                Pending* target = slot.target;
                if (!c.more()) {  // first: the handler may start the next operation
                    if (slot.owned)
                        --in_flight_;
                    else
                        release(i);
                }
                target->complete(target, c);
                return;
            }
        }
        dispatch_other(c);
    }
    void dispatch_other(const Completion& c) noexcept;
    // A final completion: the slot is free again.
    void release(std::uint32_t i) noexcept {
        --in_flight_;
        free_slot(i);
    }
    void free_slot(std::uint32_t i) noexcept {
        Slot& s = slots_[i];
        s.ud = free_ud(i);  // what makes it free: target is never read without a matching ud
        ++s.generation;
        s.next_free = free_head_;
        free_head_ = i;
    }
    // Slots run out: one more (allocates; never on the completion path,
    // which only frees slots).
    std::uint32_t grow_slots();
    // Cancels and drains everything in flight, then destroys every spawned
    // task.  False when the ring could not be entered: frames are then leaked
    // rather than freed under the kernel.
    bool shut_down() noexcept;

    Ring* ring_;
    OpcodeSupport opcodes_;  // probed once (5.6); all taken as supported when the probe fails
    bool probed_ = false;
    BatchWait* wait_ = nullptr;
    std::vector<Slot> slots_;
    std::vector<Leftover> leftovers_;
    std::uint32_t slot_count_ = 0;       // slots_.size(), without a division on every completion
    std::uint32_t free_head_ = kNoSlot;  // free slots, linked through next_free
    std::vector<io_uring_sqe> posted_;   // fire-and-forget SQEs waiting for room
    Pending* deferred_head_ = nullptr;
    Pending* deferred_tail_ = nullptr;
    BufferWaiter* buffer_waiters_ = nullptr;
    void* roots_ = nullptr;  // Root::promise_type list
    std::size_t live_ = 0;
    std::size_t in_flight_ = 0;
    std::uint64_t foreign_ = 0;
    std::uint64_t buffers_returned_ = 0;
    ForeignHandler foreign_handler_ = nullptr;
    void* foreign_context_ = nullptr;
    bool stopped_ = false;
    bool draining_ = false;
    std::exception_ptr error_;
    // Freed (and unregistered) only after ~Loop() drained; leaked with the
    // frames when it could not.
    std::unique_ptr<FixedBufferPool> fixed_;
};

}  // namespace uringkit::async

#include "uringkit/async/awaiters.hpp"
#include "uringkit/async/fixed_buffers.hpp"

namespace uringkit::async {

template <class T>
T Loop::block_on(Task<T> task) {
    auto h = task.get();
    // Started like a spawned task, but the Task keeps the frame, so the value can be read.
    h.resume();
    try {
        while (!h.done()) {
            turn();
            if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
        }
    } catch (...) {
        // The task may be suspended on an SQE: drain before its frame goes.
        if (!shut_down()) (void)task.release();
        throw;
    }
    return h.promise().take();
}

}  // namespace uringkit::async
