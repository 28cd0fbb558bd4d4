// The loop's tasks and turns: the spawned tasks' frames, one turn (submit,
// wait, dispatch), run() and shut_down(), and the operations composed on top
// (sleep).  Slots, the submission queue and the buffer waiters have files of
// their own (loop_slots.cpp, loop_queue.cpp, loop_buffer_waiters.cpp).
#include "uringkit/async/loop.hpp"
#include "uringkit/ring/hand_loop.hpp"
#include "uringkit/sys/error.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <system_error>

namespace uringkit::async {

namespace detail {

// The frame that owns a spawned task: on the loop's list until it finishes
// (then it destroys itself), so a loop that ends early can destroy it.
struct LoopCore::Root {
    struct promise_type {
        LoopCore* loop;
        promise_type* prev = nullptr;
        promise_type* next = nullptr;
        promise_type(LoopCore* l, Task<void>&) noexcept : loop(l) {}
        Root get_return_object() noexcept {
            return Root{std::coroutine_handle<promise_type>::from_promise(*this)};
        }
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
        void unhandled_exception() const noexcept {
            std::terminate();
        }  // run_root catches everything
        void link() noexcept {
            auto* head = static_cast<promise_type*>(loop->roots_);
            next = head;
            if (head) head->prev = this;
            loop->roots_ = this;
            ++loop->live_;
        }
        void unlink() noexcept {
            if (prev)
                prev->next = next;
            else
                loop->roots_ = next;
            if (next) next->prev = prev;
            prev = next = nullptr;
            --loop->live_;
        }
    };
    std::coroutine_handle<promise_type> handle;
};

LoopCore::Root LoopCore::run_root(LoopCore* loop, Task<void> task) {
    try {
        co_await std::move(task);
    } catch (...) {
        if (!loop->error_) loop->error_ = std::current_exception();
    }
}

LoopCore::LoopCore(Ring& ring) : ring_(&ring) {
    slots_.reserve(64);
    leftovers_.reserve(64);
    try {
        opcodes_ = ring.probe_opcodes();
        probed_ = true;
    } catch (const RingError&) {
        probed_ = false;  // before 5.6: no probe; the kernel's own -EINVAL says it
    }
}

LoopCore::~LoopCore() {
    // Not drained: the kernel may still write into lent buffers, and the
    // frames (with any chunk in them) are leaked, so no chunk comes back.
    if (!shut_down()) {
        (void)fixed_.release();
        return;
    }
    if (buffers_lent_ > 0) {
        // A stream's chunk held past the loop (outside every frame) would give
        // its buffer back through this destroyed object: stop here, loudly.
        char line[160];
        const int n = std::snprintf(line, sizeof line,
                                    "uringkit: async::Loop destroyed while %zu provided buffer(s) "
                                    "from its streams are still held\n",
                                    buffers_lent_);
        if (n > 0) (void)!::write(STDERR_FILENO, line, static_cast<std::size_t>(n));
        std::abort();
    }
}

void LoopCore::spawn(Task<void> task) {
    if (draining_) return;  // `task` goes unstarted: its frame holds nothing the kernel names
    Root r = run_root(this, std::move(task));
    r.handle.promise().link();
    r.handle.resume();
}

// ---- turns --------------------------------------------------------------------------

void LoopCore::turn() {
    flush_deferred();
    check_enter(wait_ ? wait_->submit_and_wait(*ring_) : ring_->submit_and_wait(1));
    ring_->for_each_completion([this](const Completion& c) { dispatch(c); });
}

void LoopCore::run() {
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

void LoopCore::run_once() {
    try {
        turn();
        if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    } catch (...) {
        (void)shut_down();
        throw;
    }
}

bool LoopCore::shut_down() noexcept {
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

}  // namespace detail

std::string unsupported(std::uint8_t opcode) {
    const char* name = sys::opcode_name(opcode);
    const char* since = sys::opcode_since(opcode);
    std::string s = name ? name : "opcode " + std::to_string(opcode);
    s += ": not supported by this kernel";
    if (since) s += std::string(" (io_uring has it from Linux ") + since + ")";
    return s;
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
