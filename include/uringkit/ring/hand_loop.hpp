// What a hand-written ring loop needs, written once (tokio-uring's driver
// owns the same three things): user_data that carries an object and a tag,
// "get an SQE or fail clearly" without throwing from a completion handler,
// and which io_uring_enter results are transient.  load's workers, serve's
// uring engine and the async Loop use it; a new tool should use the async
// layer (async/loop.hpp) unless a measurement says otherwise
// (docs/library.md, "Which style").
//
// Errors, as everywhere in ring/: the hot path returns -errno; RingError
// (a std::system_error naming the io_uring call) is thrown only outside
// completion handlers, by check_enter() and SqeSupply::check().
#pragma once

#include "uringkit/cxx20.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/error.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <new>
#include <system_error>

namespace uringkit {

// What an io_uring_enter result means to a loop (Ring::submit_and_wait,
// reserve, wait_for_completion return the kernel's own).
enum class EnterResult {
    ok,         // >= 0
    transient,  // -EINTR (a signal), -EAGAIN, -EBUSY (reap completions, then again)
    timed_out,  // -ETIME: a timed wait ended without a completion; not an error
    dropped,    // -EBADR: the kernel dropped completions (5.19+, CQ overflow
                //   it could not hold): never transient, the loop's count is wrong
    failed,     // anything else: retrying will not help
};

constexpr EnterResult classify_enter(int r) noexcept {
    if (r >= 0) return EnterResult::ok;
    switch (-r) {
        case EINTR:
        case EAGAIN:
        case EBUSY:
            return EnterResult::transient;
        case ETIME:
            return EnterResult::timed_out;
        case EBADR:
            return EnterResult::dropped;
        default:
            return EnterResult::failed;
    }
}

// Whether a loop goes on after this result (then reaps what is there).
constexpr bool enter_continues(int r) noexcept {
    const EnterResult k = classify_enter(r);
    return k != EnterResult::failed && k != EnterResult::dropped;
}

// Throws RingError(call, -r) when the loop cannot go on; the one place a
// hand-written loop turns an enter result into an exception.
inline void check_enter(int r, const char* call = "io_uring_enter") {
    if (!enter_continues(r)) throw RingError(call, -r);
}

// user_data that names an object of type T and a tag in the low `Bits`
// bits its alignment leaves free, so a completion finds both without a
// lookup.  Values below 1 << Bits (no object) are free for fixed uses.
template <class T, unsigned Bits = 3>
struct TaggedUserData {
    static_assert(alignof(T) >= (1u << Bits), "the tag must fit in the alignment's zero bits");
    static constexpr std::uint64_t kTagMask = (std::uint64_t{1} << Bits) - 1;

    static std::uint64_t make(const T* object, std::uint64_t tag) noexcept {
        return reinterpret_cast<std::uintptr_t>(object) | (tag & kTagMask);
    }
    static T* object(std::uint64_t ud) noexcept {
        return reinterpret_cast<T*>(static_cast<std::uintptr_t>(ud & ~kTagMask));
    }
    static std::uint64_t tag(std::uint64_t ud) noexcept { return ud & kTagMask; }
};

// Get an SQE or fail clearly.  prepare(op) makes room first (Ring::reserve:
// a full SQ goes to the kernel); when the kernel takes none of the prepared
// SQEs (-EBUSY/-EAGAIN: it wants completions reaped, which cannot nest in
// the dispatch that calls this) or the ring fails, the supply records the
// first error and hands out a scratch SQE that never reaches the kernel,
// so a completion handler never throws.  A handler that meets another
// failure records it with fail().  The loop calls check() after each batch
// (outside any handler) and ends with the first failure, explained.
class SqeSupply {
public:
    SqeSupply() noexcept = default;  // bound to a ring before the first prepare()
    explicit SqeSupply(Ring& ring) noexcept : ring_(&ring) {}

    template <class Op>
    Sqe prepare(const Op& op) noexcept {
        if (error_ == 0) [[likely]] {
            const int r = ring_->reserve(1);
            if (r == 0) [[likely]]
                return ring_->prepare(op);
            fail(r, "io_uring_enter (making room in the submission queue)", true);
        }
        return scratch(op);
    }
    // Room for `n` SQEs at once (a linked chain, which must not be split):
    // false, with the failure recorded, when there is none.
    bool reserve(unsigned n) noexcept {
        if (error_ != 0) return false;
        const int r = ring_->reserve(n);
        if (r < 0) fail(r, "io_uring_enter (making room in the submission queue)", true);
        return r == 0;
    }
    // A scratch SQE: for the rest of a chain whose reserve() failed.
    template <class Op>
    Sqe scratch(const Op& op) noexcept {
        auto* s = ::new (static_cast<void*>(scratch_)) io_uring_sqe{};
        op.prepare(*s);
        return Sqe(s);
    }
    // Records a failure (-errno) met in a completion handler; the first one
    // wins.  `io_uring_call`: whether `what` names a failed io_uring call
    // (check() then throws RingError, else a plain std::system_error).
    void fail(int err, const char* what, bool io_uring_call = false) noexcept {
        if (error_ != 0) return;
        error_ = err < 0 ? err : -err;
        what_ = what;
        io_uring_call_ = io_uring_call;
    }
    // 0, or the first failure's -errno.
    int error() const noexcept { return error_; }
    void check() const {
        if (error_ == 0) [[likely]]
            return;
        if (io_uring_call_) throw RingError(what_, -error_);
        throw std::system_error(-error_, std::system_category(), what_);
    }

private:
    Ring* ring_ = nullptr;
    int error_ = 0;
    const char* what_ = nullptr;
    bool io_uring_call_ = false;
    // Raw storage: io_uring_sqe's flexible cmd[] may not be a class member.
    alignas(io_uring_sqe) std::byte scratch_[sizeof(io_uring_sqe)]{};
};

}  // namespace uringkit
