// async::Mutex and async::Event (async/sync.hpp): the waits go through the
// ring as IORING_OP_FUTEX_WAIT, the wakes through futex(2), so a wake needs
// no ring and reaches waiters on every thread's loop.
#include "uringkit/async/sync.hpp"

#include "uringkit/ops/sync.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

namespace uringkit::async {

namespace {

// FUTEX_WAKE_PRIVATE matches the waits' FUTEX2_PRIVATE (op::kFutexPrivate32):
// both key the word by this process's address space and its address.
int futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept {
    const long r = ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE,
                             count, nullptr, nullptr, 0);
    return r < 0 ? -errno : static_cast<int>(r);
}

// One futex wait through the loop, cancelled by `stop` when it can be stopped.
Task<Result> wait_while(Loop& loop, std::atomic<std::uint32_t>& word, std::uint32_t value,
                        std::stop_token stop) {
    const op::FutexWait wait(&word, value);
    if (stop.stop_possible()) co_return co_await loop.submit(wait, stop);
    co_return co_await loop.submit(wait);
}

// A wait that ended without the word's owner having changed anything for
// us to act on: woken (0), the word changed first (-EAGAIN), or interrupted.
bool retry(const Result& r) noexcept {
    return r.res >= 0 || r.res == -EAGAIN || r.res == -EINTR;
}

}  // namespace

Task<Result> Mutex::lock(Loop& loop, std::stop_token stop) {
    std::uint32_t c = 0;
    if (word_.compare_exchange_strong(c, 1, std::memory_order_acquire, std::memory_order_relaxed))
        co_return Result{};
    // Contended: mark the word 2 so that the holder's unlock() wakes someone.
    if (c != 2) c = word_.exchange(2, std::memory_order_acquire);
    while (c != 0) {
        const Result r = co_await wait_while(loop, word_, 2, stop);
        if (!retry(r)) co_return r;
        c = word_.exchange(2, std::memory_order_acquire);
    }
    co_return Result{};
}

void Mutex::unlock() noexcept {
    // 1 -> 0: nobody waits.  2 -> 1 -> 0 and a wake: a waiter takes it as 2.
    if (word_.fetch_sub(1, std::memory_order_release) != 1) {
        word_.store(0, std::memory_order_release);
        futex_wake(word_, 1);
    }
}

Task<Result> Event::wait(Loop& loop, std::stop_token stop) {
    for (;;) {
        std::uint32_t c = word_.load(std::memory_order_acquire);
        if (c == kSet) co_return Result{};
        // Announce a waiter, so that set() knows to make the system call.
        if (c == kUnset && !word_.compare_exchange_strong(c, kWaiting, std::memory_order_acquire,
                                                          std::memory_order_acquire))
            continue;
        const Result r = co_await wait_while(loop, word_, kWaiting, stop);
        if (r.res == 0) {
            // Woken by set(): it counted this waiter, so it returns even if
            // reset() came first.  The load pairs with set()'s exchange (a
            // reset() or a new waiter since are read-modify-writes, which
            // continue its release sequence): what the setter wrote before
            // set() is visible here.
            static_cast<void>(word_.load(std::memory_order_acquire));
            co_return Result{};
        }
        if (!retry(r)) co_return r;
    }
}

int Event::set() noexcept {
    if (word_.exchange(kSet, std::memory_order_acq_rel) != kWaiting) return 0;
    return futex_wake(word_, INT_MAX);
}

}  // namespace uringkit::async
