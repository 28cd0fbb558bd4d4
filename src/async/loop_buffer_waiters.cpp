// Streams waiting for a provided buffer to come back: parked by
// wait_for_buffer(), woken by LoopCore::recycle() on the same BufferRing.
#include "uringkit/async/loop.hpp"

namespace uringkit::async::detail {

void LoopCore::wake_buffer_waiters(const BufferRing& pool) noexcept {
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

void LoopCore::wait_for_buffer(BufferWaiter& w, const BufferRing& pool) noexcept {
    if (w.waiting || draining_) return;
    w.pool = &pool;
    w.waiting = true;
    w.next_waiter = buffer_waiters_;
    buffer_waiters_ = &w;
}

void LoopCore::stop_waiting_for_buffer(BufferWaiter& w) noexcept {
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

}  // namespace uringkit::async::detail
