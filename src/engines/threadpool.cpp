// threadpool: a pool of workers doing blocking pread/pwrite for one
// submitting thread, the model of glibc's POSIX AIO and of libuv/Node.js's fs
// pool.  Requests go to the workers through a bounded lock-free queue and come
// back through another; a thread with nothing to do sleeps on a futex.  The
// futex calls are made here directly (not through std::mutex or
// std::counting_semaphore) so that each one is counted as a system call.
#include "queue_job.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <thread>
#include <vector>

namespace uringkit::engines::detail {
namespace {

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
        futex(FUTEX_WAKE_PRIVATE, n);
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
            sleepers_.fetch_add(1, std::memory_order_seq_cst);
            futex(FUTEX_WAIT_PRIVATE, 0);  // returns at once unless count is still 0
            sleepers_.fetch_sub(1, std::memory_order_relaxed);
            ++calls;
        }
        return calls;
    }

private:
    void futex(int op, std::uint32_t val) noexcept {
        static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
        ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&count_), op, val, nullptr, nullptr,
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

constexpr std::uint32_t kQuit = UINT32_MAX;

// std::this_thread::yield is sched_yield(2): a system call like the futex
// ones, so it is counted like them.  Returns the calls made (1).
unsigned yield() noexcept {
    std::this_thread::yield();
    return 1;
}

struct alignas(64) WorkerCounter {
    std::atomic<std::uint64_t> syscalls{0};
};

class ThreadpoolJob final : public QueueJob {
public:
    explicit ThreadpoolJob(const JobContext& ctx)
        : QueueJob(ctx),
          fd_(ctx.fd),
          res_(ctx.depth),
          to_workers_(2 * ctx.depth + 64),
          to_submitter_(2 * ctx.depth),
          counters_(std::clamp<unsigned>(ctx.depth, 1, std::max(1u, w_.threadpool_workers))) {
        const unsigned n = static_cast<unsigned>(counters_.size());
        workers_.reserve(n);
        try {
            for (unsigned i = 0; i < n; ++i)
                workers_.emplace_back([this, i] { work(counters_[i]); });
        } catch (...) {
            stop_workers();
            throw;
        }
    }
    ~ThreadpoolJob() override { stop_workers(); }

    PhaseResult run(const Phase& ph) override {
        PhaseState st(*this, ph);
        PhaseResult& r = st.r;
        const std::uint64_t worker_calls_before = worker_syscalls();
        for (;;) {
            // Cannot be refused: the queue holds twice the depth.
            const std::uint32_t handed =
                issue(ph, st, [&](unsigned s, const Io&) { return to_workers_.push(s); });
            if (handed) {
                r.syscalls += to_workers_sem_.post(handed);
                ++r.submits;
                st.inflight += handed;
            }
            if (st.inflight == 0) break;
            const unsigned want_n = want(st);
            unsigned got = 0;
            std::uint32_t s;
            // Wait for `want` completions, then take whatever else is ready.
            while (got < want_n) {
                r.syscalls += done_sem_.wait();
                while (!to_submitter_.pop(s)) r.syscalls += yield();  // posted after the push: rare
                if (settle(st, s, res_[s])) batch_slots_[got++] = s;
            }
            const std::uint64_t t_reap = now_ns();
            // Latency for the completions taken above is stamped here, once per batch.
            for (unsigned i = 0; i < got; ++i) record_latency(ph, batch_slots_[i], t_reap);
            got = 0;
            while (done_sem_.try_wait()) {
                while (!to_submitter_.pop(s)) r.syscalls += yield();
                if (settle(st, s, res_[s])) batch_slots_[got++] = s;
            }
            for (unsigned i = 0; i < got; ++i) record_latency(ph, batch_slots_[i], t_reap);
            end_turn(ph, st, t_reap);
        }
        r.syscalls += worker_syscalls() - worker_calls_before;
        return r;
    }

private:
    void work(WorkerCounter& counter) noexcept {
        const std::uint32_t bs = w_.bs;
        std::uint64_t calls = 0;
        for (;;) {
            calls += to_workers_sem_.wait();
            std::uint32_t s;
            while (!to_workers_.pop(s)) calls += yield();
            if (s == kQuit) break;
            const InflightSlot& q = slot(s);
            void* buf = buffers_.slot(s);
            ssize_t n;
            do {
                ++calls;
                n = q.write ? ::pwrite(fd_, buf, bs, static_cast<off_t>(q.offset))
                            : ::pread(fd_, buf, bs, static_cast<off_t>(q.offset));
            } while (n < 0 && errno == EINTR);
            res_[s] = n < 0 ? -errno : n;
            // Published before the completion is: the submitter reads it after popping.
            counter.syscalls.store(calls, std::memory_order_relaxed);
            to_submitter_.push(s);
            calls += done_sem_.post(1);
            counter.syscalls.store(calls, std::memory_order_relaxed);
        }
        counter.syscalls.store(calls, std::memory_order_relaxed);
    }

    std::uint64_t worker_syscalls() const noexcept {
        std::uint64_t sum = 0;
        for (const WorkerCounter& c : counters_) sum += c.syscalls.load(std::memory_order_relaxed);
        return sum;
    }

    void stop_workers() noexcept {
        for (std::size_t i = 0; i < workers_.size(); ++i)
            while (!to_workers_.push(kQuit)) std::this_thread::yield();
        to_workers_sem_.post(static_cast<std::uint32_t>(workers_.size()));
        for (std::thread& t : workers_) t.join();
        workers_.clear();
    }

    int fd_;
    std::vector<std::int64_t> res_;  // by slot: written by the worker before it hands the slot back
    SlotQueue to_workers_;
    SlotQueue to_submitter_;
    Semaphore to_workers_sem_;
    Semaphore done_sem_;
    std::vector<WorkerCounter> counters_;
    std::vector<std::uint32_t> batch_slots_ = std::vector<std::uint32_t>(depth_);
    std::vector<std::thread> workers_;
};

}  // namespace

std::unique_ptr<EngineJob> start_threadpool(const JobContext& ctx) {
    return std::make_unique<ThreadpoolJob>(ctx);
}

}  // namespace uringkit::engines::detail
