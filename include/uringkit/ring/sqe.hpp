// Handles for one submission entry and one completion, and the file reference
// that decides IOSQE_FIXED_FILE.
#pragma once

#include "uringkit/cxx20.hpp"
#include "uringkit/sys/uapi.hpp"

#include <cstdint>
#include <optional>

namespace uringkit {

// A file descriptor as the process knows it.
struct Fd {
    int value;
};
// An index into the ring's registered file table (a "direct descriptor").
struct Fixed {
    unsigned index;
};

// What an operation targets.  Built only from Fd or Fixed, so an operation on a
// registered slot always carries IOSQE_FIXED_FILE and a plain descriptor never
// does: the flag follows the type and cannot be forgotten or set by mistake.
class File {
public:
    constexpr File(Fd fd) noexcept : value_(fd.value), fixed_(false) {}
    constexpr File(Fixed f) noexcept : value_(static_cast<int>(f.index)), fixed_(true) {}
    constexpr int raw() const noexcept { return value_; }
    constexpr bool fixed() const noexcept { return fixed_; }
    // Writes fd and the fixed-file flag into a prepared SQE.
    void apply(io_uring_sqe& s) const noexcept {
        s.fd = value_;
        if (fixed_) s.flags |= IOSQE_FIXED_FILE;
    }

private:
    int value_;
    bool fixed_;
};

// A 128-byte submission entry (a BigRing's): the usual 64 bytes, then the
// 64 a passthrough command runs into.  An operation that needs them takes a
// BigSqe& in its prepare(), so it cannot be written into a 64-byte slot by
// any path: Ring::prepare, the async layer and hand-written loops all hand
// operations an io_uring_sqe&.
class BigSqe {
public:
    io_uring_sqe& sqe() noexcept { return *reinterpret_cast<io_uring_sqe*>(bytes_); }
    const io_uring_sqe& sqe() const noexcept {
        return *reinterpret_cast<const io_uring_sqe*>(bytes_);
    }
    unsigned char* bytes() noexcept { return bytes_; }
    const unsigned char* bytes() const noexcept { return bytes_; }

private:
    alignas(io_uring_sqe) unsigned char bytes_[128];
};
static_assert(sizeof(BigSqe) == 128);

// A prepared SQE, returned by Ring::prepare().  Empty when the SQ was full
// (test it like a pointer); the setters add per-request flags and user_data.
// On an empty Sqe the setters do nothing, so `ring.prepare(op).user_data(x)`
// on a full SQ is a no-op to detect, not a null dereference.
class Sqe {
public:
    constexpr Sqe() noexcept = default;
    explicit constexpr Sqe(io_uring_sqe* s) noexcept : s_(s) {}
    explicit constexpr operator bool() const noexcept { return s_ != nullptr; }
    io_uring_sqe* get() const noexcept { return s_; }

    Sqe& user_data(std::uint64_t v) noexcept {
        return set([&] { s_->user_data = v; });
    }
    template <class T>
    Sqe& user_data(T* p) noexcept {
        return user_data(reinterpret_cast<std::uintptr_t>(p));
    }
    // The next SQE runs only if this one succeeds (a short read counts as a failure).
    Sqe& link() noexcept { return flag(IOSQE_IO_LINK); }
    // The next SQE runs whatever this one's result.
    Sqe& hardlink() noexcept { return flag(IOSQE_IO_HARDLINK); }
    // Starts only after every earlier SQE completed.
    Sqe& drain() noexcept { return flag(IOSQE_IO_DRAIN); }
    // Go straight to an io-wq worker instead of trying inline first.
    Sqe& async() noexcept { return flag(IOSQE_ASYNC); }
    // Post no CQE when it succeeds (IORING_FEAT_CQE_SKIP).
    Sqe& skip_success() noexcept { return flag(IOSQE_CQE_SKIP_SUCCESS); }
    Sqe& personality(std::uint16_t id) noexcept {
        return set([&] { s_->personality = id; });
    }

private:
    Sqe& flag(unsigned f) noexcept {
        return set([&] { s_->flags |= static_cast<std::uint8_t>(f); });
    }
    template <class F>
    Sqe& set(F&& f) noexcept {
        if (s_) f();
        return *this;
    }
    io_uring_sqe* s_ = nullptr;
};

// One completion, copied out of the CQ so it stays valid after the head moves.
struct Completion {
    std::uint64_t user_data;
    std::int32_t res;  // bytes, a new fd, 0, or -errno: the kernel's own meaning
    std::uint32_t flags;

    template <class T>
    T* user_ptr() const noexcept {
        return reinterpret_cast<T*>(static_cast<std::uintptr_t>(user_data));
    }
    // More completions will follow for this request (multishot, zero-copy send).
    bool more() const noexcept { return (flags & IORING_CQE_F_MORE) != 0; }
    // The provided buffer the kernel picked, when one was selected.
    std::optional<std::uint16_t> buffer_id() const noexcept {
        if (!(flags & IORING_CQE_F_BUFFER)) return std::nullopt;
        return static_cast<std::uint16_t>(flags >> IORING_CQE_BUFFER_SHIFT);
    }
    bool sock_nonempty() const noexcept { return (flags & IORING_CQE_F_SOCK_NONEMPTY) != 0; }
    // An incrementally consumed buffer (6.12) that stays the kernel's: more
    // data will follow this completion's in the same buffer.
    bool buffer_more() const noexcept { return (flags & IORING_CQE_F_BUF_MORE) != 0; }
};

}  // namespace uringkit
