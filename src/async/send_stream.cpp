#include "uringkit/async/send_stream.hpp"

#include <cerrno>

namespace uringkit::async {

SendStream::SendStream(Loop& loop, File f)
    : loop_(&detail::core(loop)),
      file_(f),
      bytes_(std::make_unique<Bytes>()),
      gathering_(&bytes_->a),
      sending_(&bytes_->b) {
    Pending::complete = &SendStream::on_cqe;
    Pending::fill = &SendStream::on_fill;
    ud_ = loop_->own_slot(this);
}

SendStream::~SendStream() {
    if (Pending::deferred) loop_->withdraw(*this);  // never reached the kernel
    if (placed_)
        loop_->abandon(ud_, detail::Leftover::owning(std::move(bytes_)));
    else
        loop_->disown(ud_);
}

void SendStream::on_fill(Pending* self, io_uring_sqe* const* sqes) noexcept {
    static_cast<SendStream*>(self)->fill_send(*sqes[0]);
}

void SendStream::on_cqe(Pending* self, const Completion& c) noexcept {
    auto* s = static_cast<SendStream*>(self);
    s->placed_ = false;
    // The common case first, with no call but the resume: all of it sent,
    // nothing gathered meanwhile.
    if (c.res > 0 && s->offset_ + static_cast<std::size_t>(c.res) == s->sending_->size() &&
        s->gathering_->empty()) [[likely]] {
        s->sent_ += static_cast<std::uint64_t>(c.res);
        s->sending_->clear();
        s->offset_ = 0;
        s->busy_ = false;
        if (s->waiter_) s->loop_->resume(std::exchange(s->waiter_, {}));
        return;
    }
    s->on_other(c);
}

void SendStream::on_other(const Completion& c) noexcept {
    bool going_on = false;  // a send is in flight again
    if (c.res > 0) {
        offset_ += static_cast<std::size_t>(c.res);
        sent_ += static_cast<std::uint64_t>(c.res);
        if (offset_ < sending_->size()) {
            (void)loop_->issue(*this);  // a short send: the rest, from where it stopped
            going_on = true;
        }
    } else {
        error_ = c.res == 0 ? -EPIPE : c.res;
        gathering_->clear();
    }
    if (!going_on) {
        sending_->clear();
        if (!gathering_->empty()) {
            start();  // what gathered meanwhile; drained() waits for it too
            going_on = true;
        } else {
            busy_ = false;
            offset_ = 0;
        }
    }
    if (!waiter_) return;
    // drained() waits for the end; below(n) for the backlog to shrink under n.
    if (!going_on || (wake_below_ != 0 && backlog() < wake_below_))
        loop_->resume(std::exchange(waiter_, {}));
}

}  // namespace uringkit::async
