// The loop's slots: the user_data each operation carries, what an abandoned
// operation still holds until its final completion, and the completions
// that dispatch() does not handle inline.
#include "uringkit/async/loop.hpp"

#include <unistd.h>

namespace uringkit::async {

std::uint32_t Loop::grow_slots() {
    slots_.emplace_back();
    leftovers_.emplace_back();
    return slot_count_++;
}

std::uint64_t Loop::track_persistent(Pending* target) noexcept {
    // Kept off dispatch()'s inline path (no target there), which then never
    // has to ask whether a completion is the last.
    const std::uint64_t ud = track(nullptr);
    const auto i = static_cast<std::uint32_t>(ud);
    slots_[i].persistent = true;
    leftovers_[i].held = target;
    --in_flight_;
    return ud;
}

std::uint64_t Loop::own_slot(Pending* target) noexcept {
    const std::uint64_t ud = track(target);
    slots_[static_cast<std::uint32_t>(ud)].owned = true;
    --in_flight_;  // reuse() counts each operation
    return ud;
}

void Loop::disown(std::uint64_t ud) noexcept {
    if (!owns(ud)) return;
    const auto i = static_cast<std::uint32_t>(ud);
    if (!slots_[i].owned) return;
    slots_[i].owned = false;
    free_slot(i);
}

void Loop::untrack(std::uint64_t ud) noexcept {
    if (!owns(ud)) return;
    const auto i = static_cast<std::uint32_t>(ud);
    Slot& s = slots_[i];
    if (!s.persistent) return;
    s.persistent = false;
    leftovers_[i].held = nullptr;
    free_slot(i);
}

void Loop::abandon(std::uint64_t ud, BufferRing* pool, bool close_results) noexcept {
    const auto i = static_cast<std::uint32_t>(ud);
    if (!owns(ud) || slots_[i].persistent) return;
    slots_[i].target = nullptr;
    leftovers_[i].pool = pool;
    leftovers_[i].close_results = close_results;
    cancel(ud);
}

void Loop::abandon_fixed(std::uint64_t ud, FixedBuffer&& buf) noexcept {
    const auto i = static_cast<std::uint32_t>(ud);
    if (!owns(ud) || !buf) return;
    leftovers_[i].lent_fixed = buf.surrender();
    abandon(ud, nullptr);
}

void Loop::abandon_holding(std::uint64_t ud, void* held, Drop drop) noexcept {
    if (!owns(ud) || slots_[static_cast<std::uint32_t>(ud)].persistent) return;
    Leftover& l = leftovers_[static_cast<std::uint32_t>(ud)];
    l.held = held;
    l.drop = drop;
    abandon(ud, nullptr);
}

void Loop::dispatch_other(const Completion& c) noexcept {
    const std::uint64_t ud = c.user_data;
    const auto i = static_cast<std::uint32_t>(ud);
    if (!owns(ud)) {
        ++foreign_;
        if (foreign_handler_) foreign_handler_(foreign_context_, c);
        return;
    }
    if (slots_[i].persistent) {
        auto* target = static_cast<Pending*>(leftovers_[i].held);
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
    if (s.pool)
        if (const BufferRing::Delivery d = s.pool->take(c); d.has_buffer) recycle(*s.pool, d.id);
    if (s.close_results && c.res >= 0 && !(c.flags & IORING_CQE_F_NOTIF)) ::close(c.res);
    // The kernel is done with the registered buffer only now.
    if (s.lent_fixed >= 0 && !c.more()) fixed_->give_back(static_cast<std::uint16_t>(s.lent_fixed));
    if (s.drop && !c.more()) s.drop(s.held);
}

}  // namespace uringkit::async
