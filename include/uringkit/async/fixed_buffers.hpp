// Registered buffers owned by the loop, lent to operations by value
// (tokio-uring's model):
//
//     async::FixedBufferPool& pool = loop.register_fixed_buffers(8, 64 * 1024);
//     async::FixedBuffer buf = co_await pool.take();          // waits while all are lent
//     std::memcpy(buf.data(), text, n);
//     buf.resize(n);
//     auto [w, back] = co_await loop.write_fixed(Fd{fd}, std::move(buf), 0);   // writes
//     back.size() bytes auto [r, got] = co_await loop.read_fixed(Fd{fd}, std::move(back), 0);    //
//     got.size() == r.res
//
// The operation holds the buffer while the kernel may use it.  If the
// awaiting coroutine is destroyed first, the buffer does not go back to the
// pool with the frame: the loop keeps it lent until the operation's final
// completion, so the next taker never shares it with the kernel.  The pool's
// memory is the loop's and goes (unregistered) with the loop, after it
// drained.
#pragma once

#include "uringkit/async/loop.hpp"
#include "uringkit/cxx20.hpp"

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace uringkit::async {

class FixedBufferPool;

// One registered buffer lent from a FixedBufferPool (move-only).  Destroyed
// or reset(), it goes back to the pool.
class FixedBuffer {
public:
    FixedBuffer() noexcept = default;
    FixedBuffer(FixedBuffer&& o) noexcept
        : pool_(std::exchange(o.pool_, nullptr)),
          index_(o.index_),
          size_(std::exchange(o.size_, 0)) {}
    FixedBuffer& operator=(FixedBuffer&& o) noexcept {
        if (this != &o) {
            reset();
            pool_ = std::exchange(o.pool_, nullptr);
            index_ = o.index_;
            size_ = std::exchange(o.size_, 0);
        }
        return *this;
    }
    FixedBuffer(const FixedBuffer&) = delete;
    FixedBuffer& operator=(const FixedBuffer&) = delete;
    ~FixedBuffer() { reset(); }

    explicit operator bool() const noexcept { return pool_ != nullptr; }
    std::byte* data() const noexcept;
    std::size_t capacity() const noexcept;
    // The registered buffer's index (the SQE's buf_index).
    std::uint16_t index() const noexcept { return index_; }
    // The bytes that hold data: what a read filled, or what a write sends.
    std::size_t size() const noexcept { return size_; }
    void resize(std::size_t n) noexcept {
        size_ = static_cast<std::uint32_t>(n < capacity() ? n : capacity());
    }
    std::span<std::byte> bytes() const noexcept { return {data(), size_}; }
    // Back to the pool now.
    void reset() noexcept;

private:
    friend class FixedBufferPool;
    friend class detail::LoopCore;
    friend class detail::Leftover;
    FixedBuffer(FixedBufferPool* pool, std::uint16_t index) noexcept : pool_(pool), index_(index) {}
    // Lets go without giving back: the loop holds the index now.
    std::uint16_t surrender() noexcept {
        pool_ = nullptr;
        size_ = 0;
        return index_;
    }

    FixedBufferPool* pool_ = nullptr;
    std::uint16_t index_ = 0;
    std::uint32_t size_ = 0;
};

namespace detail {
inline Leftover Leftover::fixed(FixedBuffer&& buffer) noexcept {
    Leftover l;
    if (buffer) l.lent_fixed_ = buffer.surrender();
    return l;
}
}  // namespace detail

// What read_fixed and write_fixed give back: the result and the buffer.
struct FixedResult {
    Result result;
    FixedBuffer buffer;
};

// `count` buffers of `size` bytes each (page-aligned, so O_DIRECT can use
// them), registered with the loop's ring.  Made by
// Loop::register_fixed_buffers(); the loop owns it.
class FixedBufferPool {
public:
    FixedBufferPool(const FixedBufferPool&) = delete;
    FixedBufferPool& operator=(const FixedBufferPool&) = delete;
    ~FixedBufferPool();

    std::size_t count() const noexcept { return count_; }
    std::size_t buffer_size() const noexcept { return size_; }
    // Buffers not lent now.
    std::size_t available() const noexcept { return free_.size(); }

    // A buffer, or an empty one when all are lent.
    FixedBuffer try_take() noexcept {
        const int i = pop();
        return i < 0 ? FixedBuffer() : FixedBuffer(this, static_cast<std::uint16_t>(i));
    }
    struct TakeAwaiter;
    // co_await pool.take() -> FixedBuffer: waits (first come, first served)
    // while every buffer is lent.
    TakeAwaiter take() noexcept;

private:
    friend class detail::LoopCore;
    friend class detail::Leftover;
    friend class FixedBuffer;
    FixedBufferPool(detail::LoopCore& loop, unsigned count, std::size_t size);
    int pop() noexcept;
    void give_back(std::uint16_t index) noexcept;
    std::byte* address(std::uint16_t index) const noexcept {
        return base_ + static_cast<std::size_t>(index) * size_;
    }

    detail::LoopCore* loop_;
    std::byte* base_ = nullptr;
    std::size_t count_;
    std::size_t size_;
    std::vector<std::uint16_t> free_;
    TakeAwaiter* waiters_head_ = nullptr;
    TakeAwaiter* waiters_tail_ = nullptr;
};

// Waits for a buffer.  A buffer given back while someone waits is handed to
// the first waiter, which resumes through a NOP's completion (from the
// loop's completion path, not inside the giver's reset()).
struct FixedBufferPool::TakeAwaiter : detail::Pending {
    FixedBufferPool* pool;
    std::coroutine_handle<> handle;
    TakeAwaiter* next_waiter = nullptr;
    std::int32_t handed = -1;  // the buffer this waiter holds, once it has one
    std::uint64_t ud = 0;      // the NOP that resumes it, while in flight
    bool waiting = false;

    explicit TakeAwaiter(FixedBufferPool* p) noexcept : pool(p) {
        complete = &on_cqe;
        fill = &on_fill;
    }
    TakeAwaiter(const TakeAwaiter&) = delete;
    TakeAwaiter& operator=(const TakeAwaiter&) = delete;
    ~TakeAwaiter();

    bool await_ready() noexcept {
        handed = pool->pop();
        return handed >= 0;
    }
    void await_suspend(std::coroutine_handle<> h) noexcept;
    FixedBuffer await_resume() noexcept {
        return FixedBuffer(pool, static_cast<std::uint16_t>(std::exchange(handed, -1)));
    }

    static void on_fill(Pending* self, io_uring_sqe* const* sqes) noexcept;
    static void on_cqe(Pending* self, const Completion& c) noexcept;
};

inline FixedBufferPool::TakeAwaiter FixedBufferPool::take() noexcept {
    return TakeAwaiter(this);
}

inline std::byte* FixedBuffer::data() const noexcept {
    return pool_ ? pool_->address(index_) : nullptr;
}
inline std::size_t FixedBuffer::capacity() const noexcept {
    return pool_ ? pool_->buffer_size() : 0;
}
inline void FixedBuffer::reset() noexcept {
    if (pool_) std::exchange(pool_, nullptr)->give_back(index_);
    size_ = 0;
}

namespace detail {

// read_fixed / write_fixed: the buffer travels in the awaiter and comes back
// in the FixedResult.  If the awaiter is destroyed with its SQE in flight,
// the buffer is surrendered to the loop, which gives it back to the pool at
// the final completion (Leftover::fixed).
template <bool Write>
struct FixedAwaiter : Pending {
    LoopCore* loop;
    File file;
    FixedBuffer buffer;
    std::uint64_t offset;
    std::coroutine_handle<> handle;
    Result result;
    std::uint64_t ud = 0;
    std::int32_t refused = 0;

    FixedAwaiter(LoopCore* l, File f, FixedBuffer&& b, std::uint64_t off) noexcept
        : loop(l), file(f), buffer(std::move(b)), offset(off) {
        complete = &on_cqe;
        fill = &on_fill;
    }
    FixedAwaiter(const FixedAwaiter&) = delete;
    FixedAwaiter& operator=(const FixedAwaiter&) = delete;
    ~FixedAwaiter() {
        if (deferred)
            loop->withdraw(*this);  // never reached the kernel: the buffer just goes back
        else if (ud)
            loop->abandon(ud, Leftover::fixed(std::move(buffer)));
    }

    bool await_ready() noexcept {
        if (buffer) return false;
        result = {-EINVAL, 0};  // no buffer: nothing to read into or write from
        return true;
    }
    bool await_suspend(std::coroutine_handle<> h) noexcept {
        handle = h;
        return loop->issue(*this);
    }
    FixedResult await_resume() noexcept {
        if (!Write) buffer.resize(result.res > 0 ? static_cast<std::size_t>(result.res) : 0);
        return {result, std::move(buffer)};
    }

    static void on_fill(Pending* self, io_uring_sqe* const* sqes) noexcept {
        auto* a = static_cast<FixedAwaiter*>(self);
        io_uring_sqe& s = *sqes[0];
        if constexpr (Write)
            op::WriteFixed(a->file, a->buffer.data(), static_cast<std::uint32_t>(a->buffer.size()),
                           a->offset, a->buffer.index())
                .prepare(s);
        else
            op::ReadFixed(a->file, a->buffer.data(),
                          static_cast<std::uint32_t>(a->buffer.capacity()), a->offset,
                          a->buffer.index())
                .prepare(s);
        a->ud = a->loop->track(a);
        a->refused = a->loop->refusal(s);
        s.user_data = a->ud;
    }
    static void on_cqe(Pending* self, const Completion& c) noexcept {
        auto* a = static_cast<FixedAwaiter*>(self);
        a->result = {c.res, c.flags};
        a->ud = 0;
        if (a->refused) a->result = {a->refused, 0};
        a->loop->resume(a->handle);
    }
};

}  // namespace detail

// Reads up to buf.capacity() bytes at `offset` into a buffer of the loop's
// pool; gives the buffer back with its size() set to the bytes read.
inline detail::FixedAwaiter<false> Loop::read_fixed(File f, FixedBuffer buf,
                                                    std::uint64_t offset) noexcept {
    return {this, f, std::move(buf), offset};
}
// Writes buf.size() bytes at `offset` from a buffer of the loop's pool.
inline detail::FixedAwaiter<true> Loop::write_fixed(File f, FixedBuffer buf,
                                                    std::uint64_t offset) noexcept {
    return {this, f, std::move(buf), offset};
}

}  // namespace uringkit::async
