#include "uringkit/async/streams.hpp"

#include <unistd.h>

#include <cerrno>

namespace uringkit::async {

// ---- RecvStream -----------------------------------------------------------------

RecvStream::RecvStream(Loop& loop, File f, BufferRing& buffers) : loop_(&loop), file_(f), buffers_(&buffers) {
    Pending::complete = &RecvStream::on_cqe;
    Pending::fill = &RecvStream::on_fill;
    BufferWaiter::wake = &RecvStream::on_buffer;
    queue_.reserve(8);
    arm();
}

RecvStream::~RecvStream() {
    loop_->stop_waiting_for_buffer(*this);
    if (armed_) {
        if (ud_) loop_->abandon(ud_, buffers_);  // the loop cancels it and drops the rest
        else loop_->withdraw(*this);             // still queued: never reached the kernel
    }
    return_queued();
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
    if (rearm_ && !armed_ && !stopping_ && !BufferWaiter::waiting) arm();
    return false;
}

RecvStream::Chunk RecvStream::pop() noexcept {
    if (head_ < queue_.size()) {
        const Completion& c = queue_[head_++];
        if (head_ == queue_.size()) {
            queue_.clear();  // keeps capacity
            head_ = 0;
        }
        const std::uint16_t id = *c.buffer_id();  // taken at its CQE: in the group, whole, ours
        return {c.res, id, buffers_->data(id, static_cast<std::size_t>(c.res))};
    }
    return {final_res_, 0, {}};
}

void RecvStream::return_queued() noexcept {
    for (std::size_t i = head_; i < queue_.size(); ++i)
        if (auto id = queue_[i].buffer_id()) loop_->recycle(*buffers_, *id);
    queue_.clear();
    head_ = 0;
}

void RecvStream::on_cqe(Pending* self, const Completion& c) noexcept {
    auto* s = static_cast<RecvStream*>(self);
    if (!c.more()) {
        s->armed_ = false;
        s->ud_ = 0;
    }
    if (c.res > 0) {
        // Checked against the group before the consumer sees it: a buffer
        // id outside it, more bytes than a buffer holds, data without a
        // buffer, or a buffer already out is what the kernel never sends
        // (a foreign MSG_RING can): the stream ends with that error instead
        // of handing out memory outside the group or one buffer twice.  A
        // piece of an incremental ring (IORING_CQE_F_BUF_MORE) is not a
        // whole buffer to recycle: RecvStream takes plain rings only.
        const BufferRing::Delivery d = s->buffers_->take(c);
        if (d.error == 0 && d.has_buffer) {
            if (s->ended_) {
                s->loop_->recycle(*s->buffers_, d.id);  // after the end: nobody will take it
            } else {
                s->queue_.push_back(c);
                // The kernel may end a multishot with data (e.g. on a full CQ): go on.
                if (!c.more() && !s->stopping_) s->rearm_ = true;
            }
        } else if (!s->ended_) {
            s->ended_ = true;
            s->final_res_ = d.error ? d.error : -EINVAL;
            if (c.more() && s->ud_) s->loop_->cancel(s->ud_);  // no more from a recv that cannot be trusted
        }
    } else if (c.res == -ENOBUFS) {
        ++s->enobufs_;
        if (!c.more() && !s->stopping_) s->rearm_ = true;
    } else if (c.res == -ECANCELED && s->stopping_) {
        // stop() asked for it
    } else if (!s->ended_) {
        s->ended_ = true;
        s->final_res_ = c.res;
    }
    if (!s->waiter_) return;
    if (s->head_ < s->queue_.size() || s->ended_ || (s->stopping_ && !s->armed_)) {
        s->loop_->resume(std::exchange(s->waiter_, {}));
    } else if (s->rearm_ && !s->stopping_) {
        // The ring was dry.  If no buffer came back since the recv was armed,
        // re-arming now would fail again at once: wait for one.  Otherwise
        // (and after any other early end) re-arm now; each such re-arm
        // follows a returned buffer, so this never spins.
        if (c.res == -ENOBUFS && s->loop_->buffers_returned() == s->returned_at_arm_)
            s->loop_->wait_for_buffer(*s, *s->buffers_);
        else
            s->arm();
    }
}

void RecvStream::on_buffer(BufferWaiter* self) noexcept {
    auto* s = static_cast<RecvStream*>(self);
    if (!s->armed_ && s->rearm_ && !s->stopping_ && !s->ended_) s->arm();
}

Task<void> RecvStream::stop() {
    stopping_ = true;
    loop_->stop_waiting_for_buffer(*this);
    if (armed_ && !ud_) {  // still queued: take it back
        loop_->withdraw(*this);
        armed_ = false;
    }
    if (armed_) {
        loop_->cancel(ud_);
        struct UntilDisarmed {
            RecvStream* s;
            bool await_ready() const noexcept { return !s->armed_; }
            void await_suspend(std::coroutine_handle<> h) const noexcept { s->waiter_ = h; }
            void await_resume() const noexcept {}
        };
        while (armed_) co_await UntilDisarmed{this};
    }
    return_queued();
}

// ---- AcceptStream ------------------------------------------------------------------

AcceptStream::AcceptStream(Loop& loop, File listener, int flags) : loop_(&loop), listener_(listener), flags_(flags) {
    Pending::complete = &AcceptStream::on_cqe;
    Pending::fill = &AcceptStream::on_fill;
    queue_.reserve(64);
}

AcceptStream::~AcceptStream() {
    if (armed_) {
        if (ud_) loop_->abandon(ud_, nullptr, true);
        else loop_->withdraw(*this);
    }
    for (std::size_t i = head_; i < queue_.size(); ++i)
        if (queue_[i].res >= 0) ::close(queue_[i].res);
}

void AcceptStream::arm() noexcept {
    if (armed_ || loop_->draining()) return;
    armed_ = true;
    (void)loop_->issue(*this);
}

void AcceptStream::cancel() noexcept {
    if (!armed_) return;
    if (ud_) {
        loop_->cancel(ud_);
        return;
    }
    loop_->withdraw(*this);  // never reached the kernel: end it here
    armed_ = false;
    queue_.push_back({-ECANCELED, 0});
    if (waiter_) loop_->resume(std::exchange(waiter_, {}));
}

void AcceptStream::on_fill(Pending* self, io_uring_sqe* const* sqes) noexcept {
    auto* s = static_cast<AcceptStream*>(self);
    op::Accept(s->listener_).flags(s->flags_).multishot().prepare(*sqes[0]);
    s->ud_ = s->loop_->track(s);
    sqes[0]->user_data = s->ud_;
}

AcceptStream::Peer AcceptStream::peer(int fd) noexcept {
    Peer p;
    p.length = sizeof p.address;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&p.address), &p.length) != 0) p.length = 0;
    return p;
}

Result AcceptStream::pop() noexcept {
    const Result r = queue_[head_++];
    if (head_ == queue_.size()) {
        queue_.clear();
        head_ = 0;
    }
    return r;
}

void AcceptStream::on_cqe(Pending* self, const Completion& c) noexcept {
    auto* s = static_cast<AcceptStream*>(self);
    if (!c.more()) {
        s->armed_ = false;
        s->ud_ = 0;
    }
    s->queue_.push_back({c.res, c.flags});
    if (s->waiter_) s->loop_->resume(std::exchange(s->waiter_, {}));
}

}  // namespace uringkit::async
