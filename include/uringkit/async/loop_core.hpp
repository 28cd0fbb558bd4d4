// The loop's machinery, behind async::Loop's public face (loop.hpp): the
// user_data slots, the queue of SQEs waiting for room, completion dispatch,
// the drain, and what an abandoned operation leaves to the loop.  Awaiters
// and streams reach it through detail::core(loop); programs call Loop.
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

namespace detail {

// Something that puts SQEs in the ring and hears their completions: the
// base of every awaiter and stream.
struct Pending {
    // Each completion of an SQE whose user_data came from LoopCore::track(this).
    void (*complete)(Pending* self, const Completion& c) noexcept = nullptr;
    // Writes the `sqes` consecutive SQEs (a chain is placed whole): called by
    // LoopCore::issue() at once, or at the next turn when the SQ had no room.
    void (*fill)(Pending* self, io_uring_sqe* const* sqes) noexcept = nullptr;
    Pending* next_deferred = nullptr;
    std::uint8_t sqes = 1;
    bool deferred = false;
};

// A stream waiting for a provided buffer to come back (its recv ended with
// -ENOBUFS): woken by LoopCore::recycle() on the same BufferRing.
struct BufferWaiter {
    void (*wake)(BufferWaiter* self) noexcept = nullptr;
    BufferWaiter* next_waiter = nullptr;
    const BufferRing* pool = nullptr;
    bool waiting = false;
};

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

// What the loop keeps of an operation whose owner went away (a destroyed
// awaiter, stream or buffer), until the operation's final completion: the
// one way to hand the kernel's memory to the loop.  Made by the factories;
// several combine (`Leftover::buffers_of(pool)` with `.closing()` ...).
class Leftover {
public:
    // Using drop(held) frees memory the operation names.
    using Drop = void (*)(void* held) noexcept;

    // Nothing to keep: the operation names no memory that goes with its owner.
    static Leftover nothing() noexcept { return {}; }
    // Provided buffers its completions carry go back to `pool`.
    static Leftover buffers_of(BufferRing& pool) noexcept {
        Leftover l;
        l.pool_ = &pool;
        return l;
    }
    // Descriptors its completions make (accept) are closed.
    static Leftover closing_results() noexcept {
        Leftover l;
        l.close_results_ = true;
        return l;
    }
    // The lent registered buffer goes back to the loop's pool (fixed_buffers.hpp).
    static Leftover fixed(FixedBuffer&& buffer) noexcept;
    // Heap memory the operation names: freed after the final completion
    // (leaked, never freed under the kernel, when the ring cannot be drained).
    template <class T>
    static Leftover owning(std::unique_ptr<T> memory) noexcept {
        Leftover l;
        l.held_ = memory.release();
        l.drop_ = [](void* held) noexcept { delete static_cast<T*>(held); };
        return l;
    }

private:
    friend class LoopCore;
    BufferRing* pool_ = nullptr;    // where dropped buffers go
    void* held_ = nullptr;          // memory the operation names, and
    Drop drop_ = nullptr;           //   what frees it after the final completion
    std::int32_t lent_fixed_ = -1;  // the registered buffer it still holds
    bool close_results_ = false;    // descriptors it makes are closed
};

// The loop's machinery: user_data slots, the queue of SQEs waiting for room,
// completion dispatch, the drain.  Awaiters and streams reach it through
// detail::core(loop); a program calls Loop, whose public face this is not.
class LoopCore {
public:
    explicit LoopCore(Ring& ring);
    LoopCore(const LoopCore&) = delete;
    LoopCore& operator=(const LoopCore&) = delete;
    ~LoopCore();

    Ring& ring() noexcept { return *ring_; }

    // Places p's SQEs now, or queues p whole until the SQ has room.  False
    // when p needs more SQEs than the ring has, or while the loop drains:
    // a completion handler that starts more then (the rest of a short send)
    // would make the drain wait for an operation nobody cancels.
    // Never fails for want of memory: a p whose slots cannot be had now waits
    // in the queue, and the next turn throws std::bad_alloc from run() (which
    // drains first) if they still cannot.
    bool issue(Pending& p) noexcept {
        // The common case inline (one SQE, a free slot, nothing queued ahead,
        // room now): it is on every request's path.
        if (p.sqes == 1 && free_head_ != kNoSlot)
            if (io_uring_sqe* sqe = next_sqe()) {
                p.fill(&p, &sqe);
                return true;
            }
        return issue_slow(p);
    }
    // What an awaiter that issue() refused resumes with: -ECANCELED while the
    // loop drains, -EINVAL for a chain longer than the SQ (it could never be
    // one submission).
    std::int32_t issue_refusal(const Pending& p) const noexcept {
        return draining_ || p.sqes <= ring_->sq_entries() ? -ECANCELED : -EINVAL;
    }
    // An SQE to fill now, in order behind anything queued: nullptr when
    // something waits in the loop's queue, the SQ is full (then issue()), or
    // the loop drains (issue() then refuses too).
    io_uring_sqe* next_sqe() noexcept {
        return !deferred_head_ && posted_.empty() && !draining_ ? ring_->get_sqe() : nullptr;
    }
    // Takes a queued p back before it reached the kernel.
    void withdraw(Pending& p) noexcept;
    // A user_data routed to `target` (nullptr: the result is dropped) until the
    // completion without IORING_CQE_F_MORE.  Allocates (and may throw
    // std::bad_alloc) only when no slot is free; issue() and post() make sure
    // one is before they fill an SQE, so the completion path never does.
    std::uint64_t track(Pending* target) {
        std::uint32_t i = free_head_;
        if (i != kNoSlot) [[likely]] {
            free_head_ = slots_[i].next_free;
            --free_count_;
        } else {
            i = grow_slots();
        }
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
    std::uint64_t own_slot(Pending* target);
    std::uint64_t reuse(std::uint64_t owned) noexcept {
        ++in_flight_;
        return owned;
    }
    // An owned slot with nothing in flight goes back (abandon() instead while
    // an operation is in flight).
    void disown(std::uint64_t owned) noexcept;
    // A user_data routed to `target` until untrack(): for completions other
    // rings post here (MSG_RING).  Not in flight: nothing to cancel or drain.
    std::uint64_t track_persistent(Pending* target);
    void untrack(std::uint64_t ud) noexcept;
    // Submits what is prepared now, without waiting (one io_uring_enter).
    int submit_now() noexcept { return ring_->submit(); }
    // A fire-and-forget SQE (Loop::post()).
    template <class Op>
    void post(const Op& op) noexcept {
        io_uring_sqe s{};
        op.prepare(s);
        confine(s);
        // Out of memory for a slot: the SQE still goes, its completion
        // ignored and not waited for (a cancel or close names no memory).
        s.user_data = make_free(1) ? track(nullptr) : kUntracked;
        post_sqe(s);
    }
    // Asks the kernel to cancel the SQE with user_data `ud`.
    void cancel(std::uint64_t ud) noexcept { post(op::AsyncCancel(ud)); }
    // The owner of `ud` is going away: the operation is cancelled, its
    // remaining completions are dropped, and the loop keeps `keep` until the
    // final one (then gives buffers back, closes descriptors, frees memory).
    void abandon(std::uint64_t ud, Leftover keep) noexcept;
    // 0, or the -errno an awaited SQE gets instead of reaching the kernel
    // (the SQE becomes a NOP): -EINVAL for a multishot SQE, -EOPNOTSUPP for an
    // opcode this kernel lacks (async::unsupported() says which release has it).
    std::int32_t refusal(io_uring_sqe& s) const noexcept {
        std::int32_t r = 0;
        if (!opcodes_.supported(s.opcode) && probed_)
            r = -EOPNOTSUPP;
        else if (op::is_multishot(s))
            r = -EINVAL;
        if (r) make_nop(s);
        return r;
    }
    // True while the loop cancels and drains: completions resume nothing.
    bool draining() const noexcept { return draining_; }
    void resume(std::coroutine_handle<> h) noexcept {
        if (!draining_) h.resume();
    }
    // Hands provided buffer `id` back to the kernel and re-arms the streams
    // that were waiting for one of `pool`'s buffers.
    void recycle(BufferRing& pool, std::uint16_t id) noexcept {
        pool.recycle(id);
        ++buffers_returned_;
        if (buffer_waiters_) wake_buffer_waiters(pool);  // inline: on every request's path
    }
    std::uint64_t buffers_returned() const noexcept { return buffers_returned_; }
    // Buffer `id` of `pool`, with the bytes that arrived in it, as a handle
    // that gives it back through recycle() when dropped.  Counted until then:
    // ~LoopCore() refuses to leave a handle pointing at a destroyed loop.
    ProvidedBuffer lend(BufferRing& pool, std::uint16_t id,
                        std::span<const std::byte> bytes) noexcept {
        ++buffers_lent_;
        return ProvidedBuffer(pool, id, bytes, &give_back_lent, this);
    }
    void wait_for_buffer(BufferWaiter& w, const BufferRing& pool) noexcept;
    void stop_waiting_for_buffer(BufferWaiter& w) noexcept;
    FixedBufferPool* fixed_buffers() const noexcept { return fixed_.get(); }

protected:
    // What Loop's public face does (loop.hpp, class Loop, says what each means).
    void set_wait(BatchWait* wait) noexcept { wait_ = wait; }
    void spawn(Task<void> task);
    void run();
    void run_once();
    void stop() noexcept { stopped_ = true; }
    template <class T>
    T block_on(Task<T> task);
    std::size_t live_tasks() const noexcept { return live_; }
    std::size_t in_flight() const noexcept { return in_flight_; }
    using ForeignHandler = void (*)(void* context, const Completion& c) noexcept;
    void route_foreign(ForeignHandler handler, void* context) noexcept {
        foreign_handler_ = handler;
        foreign_context_ = context;
    }
    std::uint64_t foreign_completions() const noexcept { return foreign_; }
    FixedBufferPool& register_fixed_buffers(unsigned count, std::size_t size);

private:
    // A free slot's ud names another index (~i), so no user_data matches it:
    // dispatch() checks tag, generation and liveness in one compare.
    struct Slot {
        std::uint64_t ud = 0;         // the user_data handed out for it while live
        Pending* target = nullptr;    // null for an abandoned or a persistent slot
        std::uint32_t next_free = 0;  // free: the next free slot's index
        std::uint16_t generation = 0;
        bool persistent = false;  // track_persistent(): its target is Leftover::held_
        bool owned = false;       // own_slot(): not freed by a final completion
    };
    static constexpr std::uint32_t kNoSlot = 0xffffffffu;
    // The top 16 bits of every user_data this loop hands out; the next 16 are
    // the slot's generation, the low 32 its index.  A foreign value that
    // happens to carry the tag still has to name a live slot of the right
    // generation.
    static constexpr std::uint64_t kTag = 0x554bULL;
    // A posted SQE that got no slot: ignored at its completion (no slot has
    // index kNoSlot).
    static constexpr std::uint64_t kUntracked = kTag << 48 | kNoSlot;
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
    static Root run_root(LoopCore* loop, Task<void> task);

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
        ++free_count_;
    }
    // Slots run out: one more.  Allocates: throws std::bad_alloc.
    std::uint32_t grow_slots();
    // At least `n` slots free, growing the table if need be; false when
    // memory for them cannot be had.  For the noexcept paths that fill SQEs.
    bool make_free(unsigned n) noexcept;
    static void give_back_lent(void* core, BufferRing& pool, std::uint16_t id) noexcept {
        auto* loop = static_cast<LoopCore*>(core);
        --loop->buffers_lent_;
        loop->recycle(pool, id);
    }
    // Cancels and drains everything in flight, then destroys every spawned
    // task.  False when the ring could not be entered: frames are then leaked
    // rather than freed under the kernel.
    bool shut_down() noexcept;

    Ring* ring_;
    OpcodeSupport opcodes_;  // probed once (5.6); all taken as supported when the probe fails
    bool probed_ = false;
    BatchWait* wait_ = nullptr;
    std::vector<Slot> slots_;
    // What an abandoned slot still holds until its final completion (and a
    // persistent slot's target): apart from Slot, which dispatch() reads on
    // every completion, so that stays small.  Indexed like slots_.
    std::vector<Leftover> leftovers_;
    std::uint32_t slot_count_ = 0;       // slots_.size(), without a division on every completion
    std::uint32_t free_head_ = kNoSlot;  // free slots, linked through next_free
    std::uint32_t free_count_ = 0;       // how many
    std::vector<io_uring_sqe> posted_;   // fire-and-forget SQEs waiting for room
    Pending* deferred_head_ = nullptr;
    Pending* deferred_tail_ = nullptr;
    BufferWaiter* buffer_waiters_ = nullptr;
    void* roots_ = nullptr;  // Root::promise_type list
    std::size_t live_ = 0;
    std::size_t in_flight_ = 0;
    std::uint64_t foreign_ = 0;
    std::uint64_t buffers_returned_ = 0;
    std::size_t buffers_lent_ = 0;  // lend()'s handles not given back yet
    ForeignHandler foreign_handler_ = nullptr;
    void* foreign_context_ = nullptr;
    bool stopped_ = false;
    bool draining_ = false;
    std::exception_ptr error_;
    // Freed (and unregistered) only after ~LoopCore() drained; leaked with the
    // frames when it could not.
    std::unique_ptr<FixedBufferPool> fixed_;
};

// The machinery behind `loop`, for awaiters and streams.
LoopCore& core(Loop& loop) noexcept;

}  // namespace detail

template <class T>
T detail::LoopCore::block_on(Task<T> task) {
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
