#include "uringkit/async/loop.hpp"
#include "uringkit/sys/error.hpp"

#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace uringkit::async {

namespace detail {

void make_nop(io_uring_sqe& s) noexcept {
    const std::uint64_t ud = s.user_data;
    std::memset(&s, 0, sizeof s);
    s.opcode = IORING_OP_NOP;
    s.user_data = ud;
}

}  // namespace detail

// The frame that owns a spawned task: on the loop's list until it finishes
// (then it destroys itself), so a loop that ends early can destroy it.
struct Loop::Root {
    struct promise_type {
        Loop* loop;
        promise_type* prev = nullptr;
        promise_type* next = nullptr;
        promise_type(Loop* l, Task<void>&) noexcept : loop(l) {}
        Root get_return_object() noexcept { return Root{std::coroutine_handle<promise_type>::from_promise(*this)}; }
        std::suspend_always initial_suspend() const noexcept { return {}; }
        struct Final {
            bool await_ready() const noexcept { return false; }
            void await_suspend(std::coroutine_handle<promise_type> h) const noexcept {
                h.promise().unlink();
                h.destroy();
            }
            void await_resume() const noexcept {}
        };
        Final final_suspend() const noexcept { return {}; }
        void return_void() const noexcept {}
        void unhandled_exception() const noexcept { std::terminate(); }  // run_root catches everything
        void link() noexcept {
            auto* head = static_cast<promise_type*>(loop->roots_);
            next = head;
            if (head) head->prev = this;
            loop->roots_ = this;
            ++loop->live_;
        }
        void unlink() noexcept {
            if (prev) prev->next = next;
            else loop->roots_ = next;
            if (next) next->prev = prev;
            prev = next = nullptr;
            --loop->live_;
        }
    };
    std::coroutine_handle<promise_type> handle;
};

Loop::Root Loop::run_root(Loop* loop, Task<void> task) {
    try {
        co_await std::move(task);
    } catch (...) {
        if (!loop->error_) loop->error_ = std::current_exception();
    }
}

Loop::Loop(Ring& ring) : ring_(&ring) {
    slots_.reserve(64);
    leftovers_.reserve(64);
    try {
        opcodes_ = ring.probe_opcodes();
        probed_ = true;
    } catch (const RingError&) {
        probed_ = false;  // before 5.6: no probe; the kernel's own -EINVAL says it
    }
}

std::string unsupported(std::uint8_t opcode) {
    const char* name = sys::opcode_name(opcode);
    const char* since = sys::opcode_since(opcode);
    std::string s = name ? name : "opcode " + std::to_string(opcode);
    s += ": not supported by this kernel";
    if (since) s += std::string(" (io_uring has it from Linux ") + since + ")";
    return s;
}

Loop::~Loop() {
    // Not drained: the kernel may still write into lent buffers.
    if (!shut_down()) (void)fixed_.release();
}

void Loop::spawn(Task<void> task) {
    Root r = run_root(this, std::move(task));
    r.handle.promise().link();
    r.handle.resume();
}

// ---- slots ------------------------------------------------------------------------

std::uint32_t Loop::grow_slots() {
    slots_.emplace_back();
    leftovers_.emplace_back();
    return slot_count_++;
}

std::uint64_t Loop::track_persistent(Pending* target) noexcept {
    // Kept off dispatch()'s inline path (no target there), which then never
    // has to ask whether a completion is the last.
    const std::uint64_t ud = track(nullptr);
    const auto i = static_cast<std::uint32_t>(ud);
    slots_[i].persistent = true;
    leftovers_[i].held = target;
    --in_flight_;
    return ud;
}

std::uint64_t Loop::own_slot(Pending* target) noexcept {
    const std::uint64_t ud = track(target);
    slots_[static_cast<std::uint32_t>(ud)].owned = true;
    --in_flight_;  // reuse() counts each operation
    return ud;
}

void Loop::disown(std::uint64_t ud) noexcept {
    if (!owns(ud)) return;
    const auto i = static_cast<std::uint32_t>(ud);
    if (!slots_[i].owned) return;
    slots_[i].owned = false;
    free_slot(i);
}

void Loop::untrack(std::uint64_t ud) noexcept {
    if (!owns(ud)) return;
    const auto i = static_cast<std::uint32_t>(ud);
    Slot& s = slots_[i];
    if (!s.persistent) return;
    s.persistent = false;
    leftovers_[i].held = nullptr;
    free_slot(i);
}

void Loop::abandon(std::uint64_t ud, BufferRing* pool, bool close_results) noexcept {
    const auto i = static_cast<std::uint32_t>(ud);
    if (!owns(ud) || slots_[i].persistent) return;
    slots_[i].target = nullptr;
    leftovers_[i].pool = pool;
    leftovers_[i].close_results = close_results;
    cancel(ud);
}

void Loop::abandon_fixed(std::uint64_t ud, FixedBuffer&& buf) noexcept {
    const auto i = static_cast<std::uint32_t>(ud);
    if (!owns(ud) || !buf) return;
    leftovers_[i].lent_fixed = buf.surrender();
    abandon(ud, nullptr);
}

void Loop::abandon_holding(std::uint64_t ud, void* held, Drop drop) noexcept {
    if (!owns(ud) || slots_[static_cast<std::uint32_t>(ud)].persistent) return;
    Leftover& l = leftovers_[static_cast<std::uint32_t>(ud)];
    l.held = held;
    l.drop = drop;
    abandon(ud, nullptr);
}

void Loop::dispatch_other(const Completion& c) noexcept {
    const std::uint64_t ud = c.user_data;
    const auto i = static_cast<std::uint32_t>(ud);
    if (!owns(ud)) {
        ++foreign_;
        if (foreign_handler_) foreign_handler_(foreign_context_, c);
        return;
    }
    if (slots_[i].persistent) {
        auto* target = static_cast<Pending*>(leftovers_[i].held);
        target->complete(target, c);
        return;
    }
    const Leftover s = leftovers_[i];  // abandoned: nobody waits
    if (!c.more()) {
        slots_[i].owned = false;  // an owned slot goes too, with its last operation
        leftovers_[i] = Leftover{};  // a free slot holds nothing (track() relies on it)
        release(i);
    }
    // Nobody waits: give back what the completion carries, once take() has
    // checked it is a whole buffer of the group (not a piece the kernel is
    // still filling, not a forged id, not one already given back).
    if (s.pool)
        if (const BufferRing::Delivery d = s.pool->take(c); d.has_buffer) recycle(*s.pool, d.id);
    if (s.close_results && c.res >= 0 && !(c.flags & IORING_CQE_F_NOTIF)) ::close(c.res);
    // The kernel is done with the registered buffer only now.
    if (s.lent_fixed >= 0 && !c.more()) fixed_->give_back(static_cast<std::uint16_t>(s.lent_fixed));
    if (s.drop && !c.more()) s.drop(s.held);
}

// ---- the submission queue -------------------------------------------------------------

bool Loop::room(unsigned n) noexcept {
    if (ring_->sq_space_left() >= n) return true;
    // The result is not needed here.  io_uring_enter fails only when it took
    // no SQE, so a failed submit loses nothing: the SQEs stay in the SQ, the
    // caller queues what did not fit, and the next turn submits them again,
    // throwing if the ring still fails (AsyncFaults tests both).
    if (ring_->sq_pending() > 0) (void)ring_->submit();
    return ring_->sq_space_left() >= n;
}

void Loop::place(Pending& p) noexcept {
    io_uring_sqe* sqes[detail::kMaxChain];
    for (unsigned k = 0; k < p.sqes; ++k) sqes[k] = ring_->get_sqe();
    p.fill(&p, sqes);
}

bool Loop::issue_slow(Pending& p) noexcept {
    if (p.sqes > ring_->sq_entries() || draining_) return false;
    // Behind anything already queued, so SQEs reach the kernel in order.
    if (!deferred_head_ && posted_.empty() && room(p.sqes)) {
        place(p);
        return true;
    }
    p.deferred = true;
    p.next_deferred = nullptr;
    if (deferred_tail_) deferred_tail_->next_deferred = &p;
    else deferred_head_ = &p;
    deferred_tail_ = &p;
    return true;
}

void Loop::withdraw(Pending& p) noexcept {
    if (!p.deferred) return;
    Pending* prev = nullptr;
    for (Pending* q = deferred_head_; q; prev = q, q = q->next_deferred) {
        if (q != &p) continue;
        if (prev) prev->next_deferred = q->next_deferred;
        else deferred_head_ = q->next_deferred;
        if (deferred_tail_ == q) deferred_tail_ = prev;
        break;
    }
    p.deferred = false;
    p.next_deferred = nullptr;
}

void Loop::post_sqe(const io_uring_sqe& s) noexcept {
    if (!deferred_head_ && posted_.empty() && room(1)) *ring_->get_sqe() = s;
    else posted_.push_back(s);
}

void Loop::flush_deferred() {
    std::size_t posted = 0;
    while (posted < posted_.size() || deferred_head_) {
        const unsigned need = posted < posted_.size() ? 1u : deferred_head_->sqes;
        if (!room(need)) {
            const int r = ring_->reserve(need);
            if (r == -EBUSY || r == -EAGAIN) break;  // reap first, then go on
            if (r < 0) {
                posted_.erase(posted_.begin(), posted_.begin() + static_cast<std::ptrdiff_t>(posted));
                throw std::system_error(-r, std::system_category(), "io_uring_enter");
            }
            continue;
        }
        if (posted < posted_.size()) {
            *ring_->get_sqe() = posted_[posted++];
            continue;
        }
        Pending* p = deferred_head_;
        deferred_head_ = p->next_deferred;
        if (!deferred_head_) deferred_tail_ = nullptr;
        p->deferred = false;
        p->next_deferred = nullptr;
        place(*p);
    }
    posted_.erase(posted_.begin(), posted_.begin() + static_cast<std::ptrdiff_t>(posted));
}

// ---- turns --------------------------------------------------------------------------

void Loop::turn() {
    flush_deferred();
    const int r = wait_ ? wait_->submit_and_wait(*ring_) : ring_->submit_and_wait(1);
    if (r < 0 && r != -EBUSY && r != -EAGAIN && r != -EINTR && r != -ETIME)
        throw std::system_error(-r, std::system_category(), "io_uring_enter");
    ring_->for_each_completion([this](const Completion& c) { dispatch(c); });
}

void Loop::run() {
    stopped_ = false;
    try {
        while (live_ > 0 && !stopped_) {
            turn();
            if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
        }
    } catch (...) {
        (void)shut_down();
        throw;
    }
}

void Loop::run_once() {
    try {
        turn();
        if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    } catch (...) {
        (void)shut_down();
        throw;
    }
}

bool Loop::shut_down() noexcept {
    draining_ = true;
    // Queued awaiters never reached the kernel: nothing to drain for them.
    for (Pending* p = deferred_head_; p;) {
        Pending* next = p->next_deferred;
        p->deferred = false;
        p->next_deferred = nullptr;
        p = next;
    }
    deferred_head_ = deferred_tail_ = nullptr;
    for (BufferWaiter* w = buffer_waiters_; w; w = w->next_waiter) w->waiting = false;
    buffer_waiters_ = nullptr;
    bool drained = true;
    try {
        const auto n = static_cast<std::uint32_t>(slots_.size());
        for (std::uint32_t i = 0; i < n; ++i)
            if (live(i) && !slots_[i].persistent) cancel(slots_[i].ud);
        while (in_flight_ > 0) turn();
    } catch (...) {
        drained = false;
    }
    if (drained) {
        // Destroying a frame runs destructors (streams, awaiters): all idle now.
        using Promise = Root::promise_type;
        while (auto* p = static_cast<Promise*>(roots_)) {
            p->unlink();
            std::coroutine_handle<Promise>::from_promise(*p).destroy();
        }
        try {
            while (in_flight_ > 0) turn();  // what those destructors posted
        } catch (...) {
            drained = false;
        }
    }
    draining_ = false;
    return drained;
}

// ---- provided buffers --------------------------------------------------------------

void Loop::wake_buffer_waiters(const BufferRing& pool) noexcept {
    // Every stream waiting on this pool tries again: one that finds it dry
    // again waits for the next buffer, so the work is bounded by the buffers
    // returned, never a spin.
    BufferWaiter* woken = nullptr;
    BufferWaiter** link = &buffer_waiters_;
    while (BufferWaiter* w = *link) {
        if (w->pool != &pool) {
            link = &w->next_waiter;
            continue;
        }
        *link = w->next_waiter;
        w->waiting = false;
        w->next_waiter = woken;
        woken = w;
    }
    while (woken) {
        BufferWaiter* w = woken;
        woken = w->next_waiter;
        w->next_waiter = nullptr;
        w->wake(w);
    }
}

void Loop::wait_for_buffer(BufferWaiter& w, const BufferRing& pool) noexcept {
    if (w.waiting || draining_) return;
    w.pool = &pool;
    w.waiting = true;
    w.next_waiter = buffer_waiters_;
    buffer_waiters_ = &w;
}

void Loop::stop_waiting_for_buffer(BufferWaiter& w) noexcept {
    if (!w.waiting) return;
    for (BufferWaiter** link = &buffer_waiters_; *link; link = &(*link)->next_waiter) {
        if (*link == &w) {
            *link = w.next_waiter;
            break;
        }
    }
    w.waiting = false;
    w.next_waiter = nullptr;
}

// ---- composed operations --------------------------------------------------------------

Task<Result> Loop::sleep(std::chrono::nanoseconds d) {
    __kernel_timespec ts{};
    ts.tv_sec = static_cast<long long>(d.count() / 1000000000);
    ts.tv_nsec = static_cast<long long>(d.count() % 1000000000);
    Result r = co_await submit(op::Timeout(&ts));
    if (r.res == -ETIME) r.res = 0;
    co_return r;
}

}  // namespace uringkit::async
