#include "uringkit/async/fixed_buffers.hpp"
#include "uringkit/sys/error.hpp"
#include "uringkit/sys/sanitizers.hpp"

#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

#if URINGKIT_ASAN
#include <sanitizer/asan_interface.h>
// A buffer in the pool (not lent) is poisoned: code that kept data() after
// giving the buffer back is caught at its first touch.
#define URINGKIT_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define URINGKIT_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define URINGKIT_POISON(p, n) ((void)(p), (void)(n))
#define URINGKIT_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace uringkit::async {

FixedBufferPool& detail::LoopCore::register_fixed_buffers(unsigned count, std::size_t size) {
    if (fixed_) throw std::logic_error("register_fixed_buffers: this loop has a pool already");
    fixed_.reset(new FixedBufferPool(*this, count, size));
    return *fixed_;
}

FixedBufferPool::FixedBufferPool(detail::LoopCore& loop, unsigned count, std::size_t size)
    : loop_(&loop), count_(count) {
    // The SQE's buf_index is 16 bits; the kernel takes at most 16384 (IORING_MAX_REG_BUFFERS).
    if (count == 0 || count > 16384)
        throw std::invalid_argument("register_fixed_buffers: count must be 1 to 16384");
    if (size == 0 || size > (1u << 30))
        throw std::invalid_argument("register_fixed_buffers: size must be 1 byte to 1 GiB");
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    size_ = (size + page - 1) / page * page;  // page-aligned buffers: O_DIRECT can use them
    void* mem =
        ::mmap(nullptr, size_ * count_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    // Not an io_uring call: a plain system_error (RingError's advice would mislead).
    if (mem == MAP_FAILED)
        throw std::system_error(errno, std::system_category(), "mmap of registered buffers");
    base_ = static_cast<std::byte*>(mem);
    std::vector<iovec> regs(count_);
    for (std::size_t i = 0; i < count_; ++i)
        regs[i] = {address(static_cast<std::uint16_t>(i)), size_};
    try {
        loop.ring().register_buffers(regs);
    } catch (...) {
        ::munmap(base_, size_ * count_);
        throw;
    }
    free_.reserve(count_);  // give_back() runs on the completion path: no allocation there
    for (std::size_t i = count_; i-- > 0;) {
        free_.push_back(static_cast<std::uint16_t>(i));
        URINGKIT_POISON(address(static_cast<std::uint16_t>(i)), size_);
    }
}

FixedBufferPool::~FixedBufferPool() {
    // The loop drained before it let the pool go: no request names a buffer.
    (void)loop_->ring().register_raw(IORING_UNREGISTER_BUFFERS, nullptr, 0);
    URINGKIT_UNPOISON(base_, size_ * count_);  // the shadow would outlive the mapping
    ::munmap(base_, size_ * count_);
}

int FixedBufferPool::pop() noexcept {
    if (free_.empty()) return -1;
    const std::uint16_t i = free_.back();
    free_.pop_back();
    URINGKIT_UNPOISON(address(i), size_);
    return i;
}

void FixedBufferPool::give_back(std::uint16_t index) noexcept {
    // A waiter takes it over (resumed by a NOP's completion); while the loop
    // drains, nobody is resumed and the buffer simply goes back.
    if (TakeAwaiter* w = waiters_head_; w && !loop_->draining()) {
        waiters_head_ = w->next_waiter;
        if (!waiters_head_) waiters_tail_ = nullptr;
        w->next_waiter = nullptr;
        w->waiting = false;
        w->handed = index;
        (void)loop_->issue(*w);  // one SQE always fits a ring
        return;
    }
    URINGKIT_POISON(address(index), size_);
    free_.push_back(index);
}

void FixedBufferPool::TakeAwaiter::await_suspend(std::coroutine_handle<> h) noexcept {
    handle = h;
    waiting = true;
    if (pool->waiters_tail_)
        pool->waiters_tail_->next_waiter = this;
    else
        pool->waiters_head_ = this;
    pool->waiters_tail_ = this;
}

FixedBufferPool::TakeAwaiter::~TakeAwaiter() {
    if (waiting) {
        TakeAwaiter* prev = nullptr;
        for (TakeAwaiter* w = pool->waiters_head_; w; prev = w, w = w->next_waiter) {
            if (w != this) continue;
            if (prev)
                prev->next_waiter = next_waiter;
            else
                pool->waiters_head_ = next_waiter;
            if (pool->waiters_tail_ == this) pool->waiters_tail_ = prev;
            break;
        }
    }
    if (deferred)
        pool->loop_->withdraw(*this);
    else if (ud)
        pool->loop_->abandon(ud, detail::Leftover::nothing());  // a NOP: it names no memory
    if (handed >= 0) pool->give_back(static_cast<std::uint16_t>(handed));
}

void FixedBufferPool::TakeAwaiter::on_fill(Pending* self, io_uring_sqe* const* sqes) noexcept {
    auto* a = static_cast<TakeAwaiter*>(self);
    op::Nop{}.prepare(*sqes[0]);
    a->ud = a->pool->loop_->track(a);
    sqes[0]->user_data = a->ud;
}

void FixedBufferPool::TakeAwaiter::on_cqe(Pending* self, const Completion&) noexcept {
    auto* a = static_cast<TakeAwaiter*>(self);
    a->ud = 0;
    a->pool->loop_->resume(a->handle);
}

}  // namespace uringkit::async
