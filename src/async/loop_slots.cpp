// The loop's slots: the user_data each operation carries, what an abandoned
// operation still holds until its final completion, and the completions
// that dispatch() does not handle inline.
#include "uringkit/async/loop.hpp"

#include <unistd.h>

#include <new>

namespace uringkit::async::detail {

std::uint32_t LoopCore::grow_slots() {
    // Both tables grow before either changes: a failure leaves them alike.
    if (slots_.size() == slots_.capacity() || leftovers_.size() == leftovers_.capacity()) {
        const std::size_t want = slots_.size() * 2 + 16;
        slots_.reserve(want);
        leftovers_.reserve(want);
    }
    slots_.emplace_back();
    leftovers_.emplace_back();
    return slot_count_++;
}

bool LoopCore::make_free(unsigned n) noexcept {
    try {
        while (free_count_ < n) free_slot(grow_slots());
    } catch (const std::bad_alloc&) {
        return false;
    }
    return true;
}

std::uint64_t LoopCore::track_persistent(Pending* target) {
    // Kept off dispatch()'s inline path (no target there), which then never
    // has to ask whether a completion is the last.
    const std::uint64_t ud = track(nullptr);
    const auto i = static_cast<std::uint32_t>(ud);
    slots_[i].persistent = true;
    leftovers_[i].held_ = target;
    --in_flight_;
    return ud;
}

std::uint64_t LoopCore::own_slot(Pending* target) {
    const std::uint64_t ud = track(target);
    slots_[static_cast<std::uint32_t>(ud)].owned = true;
    --in_flight_;  // reuse() counts each operation
    return ud;
}

void LoopCore::disown(std::uint64_t ud) noexcept {
    if (!owns(ud)) return;
    const auto i = static_cast<std::uint32_t>(ud);
    if (!slots_[i].owned) return;
    slots_[i].owned = false;
    free_slot(i);
}

void LoopCore::untrack(std::uint64_t ud) noexcept {
    if (!owns(ud)) return;
    const auto i = static_cast<std::uint32_t>(ud);
    Slot& s = slots_[i];
    if (!s.persistent) return;
    s.persistent = false;
    leftovers_[i].held_ = nullptr;
    free_slot(i);
}

void LoopCore::abandon(std::uint64_t ud, Leftover keep) noexcept {
    const auto i = static_cast<std::uint32_t>(ud);
    if (!owns(ud) || slots_[i].persistent) {
        // Not an operation of this loop's in flight: nothing names the memory.
        if (keep.drop_) keep.drop_(keep.held_);
        if (keep.lent_fixed_ >= 0 && fixed_)
            fixed_->give_back(static_cast<std::uint16_t>(keep.lent_fixed_));
        return;
    }
    slots_[i].target = nullptr;
    leftovers_[i] = keep;
    cancel(ud);
}

void LoopCore::dispatch_other(const Completion& c) noexcept {
    const std::uint64_t ud = c.user_data;
    const auto i = static_cast<std::uint32_t>(ud);
    if (ud == kUntracked) return;  // a post() that got no slot
    if (!owns(ud)) {
        ++foreign_;
        if (foreign_handler_) foreign_handler_(foreign_context_, c);
        return;
    }
    if (slots_[i].persistent) {
        auto* target = static_cast<Pending*>(leftovers_[i].held_);
        target->complete(target, c);
        return;
    }
    const Leftover s = leftovers_[i];  // abandoned: nobody waits
    if (!c.more()) {
        slots_[i].owned = false;     // an owned slot goes too, with its last operation
        leftovers_[i] = Leftover{};  // a free slot holds nothing (track() relies on it)
        release(i);
    }
    // Nobody waits: give back what the completion carries, once take() has
    // checked it is a whole buffer of the group (not a piece the kernel is
    // still filling, not a forged id, not one already given back).
    if (s.pool_)
        if (const BufferRing::Delivery d = s.pool_->take(c); d.has_buffer) recycle(*s.pool_, d.id);
    if (s.close_results_ && c.res >= 0 && !(c.flags & IORING_CQE_F_NOTIF)) ::close(c.res);
    // The kernel is done with the registered buffer only now.
    if (s.lent_fixed_ >= 0 && !c.more())
        fixed_->give_back(static_cast<std::uint16_t>(s.lent_fixed_));
    if (s.drop_ && !c.more()) s.drop_(s.held_);
}

}  // namespace uringkit::async::detail
