// The hand-over between one submitting thread and its pool of workers, as
// the threadpool engines use it (bench's threadpool, replay's threadpool):
// a counting semaphore on a futex word, a bounded lock-free queue of slot
// numbers, and the pool that joins them.  The futex calls are made here directly (not through
// std::mutex or std::counting_semaphore) so that each one is counted as a system call.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace uringkit::engines {

// One counting semaphore on a futex word.  post() wakes sleepers only when
// there are any, so a busy pool hands work over without a system call.
class Semaphore {
public:
    // Returns the system calls made (0 or 1).
    unsigned post(std::uint32_t n) noexcept {
        count_.fetch_add(n, std::memory_order_seq_cst);
        // seq_cst on both sides (count then sleepers here, sleepers then the
        // kernel's read of count in wait) rules out a missed wake-up.
        if (sleepers_.load(std::memory_order_seq_cst) == 0) return 0;
        futex(FUTEX_WAKE_PRIVATE, n, nullptr);
        return 1;
    }
    bool try_wait() noexcept {
        std::uint32_t c = count_.load(std::memory_order_acquire);
        while (c > 0)
            if (count_.compare_exchange_weak(c, c - 1, std::memory_order_acquire)) return true;
        return false;
    }
    // Returns the system calls made.
    unsigned wait() noexcept {
        unsigned calls = 0;
        while (!try_wait()) {
            sleep(nullptr);
            ++calls;
        }
        return calls;
    }
    // Like wait(), but gives up once CLOCK_MONOTONIC passes `deadline_ns`
    // (`taken` false then).  Returns the system calls made.
    unsigned wait_until(std::uint64_t deadline_ns, bool& taken) noexcept {
        unsigned calls = 0;
        while (!(taken = try_wait())) {
            timespec now{};
            ::clock_gettime(CLOCK_MONOTONIC, &now);
            const std::uint64_t t = static_cast<std::uint64_t>(now.tv_sec) * 1000000000u +
                                    static_cast<std::uint64_t>(now.tv_nsec);
            if (t >= deadline_ns) break;
            const std::uint64_t left = deadline_ns - t;
            // FUTEX_WAIT's timeout is relative (CLOCK_MONOTONIC).
            const timespec rel{static_cast<time_t>(left / 1000000000u),
                               static_cast<long>(left % 1000000000u)};
            sleep(&rel);
            ++calls;
        }
        return calls;
    }

private:
    void sleep(const timespec* timeout) noexcept {
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        futex(FUTEX_WAIT_PRIVATE, 0, timeout);  // returns at once unless count is still 0
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
    void futex(int op, std::uint32_t val, const timespec* timeout) noexcept {
        static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
        ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&count_), op, val, timeout, nullptr,
                  0);
    }
    alignas(64) std::atomic<std::uint32_t> count_{0};
    std::atomic<std::uint32_t> sleepers_{0};
};

// Bounded multi-producer multi-consumer queue of slot numbers (Vyukov's
// design: a sequence number per cell, no lock, no allocation after setup).
class SlotQueue {
public:
    explicit SlotQueue(unsigned min_capacity) {
        unsigned cap = 1;
        while (cap < min_capacity) cap <<= 1;
        cells_ = std::vector<Cell>(cap);
        for (unsigned i = 0; i < cap; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
        mask_ = cap - 1;
    }
    bool push(std::uint32_t v) noexcept {
        std::uint64_t pos = tail_.load(std::memory_order_relaxed);
        for (;;) {
            Cell& c = cells_[pos & mask_];
            const std::uint64_t seq = c.seq.load(std::memory_order_acquire);
            const auto diff = static_cast<std::int64_t>(seq - pos);
            if (diff == 0) {
                if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
                    c.value = v;
                    c.seq.store(pos + 1, std::memory_order_release);
                    return true;
                }
            } else if (diff < 0) {
                return false;  // full
            } else {
                pos = tail_.load(std::memory_order_relaxed);
            }
        }
    }
    bool pop(std::uint32_t& v) noexcept {
        std::uint64_t pos = head_.load(std::memory_order_relaxed);
        for (;;) {
            Cell& c = cells_[pos & mask_];
            const std::uint64_t seq = c.seq.load(std::memory_order_acquire);
            const auto diff = static_cast<std::int64_t>(seq - (pos + 1));
            if (diff == 0) {
                if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
                    v = c.value;
                    c.seq.store(pos + mask_ + 1, std::memory_order_release);
                    return true;
                }
            } else if (diff < 0) {
                return false;  // empty
            } else {
                pos = head_.load(std::memory_order_relaxed);
            }
        }
    }

private:
    struct Cell {
        std::atomic<std::uint64_t> seq{0};
        std::uint32_t value = 0;
    };
    std::vector<Cell> cells_;
    std::uint64_t mask_ = 0;
    alignas(64) std::atomic<std::uint64_t> tail_{0};
    alignas(64) std::atomic<std::uint64_t> head_{0};
};

// The slot number that tells a worker to stop.
inline constexpr std::uint32_t kQuitSlot = UINT32_MAX;

// std::this_thread::yield is sched_yield(2): a system call like the futex
// ones, so it is counted like them.  Returns the calls made (1).
inline unsigned yield_counted() noexcept {
    std::this_thread::yield();
    return 1;
}

// A worker's system calls, on a cache line of its own.
struct alignas(64) WorkerCounter {
    std::atomic<std::uint64_t> syscalls{0};
};

// Workers doing blocking work for one submitting thread, slot by slot.  The
// submitter hands slots over (hand, then wake), waits for one back (wait or
// wait_until, then take), and reads each slot's result, which the worker
// wrote before handing the slot back.  `work(ctx, slot)` does the slot's
// work and returns the system calls it made.  Nothing here allocates or
// locks after construction.
class WorkerPool {
public:
    using Work = std::uint64_t (*)(void* ctx, std::uint32_t slot) noexcept;

    // At most `slots` slots out at once, served by `workers` threads.
    // Throws std::system_error when no thread can be started.
    WorkerPool(unsigned slots, unsigned workers, Work work, void* ctx)
        : work_(work),
          ctx_(ctx),
          to_workers_(2 * slots + workers),
          to_submitter_(2 * slots),
          counters_(std::max(1u, workers)) {
        threads_.reserve(counters_.size());
        try {
            for (WorkerCounter& c : counters_) threads_.emplace_back([this, &c] { serve(c); });
        } catch (...) {
            stop();
            throw;
        }
    }
    ~WorkerPool() { stop(); }
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    // Queues a slot; the workers see it after wake().  False: the queue is
    // full, which a caller with at most `slots` out never sees.
    bool hand(std::uint32_t slot) noexcept { return to_workers_.push(slot); }
    // Wakes workers for `n` slots handed.  Returns the system calls made.
    unsigned wake(std::uint32_t n) noexcept { return n ? to_workers_sem_.post(n) : 0; }
    // One slot done: blocks for it, or gives up at deadline_ns (taken false).
    // Returns the system calls made.
    unsigned wait() noexcept { return done_sem_.wait(); }
    unsigned wait_until(std::uint64_t deadline_ns, bool& taken) noexcept {
        return done_sem_.wait_until(deadline_ns, taken);
    }
    bool try_wait() noexcept { return done_sem_.try_wait(); }
    // After a successful wait: the slot that is done.  Returns the system
    // calls made (a yield in the rare case that its push is not visible yet).
    unsigned take(std::uint32_t& slot) noexcept {
        unsigned calls = 0;
        while (!to_submitter_.pop(slot)) calls += yield_counted();
        return calls;
    }
    // System calls the workers have made so far.
    std::uint64_t worker_syscalls() const noexcept {
        std::uint64_t sum = 0;
        for (const WorkerCounter& c : counters_) sum += c.syscalls.load(std::memory_order_relaxed);
        return sum;
    }

private:
    void serve(WorkerCounter& counter) noexcept {
        std::uint64_t calls = 0;
        for (;;) {
            calls += to_workers_sem_.wait();
            std::uint32_t s;
            while (!to_workers_.pop(s)) calls += yield_counted();
            if (s == kQuitSlot) break;
            calls += work_(ctx_, s);
            // Published before the slot is: the submitter reads it after taking it.
            counter.syscalls.store(calls, std::memory_order_relaxed);
            to_submitter_.push(s);
            calls += done_sem_.post(1);
            counter.syscalls.store(calls, std::memory_order_relaxed);
        }
        counter.syscalls.store(calls, std::memory_order_relaxed);
    }
    void stop() noexcept {
        for (std::size_t i = 0; i < threads_.size(); ++i)
            while (!to_workers_.push(kQuitSlot)) std::this_thread::yield();
        to_workers_sem_.post(static_cast<std::uint32_t>(threads_.size()));
        for (std::thread& t : threads_) t.join();
        threads_.clear();
    }

    Work work_;
    void* ctx_;
    SlotQueue to_workers_, to_submitter_;
    Semaphore to_workers_sem_, done_sem_;
    std::vector<WorkerCounter> counters_;
    std::vector<std::thread> threads_;
};

}  // namespace uringkit::engines
