// uring-sqpoll: a kernel thread polls the SQ, so submitting costs no system
// call while it is awake; we still enter the ring to wait for completions.
// The poll thread belongs to this process, so getrusage(RUSAGE_SELF) counts
// its CPU in the figures: SQPOLL buys latency with a core.
#include "uring_loop.hpp"

#include "uringkit/ops/ops.hpp"

namespace uringkit::engines::detail {
namespace {

RingOptions sqpoll_options() noexcept {
    RingOptions o;
    o.sqpoll = true;
    // Short idle: the thread sleeps soon after a run instead of spinning for
    // the kernel's default second into the next engine's measurement.
    o.sq_thread_idle_ms = 50;
    o.single_issuer = true;  // DEFER_TASKRUN is not allowed with SQPOLL
    o.register_ring_fd = true;
    return o;
}

class UringSqpollJob final : public UringJobBase {
public:
    explicit UringSqpollJob(const JobContext& ctx)
        : UringJobBase(ctx), ring_(make_ring(ctx.depth, sqpoll_options())) {
        try {
            // SQPOLL reads file descriptors from its own thread: registering
            // the file saves it the lookup (and was required before 5.11).
            const int fds[] = {ctx.fd};
            ring_.register_files(fds);
        } catch (const RingError& e) {
            throw EngineUnavailable(e.what());
        }
    }

    PhaseResult run(const Phase& ph) override {
        const std::uint32_t bs = w_.bs;
        return run_loop(ring_, ph, [&](Ring& ring, unsigned s, const Io& io) {
            void* buf = buffers_.slot(s);
            io_uring_sqe* sqe = ring.get_sqe();
            if (io.write)
                op::Write(Fixed{0}, buf, bs, io.offset).prepare(*sqe);
            else
                op::Read(Fixed{0}, buf, bs, io.offset).prepare(*sqe);
            sqe->user_data = s;
        });
    }

    std::string note() const override { return "SQ poll thread CPU included"; }

private:
    Ring ring_;
};

}  // namespace

std::unique_ptr<EngineJob> start_uring_sqpoll(const JobContext& ctx) {
    return std::make_unique<UringSqpollJob>(ctx);
}

}  // namespace uringkit::engines::detail
