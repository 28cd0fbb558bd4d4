// threadpool: a pool of workers doing blocking pread/pwrite for one
// submitting thread, the model of glibc's POSIX AIO and of libuv/Node.js's fs
// pool.  Requests go to the workers through a bounded lock-free queue and come
// back through another; a thread with nothing to do sleeps on a futex
// (engines/handoff.hpp, where each futex call is counted).
#include "queue_job.hpp"

#include "uringkit/engines/handoff.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <thread>
#include <vector>

namespace uringkit::engines::detail {
namespace {

using engines::Semaphore;
using engines::SlotQueue;
using engines::WorkerCounter;

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
                while (!to_submitter_.pop(s)) r.syscalls += engines::yield_counted();  // posted after the push: rare
                if (settle(st, s, res_[s])) batch_slots_[got++] = s;
            }
            const std::uint64_t t_reap = now_ns();
            // Latency for the completions taken above is stamped here, once per batch.
            for (unsigned i = 0; i < got; ++i) record_latency(ph, batch_slots_[i], t_reap);
            got = 0;
            while (done_sem_.try_wait()) {
                while (!to_submitter_.pop(s)) r.syscalls += engines::yield_counted();
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
            while (!to_workers_.pop(s)) calls += engines::yield_counted();
            if (s == engines::kQuitSlot) break;
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
            while (!to_workers_.push(engines::kQuitSlot)) std::this_thread::yield();
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
