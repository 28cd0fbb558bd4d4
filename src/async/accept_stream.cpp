#include "uringkit/async/accept_stream.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace uringkit::async {

AcceptStream::AcceptStream(Loop& loop, File listener, int flags)
    : loop_(&detail::core(loop)), listener_(listener), flags_(flags) {
    Pending::complete = &AcceptStream::on_cqe;
    Pending::fill = &AcceptStream::on_fill;
    queue_.reserve(64);
}

AcceptStream::~AcceptStream() {
    if (armed_) {
        if (ud_)
            loop_->abandon(ud_, detail::Leftover::closing_results());
        else
            loop_->withdraw(*this);
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
