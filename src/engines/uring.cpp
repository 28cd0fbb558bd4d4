// uring: the library's ring with plain IORING_OP_READ/WRITE, a batch per enter.
#include "uring_loop.hpp"

#include "uringkit/ops/ops.hpp"

namespace uringkit::engines::detail {

RingOptions lean_ring_options() noexcept {
    return single_thread_options();
}

Ring make_ring(unsigned entries, RingOptions options) {
    try {
        return Ring::create(entries, options);
    } catch (const RingError& e) {
        throw EngineUnavailable(e.what());
    }
}

namespace {

class UringJob final : public UringJobBase {
public:
    explicit UringJob(const JobContext& ctx)
        : UringJobBase(ctx), fd_(ctx.fd), ring_(make_ring(ctx.depth, lean_ring_options())) {}

    PhaseResult run(const Phase& ph) override { return run_rw(ring_, ph, Fd{fd_}); }

private:
    int fd_;
    Ring ring_;
};

}  // namespace

std::unique_ptr<EngineJob> start_uring(const JobContext& ctx) {
    return std::make_unique<UringJob>(ctx);
}

}  // namespace uringkit::engines::detail
