#include "uringkit/async/loop.hpp"

#include <cerrno>
#include <system_error>

namespace uringkit::async {

// The frame that owns a spawned task: starts at once, destroys itself at the
// end, and hands an escaped exception to the loop.
struct Loop::Detached {
    struct promise_type {
        Detached get_return_object() const noexcept { return {}; }
        std::suspend_never initial_suspend() const noexcept { return {}; }
        std::suspend_never final_suspend() const noexcept { return {}; }
        void return_void() const noexcept {}
        void unhandled_exception() const noexcept { std::terminate(); }  // run_detached catches everything
    };
};

Loop::Detached Loop::run_detached(Loop* loop, Task<void> task) {
    ++loop->live_;
    try {
        co_await std::move(task);
    } catch (...) {
        if (!loop->error_) loop->error_ = std::current_exception();
    }
    --loop->live_;
}

void Loop::spawn(Task<void> task) { run_detached(this, std::move(task)); }

void Loop::reap() {
    const int r = wait_ ? wait_->submit_and_wait(*ring_) : ring_->submit_and_wait(1);
    if (r < 0 && r != -EBUSY && r != -EAGAIN && r != -EINTR && r != -ETIME)
        throw std::system_error(-r, std::system_category(), "io_uring_enter");
    ring_->for_each_completion([](const Completion& c) {
        if (c.user_data == 0) return;  // linked timeouts, cancels: nobody waits
        auto* p = reinterpret_cast<Pending*>(static_cast<std::uintptr_t>(c.user_data));
        p->complete(p, c);
    });
}

void Loop::run() {
    stopped_ = false;
    while (live_ > 0 && !stopped_) {
        reap();
        if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    }
}

void Loop::run_once() {
    reap();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

Task<int> Loop::sleep(std::chrono::nanoseconds d) {
    __kernel_timespec ts{};
    ts.tv_sec = static_cast<long long>(d.count() / 1000000000);
    ts.tv_nsec = static_cast<long long>(d.count() % 1000000000);
    const int r = co_await as_int(op::Timeout(&ts));
    co_return r == -ETIME ? 0 : r;
}

Task<int> Loop::send_all(File f, const void* buf, std::size_t len) {
    const auto* p = static_cast<const char*>(buf);
    std::size_t done = 0;
    while (done < len) {
        const std::size_t chunk = len - done > 0x7fffffffu ? 0x7fffffffu : len - done;
        const int n = co_await send(f, p + done, static_cast<std::uint32_t>(chunk));
        if (n < 0) co_return n;
        if (n == 0) co_return -EPIPE;
        done += static_cast<std::size_t>(n);
    }
    co_return static_cast<int>(len);
}

// ---- RecvStream -----------------------------------------------------------------

RecvStream::RecvStream(Loop& loop, File f, BufferRing& buffers) : loop_(&loop), file_(f), buffers_(&buffers) {
    complete = &RecvStream::on_cqe;
    queue_.reserve(8);
    arm();
}

RecvStream::~RecvStream() {
    // Buffers of chunks nobody took go back to the kernel.
    for (std::size_t i = head_; i < queue_.size(); ++i)
        if (auto id = queue_[i].buffer_id()) buffers_->recycle(*id);
}

void RecvStream::arm() {
    loop_->prepare(op::Recv::provided(file_, buffers_->group()).multishot(), this);
    armed_ = true;
    rearm_ = false;
}

bool RecvStream::ready() noexcept {
    if (head_ < queue_.size() || ended_) return true;
    if (rearm_ && !armed_ && !stopping_) arm();
    return false;
}

RecvStream::Chunk RecvStream::pop() noexcept {
    if (head_ < queue_.size()) {
        const Completion& c = queue_[head_++];
        if (head_ == queue_.size()) {
            queue_.clear();  // keeps capacity
            head_ = 0;
        }
        const std::uint16_t id = *c.buffer_id();
        return {c.res, id, buffers_->data(id, static_cast<std::size_t>(c.res))};
    }
    return {final_res_, 0, {}};
}

void RecvStream::on_cqe(Pending* self, const Completion& c) noexcept {
    auto* s = static_cast<RecvStream*>(self);
    if (!c.more()) s->armed_ = false;
    if (c.res > 0) {
        s->queue_.push_back(c);
        // The kernel may end a multishot with data (e.g. on a full CQ): go on.
        if (!c.more() && !s->stopping_) s->rearm_ = true;
    } else if (c.res == -ENOBUFS || (c.res == -ECANCELED && s->stopping_)) {
        if (c.res == -ENOBUFS) ++s->enobufs_;
        if (!c.more() && !s->stopping_) s->rearm_ = true;
    } else if (!s->ended_) {
        s->ended_ = true;
        s->final_res_ = c.res;
    }
    if (!s->waiter_) return;
    if (s->head_ < s->queue_.size() || s->ended_ || (s->stopping_ && !s->armed_)) {
        std::exchange(s->waiter_, {}).resume();
    } else if (s->rearm_ && !s->stopping_) {
        s->arm();  // the consumer holds no buffer while it waits: re-arm now
    }
}

Task<void> RecvStream::stop() {
    stopping_ = true;
    if (armed_) {
        co_await loop_->submit(op::AsyncCancel(reinterpret_cast<std::uintptr_t>(static_cast<Pending*>(this))));
        struct UntilDisarmed {
            RecvStream* s;
            bool await_ready() const noexcept { return !s->armed_; }
            void await_suspend(std::coroutine_handle<> h) const noexcept { s->waiter_ = h; }
            void await_resume() const noexcept {}
        };
        while (armed_) co_await UntilDisarmed{this};
    }
    for (std::size_t i = head_; i < queue_.size(); ++i)
        if (auto id = queue_[i].buffer_id()) buffers_->recycle(*id);
    queue_.clear();
    head_ = 0;
}

}  // namespace uringkit::async
