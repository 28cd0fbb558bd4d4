#include "uringkit/async/recv_stream.hpp"

#include <cerrno>
#include <new>

namespace uringkit::async {

RecvStream::RecvStream(Loop& loop, File f, BufferRing& buffers)
    : loop_(&detail::core(loop)), file_(f), buffers_(&buffers) {
    Pending::complete = &RecvStream::on_cqe;
    Pending::fill = &RecvStream::on_fill;
    BufferWaiter::wake = &RecvStream::on_buffer;
    if (!grow_queue()) throw std::bad_alloc();
    arm();
}

RecvStream::~RecvStream() {
    loop_->stop_waiting_for_buffer(*this);
    if (armed_) {
        if (ud_)
            loop_->abandon(ud_, detail::Leftover::buffers_of(
                                    *buffers_));  // the loop cancels it and drops the rest
        else
            loop_->withdraw(*this);  // still queued: never reached the kernel
    }
    return_queued();
}

bool RecvStream::grow_queue() noexcept {
    // Bounded by the group's buffers: each queued chunk holds one.  Grown on
    // the completion path, so a failure must not throw through it.
    try {
        queue_.resize(queue_.empty() ? 8 : queue_.size() * 2);
    } catch (const std::bad_alloc&) {
        return false;
    }
    queue_capacity_ = static_cast<std::uint32_t>(queue_.size());
    return true;
}

void RecvStream::out_of_memory(std::uint16_t id) noexcept {
    loop_->recycle(*buffers_, id);
    if (ended_) return;
    ended_ = true;
    final_res_ = -ENOMEM;
    rearm_ = false;
    if (armed_ && ud_) loop_->cancel(ud_);  // no more chunks into a queue that cannot hold them
}

void RecvStream::arm() noexcept {
    if (loop_->draining()) return;
    armed_ = true;
    rearm_ = false;
    returned_at_arm_ = loop_->buffers_returned();
    (void)loop_->issue(*this);  // one SQE: always fits
}

void RecvStream::on_fill(Pending* self, io_uring_sqe* const* sqes) noexcept {
    auto* s = static_cast<RecvStream*>(self);
    op::Recv::provided(s->file_, s->buffers_->group()).multishot().prepare(*sqes[0]);
    s->ud_ = s->loop_->track(s);
    sqes[0]->user_data = s->ud_;
}

bool RecvStream::ready_slow() noexcept {
    if (ended_) return true;
    if (!armed_ && !stopping_ && !BufferWaiter::waiting) arm();  // rearm_
    return false;
}

void RecvStream::return_queued() noexcept {
    if (handed_)
        loop_->recycle(*buffers_, handoff_.id);  // resumed while the loop drained: never taken
    handed_ = false;
    for (std::uint32_t i = head_; i < tail_; ++i) loop_->recycle(*buffers_, queue_[i].id);
    head_ = tail_ = 0;
}

// Checked against the group before the consumer sees it: a buffer id outside
// it, more bytes than a buffer holds, data without a buffer, or a buffer
// already out is what the kernel never sends (a foreign MSG_RING can): the
// stream ends with that error instead of handing out memory outside the
// group or one buffer twice.  A piece of an incremental ring
// (IORING_CQE_F_BUF_MORE) is not a whole buffer to recycle: RecvStream takes
// plain rings only.
void RecvStream::on_cqe(Pending* self, const Completion& c) noexcept {
    auto* s = static_cast<RecvStream*>(self);
    // The common case first: data, the recv still armed, a consumer.
    if (c.res > 0 && c.more() && !s->ended_) [[likely]] {
        const BufferRing::Delivery d = s->buffers_->take(c);
        if (d.error == 0 && d.has_buffer) [[likely]] {
            if (s->waiter_ && s->head_ == s->tail_ && !s->handed_ && !(s->stopping_ | s->paused_)) {
                s->handoff_ = {c.res, d.id};
                s->handed_ = true;
                s->loop_->resume(std::exchange(s->waiter_, {}));
            } else {
                s->push(c.res, d.id);
                if (s->waiter_) s->loop_->resume(std::exchange(s->waiter_, {}));
            }
            return;
        }
        s->on_other(c, &d);
        return;
    }
    s->on_other(c, nullptr);
}

void RecvStream::on_other(const Completion& c, const BufferRing::Delivery* taken) noexcept {
    if (!c.more()) {
        armed_ = false;
        ud_ = 0;
    }
    if (c.res > 0) {
        const BufferRing::Delivery d = taken ? *taken : buffers_->take(c);
        if (d.error == 0 && d.has_buffer) {
            if (ended_) {
                loop_->recycle(*buffers_, d.id);  // after the end: nobody will take it
            } else {
                push(c.res, d.id);
                // The kernel may end a multishot with data (e.g. on a full CQ): go on.
                if (!c.more() && !stopping_ && !cancelled_) rearm_ = true;
            }
        } else if (!ended_) {
            ended_ = true;
            final_res_ = d.error ? d.error : -EINVAL;
            if (c.more() && ud_) loop_->cancel(ud_);  // no more from a recv that cannot be trusted
        }
    } else if (c.res == -ENOBUFS) {
        ++enobufs_;
        if (!c.more() && !stopping_ && !cancelled_) rearm_ = true;
    } else if (c.res == -ECANCELED && (stopping_ || paused_)) {
        // stop() or pause() asked for it
    } else if (!ended_) {
        ended_ = true;
        final_res_ = c.res;
    }
    if (!c.more() && cancelled_ && !ended_) {
        ended_ = true;  // cancel() asked: whatever the last completion was
        final_res_ = -ECANCELED;
    }
    if (!waiter_) return;
    if (head_ != tail_ || ended_ || ((stopping_ || paused_) && !armed_)) {
        loop_->resume(std::exchange(waiter_, {}));
    } else if (rearm_ && !stopping_ && !paused_) {
        // The ring was dry.  If no buffer came back since the recv was armed,
        // re-arming now would fail again at once: wait for one.  Otherwise
        // (and after any other early end) re-arm now; each such re-arm
        // follows a returned buffer, so this never spins.
        if (c.res == -ENOBUFS && loop_->buffers_returned() == returned_at_arm_)
            loop_->wait_for_buffer(*this, *buffers_);
        else
            arm();
    }
}

void RecvStream::on_buffer(BufferWaiter* self) noexcept {
    auto* s = static_cast<RecvStream*>(self);
    if (!s->armed_ && s->rearm_ && !s->stopping_ && !s->paused_ && !s->ended_) s->arm();
}

void RecvStream::cancel() noexcept {
    if (ended_ || cancelled_ || stopping_) return;
    cancelled_ = true;
    rearm_ = false;
    loop_->stop_waiting_for_buffer(*this);
    if (armed_ && ud_) {
        loop_->cancel(ud_);  // on_cqe ends the stream at the recv's last completion
        return;
    }
    if (armed_) {  // still queued: it never reached the kernel
        loop_->withdraw(*this);
        armed_ = false;
    }
    ended_ = true;
    final_res_ = -ECANCELED;
    if (waiter_) loop_->resume(std::exchange(waiter_, {}));
}

// A class member, not a local class: a local type in a coroutine's frame
// has no linkage, which g++ refuses (-Wsubobject-linkage) in a unity build.
struct RecvStream::UntilDisarmed {
    RecvStream* s;
    bool await_ready() const noexcept { return !s->armed_; }
    void await_suspend(std::coroutine_handle<> h) const noexcept { s->waiter_ = h; }
    void await_resume() const noexcept {}
};

// The recv taken back while still queued, or cancelled and waited for to
// its last completion: either way no recv is armed when it resumes.
Task<void> RecvStream::disarm() {
    loop_->stop_waiting_for_buffer(*this);
    if (armed_ && !ud_) {  // still queued: take it back
        loop_->withdraw(*this);
        armed_ = false;
    }
    if (!armed_) co_return;
    loop_->cancel(ud_);
    // Woken early by chunks that still arrive (they queue): wait on.
    while (armed_) co_await UntilDisarmed{this};
}

Task<void> RecvStream::pause() {
    if (ended_ || cancelled_ || stopping_) co_return;
    paused_ = true;
    co_await disarm();
    paused_ = false;
    // next() arms the recv again once the queue is empty (ready_slow()),
    // unless the last completion ended the stream (EOF, an error, cancel()).
    if (!ended_ && !cancelled_) rearm_ = true;
}

Task<void> RecvStream::stop() {
    stopping_ = true;
    co_await disarm();
    return_queued();
}

}  // namespace uringkit::async
