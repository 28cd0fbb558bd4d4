// threadpool: a pool of workers doing blocking pread/pwrite for one
// submitting thread, the model of glibc's POSIX AIO and of libuv/Node.js's fs
// pool.  Requests go to the workers through a bounded lock-free queue and come
// back through another; a thread with nothing to do sleeps on a futex
// (engines/handoff.hpp, where each futex call is counted).
#include "queue_job.hpp"

#include "engines/handoff.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <thread>
#include <vector>

namespace uringkit::engines::detail {
namespace {

class ThreadpoolJob final : public QueueJob {
public:
    explicit ThreadpoolJob(const JobContext& ctx)
        : QueueJob(ctx),
          fd_(ctx.fd),
          res_(ctx.depth),
          pool_(ctx.depth, std::clamp<unsigned>(ctx.depth, 1, std::max(1u, w_.threadpool_workers)),
                &ThreadpoolJob::transfer, this) {}

    PhaseResult run(const Phase& ph) override {
        PhaseState st(*this, ph);
        PhaseResult& r = st.r;
        const std::uint64_t worker_calls_before = pool_.worker_syscalls();
        for (;;) {
            // Cannot be refused: at most depth slots are out.
            const std::uint32_t handed =
                issue(ph, st, [&](unsigned s, const Io&) { return pool_.hand(s); });
            if (handed) {
                r.syscalls += pool_.wake(handed);
                ++r.submits;
                st.inflight += handed;
            }
            if (st.inflight == 0) break;
            const unsigned want_n = want(st);
            unsigned got = 0;
            std::uint32_t s;
            // Wait for `want` completions, then take whatever else is ready.
            while (got < want_n) {
                r.syscalls += pool_.wait();
                r.syscalls += pool_.take(s);
                if (settle(st, s, res_[s])) batch_slots_[got++] = s;
            }
            const std::uint64_t t_reap = now_ns();
            // Latency for the completions taken above is stamped here, once per batch.
            for (unsigned i = 0; i < got; ++i) record_latency(ph, batch_slots_[i], t_reap);
            got = 0;
            while (pool_.try_wait()) {
                r.syscalls += pool_.take(s);
                if (settle(st, s, res_[s])) batch_slots_[got++] = s;
            }
            for (unsigned i = 0; i < got; ++i) record_latency(ph, batch_slots_[i], t_reap);
            end_turn(ph, st, t_reap);
        }
        r.syscalls += pool_.worker_syscalls() - worker_calls_before;
        return r;
    }

private:
    // A worker's transfer for slot `s`: one pread or pwrite (again on EINTR).
    static std::uint64_t transfer(void* ctx, std::uint32_t s) noexcept {
        auto& job = *static_cast<ThreadpoolJob*>(ctx);
        const InflightSlot& q = job.slot(s);
        void* buf = job.buffers_.slot(s);
        const std::uint32_t bs = job.w_.bs;
        std::uint64_t calls = 0;
        ssize_t n;
        do {
            ++calls;
            n = q.write ? ::pwrite(job.fd_, buf, bs, static_cast<off_t>(q.offset))
                        : ::pread(job.fd_, buf, bs, static_cast<off_t>(q.offset));
        } while (n < 0 && errno == EINTR);
        job.res_[s] = n < 0 ? -errno : n;
        return calls;
    }

    int fd_;
    std::vector<std::int64_t> res_;  // by slot: written by the worker before it hands the slot back
    std::vector<std::uint32_t> batch_slots_ = std::vector<std::uint32_t>(depth_);
    engines::WorkerPool pool_;  // last: its workers stop before the members they use go
};

}  // namespace

std::unique_ptr<EngineJob> start_threadpool(const JobContext& ctx) {
    return std::make_unique<ThreadpoolJob>(ctx);
}

}  // namespace uringkit::engines::detail
