// The loop's submission queue: SQEs placed now when the SQ has room, or
// queued in order (whole chains, fire-and-forget SQEs) until the next turn;
// and the NOP that stands in for a refused SQE.
#include "uringkit/async/loop.hpp"
#include "uringkit/sys/error.hpp"

#include <cerrno>
#include <cstring>
#include <new>
#include <system_error>

namespace uringkit::async::detail {

void make_nop(io_uring_sqe& s) noexcept {
    const std::uint64_t ud = s.user_data;
    std::memset(&s, 0, sizeof s);
    s.opcode = IORING_OP_NOP;
    s.user_data = ud;
}

bool LoopCore::room(unsigned n) noexcept {
    if (ring_->sq_space_left() >= n) return true;
    // The result is not needed here.  io_uring_enter fails only when it took
    // no SQE, so a failed submit loses nothing: the SQEs stay in the SQ, the
    // caller queues what did not fit, and the next turn submits them again,
    // throwing if the ring still fails (AsyncFaults tests both).
    if (ring_->sq_pending() > 0) (void)ring_->submit();
    return ring_->sq_space_left() >= n;
}

void LoopCore::place(Pending& p) noexcept {
    io_uring_sqe* sqes[detail::kMaxChain];
    for (unsigned k = 0; k < p.sqes; ++k) sqes[k] = ring_->get_sqe();
    p.fill(&p, sqes);
}

bool LoopCore::issue_slow(Pending& p) noexcept {
    if (p.sqes > ring_->sq_entries() || draining_) return false;
    // Behind anything already queued, so SQEs reach the kernel in order; and
    // only with a slot for each SQE (no allocation while they are filled).
    if (!deferred_head_ && posted_.empty() && make_free(p.sqes) && room(p.sqes)) {
        place(p);
        return true;
    }
    p.deferred = true;
    p.next_deferred = nullptr;
    if (deferred_tail_)
        deferred_tail_->next_deferred = &p;
    else
        deferred_head_ = &p;
    deferred_tail_ = &p;
    return true;
}

void LoopCore::withdraw(Pending& p) noexcept {
    if (!p.deferred) return;
    Pending* prev = nullptr;
    for (Pending* q = deferred_head_; q; prev = q, q = q->next_deferred) {
        if (q != &p) continue;
        if (prev)
            prev->next_deferred = q->next_deferred;
        else
            deferred_head_ = q->next_deferred;
        if (deferred_tail_ == q) deferred_tail_ = prev;
        break;
    }
    p.deferred = false;
    p.next_deferred = nullptr;
}

void LoopCore::post_sqe(const io_uring_sqe& s) noexcept {
    if (!deferred_head_ && posted_.empty() && room(1)) {
        *ring_->get_sqe() = s;
        return;
    }
    try {
        posted_.push_back(s);
    } catch (const std::bad_alloc&) {
        // Nowhere to keep it: the loop ends this turn with the error (run()
        // drains first, which cancels whatever this SQE was to cancel).
        if (!error_) error_ = std::current_exception();
    }
}

void LoopCore::flush_deferred() {
    std::size_t posted = 0;
    while (posted < posted_.size() || deferred_head_) {
        const unsigned need = posted < posted_.size() ? 1u : deferred_head_->sqes;
        if (!room(need)) {
            const int r = ring_->reserve(need);
            if (r == -EBUSY || r == -EAGAIN) break;  // reap first, then go on
            if (r < 0) {
                posted_.erase(posted_.begin(),
                              posted_.begin() + static_cast<std::ptrdiff_t>(posted));
                throw RingError("io_uring_enter", -r);
            }
            continue;
        }
        if (posted < posted_.size()) {
            *ring_->get_sqe() = posted_[posted++];
            continue;
        }
        // The slots its SQEs take; out of memory, run() drains and rethrows.
        if (!make_free(deferred_head_->sqes)) throw std::bad_alloc();
        Pending* p = deferred_head_;
        deferred_head_ = p->next_deferred;
        if (!deferred_head_) deferred_tail_ = nullptr;
        p->deferred = false;
        p->next_deferred = nullptr;
        place(*p);
    }
    posted_.erase(posted_.begin(), posted_.begin() + static_cast<std::ptrdiff_t>(posted));
}

}  // namespace uringkit::async::detail
