// uring: the library's ring with plain IORING_OP_READ/WRITE, a batch per enter;
// uring-async: the same with IOSQE_ASYNC on every SQE, so each I/O goes to an
// io-wq worker thread instead of being tried inline first: the path io_uring
// takes by itself for files that cannot read without blocking (tmpfs), here
// on any file, to compare the two side by side.
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

Ring make_job_ring(const JobContext& ctx, RingOptions options) {
    if (ctx.ring_entries == 0) return make_ring(ctx.depth, options);
    options.cq_entries = ctx.ring_entries;
    return make_ring(ctx.ring_entries, options);
}

namespace {

class UringJob final : public UringJobBase {
public:
    UringJob(const JobContext& ctx, std::uint8_t sqe_flags)
        : UringJobBase(ctx),
          fd_(ctx.fd),
          sqe_flags_(sqe_flags),
          ring_(make_job_ring(ctx, lean_ring_options())) {}

    PhaseResult run(const Phase& ph) override { return run_rw(ring_, ph, Fd{fd_}, sqe_flags_); }

private:
    int fd_;
    std::uint8_t sqe_flags_;
    Ring ring_;
};

}  // namespace

std::unique_ptr<EngineJob> start_uring(const JobContext& ctx) {
    return std::make_unique<UringJob>(ctx, 0);
}

std::unique_ptr<EngineJob> start_uring_async(const JobContext& ctx) {
    return std::make_unique<UringJob>(ctx, IOSQE_ASYNC);
}

}  // namespace uringkit::engines::detail
