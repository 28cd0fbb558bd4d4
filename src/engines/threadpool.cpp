// threadpool: a pool of workers doing blocking pread/pwrite for one
// submitting thread, the model of glibc's POSIX AIO and of libuv/Node.js's fs
// pool.  Requests go to the workers through a bounded lock-free queue and come
// back through another; a thread with nothing to do sleeps on a futex.  The
// futex calls are made here directly (not through std::mutex or
// std::counting_semaphore) so that each one is counted as a system call.
#include "internal.hpp"

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

struct Request {
    std::uint64_t offset;
    std::uint64_t submitted_ns;
    std::int64_t res;
    bool write;
};

struct alignas(64) WorkerCounter {
    std::atomic<std::uint64_t> syscalls{0};
};

class ThreadpoolJob final : public EngineJob {
public:
    explicit ThreadpoolJob(const JobContext& ctx)
        : fd_(ctx.fd),
          w_(*ctx.workload),
          depth_(ctx.depth),
          batch_(ctx.batch),
          pattern_(w_, ctx.job, ctx.jobs),
          buffers_(ctx.depth, w_.bs, ctx.buffer_align),
          reqs_(ctx.depth),
          free_(ctx.depth),
          to_workers_(2 * ctx.depth + 64),
          to_submitter_(2 * ctx.depth),
          counters_(std::clamp<unsigned>(ctx.depth, 1, std::max(1u, w_.threadpool_workers))) {
        for (unsigned i = 0; i < depth_; ++i) free_[i] = depth_ - 1 - i;
        nfree_ = depth_;
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
        PhaseResult r;
        const std::uint64_t worker_calls_before = worker_syscalls();
        const std::uint32_t bs = w_.bs;
        const bool verify = w_.verify;
        unsigned inflight = 0;
        std::uint64_t issued = 0;
        bool issuing = !stop_requested(ph);
        for (;;) {
            const std::uint64_t t_submit = now_ns();
            std::uint32_t handed = 0;
            if (issuing) {
                while (nfree_ > 0 && issued < ph.max_ios) {
                    const unsigned s = free_[nfree_ - 1];
                    const Io io = pattern_.next();
                    reqs_[s] = Request{io.offset, t_submit, 0, io.write};
                    if (io.write) stamp_block(buffers_.slot(s), bs, io.offset);
                    // Cannot be full: the queue holds twice the depth.
                    if (!to_workers_.push(s)) break;
                    --nfree_;
                    ++issued;
                    ++handed;
                }
            }
            if (handed) {
                r.syscalls += to_workers_sem_.post(handed);
                ++r.submits;
                inflight += handed;
            }
            if (inflight == 0) break;
            const unsigned want = inflight < batch_ ? inflight : batch_;
            unsigned got = 0;
            std::uint32_t s;
            // Wait for `want` completions, then take whatever else is ready.
            while (got < want) {
                r.syscalls += done_sem_.wait();
                while (!to_submitter_.pop(s))
                    std::this_thread::yield();  // posted after the push: rare
                complete(r, s, verify, bs, issuing, got, inflight);
            }
            const std::uint64_t t_reap = now_ns();
            // Latency for the completions taken above is stamped here, once per batch.
            for (unsigned i = 0; i < got; ++i) record_latency(ph, t_reap, batch_slots_[i]);
            got = 0;
            while (done_sem_.try_wait()) {
                while (!to_submitter_.pop(s)) std::this_thread::yield();
                complete(r, s, verify, bs, issuing, got, inflight);
            }
            for (unsigned i = 0; i < got; ++i) record_latency(ph, t_reap, batch_slots_[i]);
            publish_progress(ph, r.ios);
            if (t_reap >= ph.deadline_ns || stop_requested(ph)) issuing = false;
        }
        r.syscalls += worker_syscalls() - worker_calls_before;
        return r;
    }

private:
    void complete(PhaseResult& r, std::uint32_t s, bool verify, std::uint32_t bs, bool& issuing,
                  unsigned& got, unsigned& inflight) noexcept {
        const Request& q = reqs_[s];
        --inflight;
        free_[nfree_++] = s;
        if (check_transfer(r, q.res, bs, q.offset, buffers_.slot(s), q.write, verify)) {
            ++r.ios;
            r.bytes += bs;
            batch_slots_[got++] = s;
        } else {
            issuing = false;
        }
    }
    void record_latency(const Phase& ph, std::uint64_t t_reap, std::uint32_t s) noexcept {
        if (ph.latency) ph.latency->record(t_reap - reqs_[s].submitted_ns);
    }

    void work(WorkerCounter& counter) noexcept {
        const std::uint32_t bs = w_.bs;
        std::uint64_t calls = 0;
        for (;;) {
            calls += to_workers_sem_.wait();
            std::uint32_t s;
            while (!to_workers_.pop(s)) std::this_thread::yield();
            if (s == kQuit) break;
            Request& q = reqs_[s];
            void* buf = buffers_.slot(s);
            ssize_t n;
            do {
                ++calls;
                n = q.write ? ::pwrite(fd_, buf, bs, static_cast<off_t>(q.offset))
                            : ::pread(fd_, buf, bs, static_cast<off_t>(q.offset));
            } while (n < 0 && errno == EINTR);
            q.res = n < 0 ? -errno : n;
            // Published before the completion is: the submitter reads it after popping.
            counter.syscalls.store(calls, std::memory_order_relaxed);
            to_submitter_.push(s);
            calls += done_sem_.post(1);
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
    const Workload& w_;
    unsigned depth_;
    unsigned batch_;
    IoPattern pattern_;
    BufferArena buffers_;
    std::vector<Request> reqs_;
    std::vector<unsigned> free_;
    unsigned nfree_ = 0;
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
