// Handing work to another thread's loop.  One Loop per thread is the model;
// a Mailbox<T> belongs to the receiving loop, and any thread that runs a
// Loop sends to it: the value goes into a locked queue, and one
// IORING_OP_MSG_RING (5.18) from the sender's ring posts a completion on the
// receiver's ring, which wakes its io_uring_enter.  No eventfd, no poll.
//
//     async::Mailbox<Job> inbox(worker_loop);          // made before the threads start
//     // on the worker's thread:
//     for (;;) { Job j = co_await inbox.receive(); if (j.last) break; run(j); }
//     // on any other thread with a loop:
//     inbox.send(my_loop, Job{...});
//
// Values from one sender arrive in the order sent.  The mailbox must outlive
// every send() to it and be destroyed on the receiver's thread.
#pragma once

#include "uringkit/async/loop.hpp"
#include "uringkit/cxx20.hpp"
#include "uringkit/ops/control.hpp"

#include <deque>
#include <mutex>

namespace uringkit::async {

template <class T>
class Mailbox : private detail::Pending {
public:
    explicit Mailbox(Loop& receiver)
        : loop_(&detail::core(receiver)), ring_fd_(receiver.ring().fd()) {
        Pending::complete = &on_cqe;
        ud_ = loop_->track_persistent(this);
    }
    Mailbox(const Mailbox&) = delete;
    Mailbox& operator=(const Mailbox&) = delete;
    ~Mailbox() { loop_->untrack(ud_); }

    // On the thread that runs `sender` (not the receiver's loop: use it
    // directly there): queues `value` and wakes the receiver.  Returns the
    // submit's result (how many SQEs went in, or -errno); the message itself
    // completes on the sender's ring.
    int send(Loop& sender, T value) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            queue_.push_back(std::move(value));
        }
        sender.post(op::MsgRing(ring_fd_, 0, ud_));
        return detail::core(sender).submit_now();
    }

    // On the receiver's thread: the next value.
    auto receive() noexcept {
        struct Awaiter {
            Mailbox* m;
            bool await_ready() { return m->has_value(); }
            void await_suspend(std::coroutine_handle<> h) noexcept { m->waiter_ = h; }
            T await_resume() { return m->take(); }
        };
        return Awaiter{this};
    }

private:
    bool has_value() {
        std::lock_guard<std::mutex> lock(mutex_);
        return !queue_.empty();
    }
    T take() {
        std::lock_guard<std::mutex> lock(mutex_);
        T v = std::move(queue_.front());
        queue_.pop_front();
        return v;
    }
    // A message arrived; its value was queued before it was sent, but an
    // earlier wake may already have taken it: resume only with one there.
    static void on_cqe(Pending* self, const Completion&) noexcept {
        auto* m = static_cast<Mailbox*>(self);
        if (m->waiter_ && m->has_value()) m->loop_->resume(std::exchange(m->waiter_, {}));
    }

    detail::LoopCore* loop_;
    int ring_fd_;
    std::uint64_t ud_ = 0;
    std::mutex mutex_;
    std::deque<T> queue_;
    std::coroutine_handle<> waiter_;
};

}  // namespace uringkit::async
