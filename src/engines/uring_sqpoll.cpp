// uring-sqpoll: a kernel thread polls the SQ, so submitting costs no system
// call while it is awake; we still enter the ring to wait for completions.
// The poll thread belongs to this process, so getrusage(RUSAGE_SELF) counts
// its CPU in the figures: SQPOLL buys latency with a core.
#include "uring_loop.hpp"

namespace uringkit::engines::detail {
namespace {

RingOptions sqpoll_options(unsigned idle_ms) noexcept {
    RingOptions o;
    o.sqpoll = true;
    // Short idle: the thread sleeps soon after a run instead of spinning for
    // the kernel's default second into the next engine's measurement.
    o.sq_thread_idle_ms = idle_ms ? idle_ms : 50;
    o.single_issuer = true;  // DEFER_TASKRUN is not allowed with SQPOLL
    o.register_ring_fd = true;
    return o;
}

class UringSqpollJob final : public UringJobBase {
public:
    explicit UringSqpollJob(const JobContext& ctx)
        : UringJobBase(ctx), ring_(make_job_ring(ctx, sqpoll_options(ctx.sq_thread_idle_ms))) {
        // SQPOLL reads file descriptors from its own thread: registering the
        // file saves it the lookup (and was required before 5.11).
        register_or_unavailable([&] {
            const int fds[] = {ctx.fd};
            ring_.register_files(fds);
        });
    }

    PhaseResult run(const Phase& ph) override { return run_rw(ring_, ph, Fixed{0}); }

    std::string note() const override { return "SQ poll thread CPU included"; }

private:
    Ring ring_;
};

}  // namespace

std::unique_ptr<EngineJob> start_uring_sqpoll(const JobContext& ctx) {
    return std::make_unique<UringSqpollJob>(ctx);
}

}  // namespace uringkit::engines::detail
