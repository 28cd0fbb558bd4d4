// A mutex and an event for coroutines, on futexes (IORING_OP_FUTEX_WAIT,
// Linux 6.7): a task that must wait awaits a futex wait on the ring instead
// of blocking its thread, so the loop goes on with its other tasks.  Waking
// is futex(2) FUTEX_WAKE from whoever unlocks or sets, so it works from any
// thread of the process, with or without a loop: tasks on loops of
// different threads can share one Mutex or Event.
//
//     async::Mutex m;                        // outlives every task that uses it
//     async::Result r = co_await m.lock(loop);
//     if (!r.ok()) co_return;                // not held: cancelled, or no futex ops
//     ... m.unlock();
//
// Ownership: a futex wait names the object's 32-bit word by its address, and
// the kernel keeps that address until the wait's final completion.  So a
// Mutex or Event must outlive every lock() and wait() on it.  Keep it in an
// object that outlives the loops, or in the frame of a task that awaits (or
// outlives) every task that waits on it: a loop that ends early cancels and
// drains every operation before it destroys any frame, so waits end before
// the frame that holds the word goes.  Before 6.7 a lock() that has to wait
// and every wait() that has to wait return -EOPNOTSUPP at once.
#pragma once

#include "uringkit/async/loop.hpp"
#include "uringkit/async/result.hpp"
#include "uringkit/async/task.hpp"
#include "uringkit/cxx20.hpp"

#include <atomic>
#include <cstdint>
#include <stop_token>

namespace uringkit::async {

// The three-state futex mutex (0 unlocked, 1 locked, 2 locked with waiters):
// an uncontended lock() and unlock() touch only the word; unlock() makes a
// system call only when someone may be waiting.  Not recursive; unlock()
// from any thread (it need not be the locker's).
class Mutex {
public:
    Mutex() noexcept = default;
    Mutex(const Mutex&) = delete;
    Mutex& operator=(const Mutex&) = delete;

    // res 0: held.  Otherwise not held: -ECANCELED (`stop` was stopped, or
    // the loop drains), -EOPNOTSUPP (a kernel before 6.7 cannot wait).  Stop
    // `stop` on the loop's own thread.
    Task<Result> lock(Loop& loop, std::stop_token stop = {});
    // Takes the mutex if it is free, without waiting.
    bool try_lock() noexcept {
        std::uint32_t c = 0;
        return word_.compare_exchange_strong(c, 1, std::memory_order_acquire,
                                             std::memory_order_relaxed);
    }
    void unlock() noexcept;
    // The futex word, for tests and diagnostics: 0 free, 1 held, 2 held and contended.
    std::uint32_t state() const noexcept { return word_.load(std::memory_order_relaxed); }

private:
    std::atomic<std::uint32_t> word_{0};
};

// A manual-reset event: wait() returns once set() has been called (at once
// if the event is set), until reset().  A waiter that set() woke returns
// even when reset() follows at once.
class Event {
public:
    Event() noexcept = default;
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;

    // res 0: the event was set.  -ECANCELED or -EOPNOTSUPP as Mutex::lock().
    Task<Result> wait(Loop& loop, std::stop_token stop = {});
    // Sets the event; returns how many waiters it woke from the kernel (0
    // when none was waiting there), or -errno.
    int set() noexcept;
    void reset() noexcept {
        std::uint32_t c = kSet;
        word_.compare_exchange_strong(c, kUnset, std::memory_order_relaxed);
    }
    bool is_set() const noexcept { return word_.load(std::memory_order_acquire) == kSet; }

private:
    static constexpr std::uint32_t kUnset = 0, kSet = 1, kWaiting = 2;
    std::atomic<std::uint32_t> word_{kUnset};
};

}  // namespace uringkit::async
