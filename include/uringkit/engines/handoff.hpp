// The hand-over between one submitting thread and its pool of workers, as
// the threadpool engines use it (bench's threadpool, replay's threadpool):
// a counting semaphore on a futex word and a bounded lock-free queue of slot
// numbers.  The futex calls are made here directly (not through std::mutex
// or std::counting_semaphore) so that each one is counted as a system call.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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

}  // namespace uringkit::engines
