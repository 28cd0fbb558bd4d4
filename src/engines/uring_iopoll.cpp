// uring-iopoll: the ring polls the device for completions instead of taking
// interrupts.  Only O_DIRECT I/O on a device with poll queues can be polled
// (NVMe with nvme.poll_queues > 0, for example); elsewhere each read fails
// with EOPNOTSUPP, so one probe read at setup tells and the row says why.
#include "uring_loop.hpp"

#include "uringkit/ops/ops.hpp"

#include <cstring>
#include <string>

namespace uringkit::engines::detail {
namespace {

RingOptions iopoll_options() noexcept {
    RingOptions o = lean_ring_options();
    o.iopoll = true;
    return o;
}

class UringIopollJob final : public UringJobBase {
public:
    explicit UringIopollJob(const JobContext& ctx) : UringJobBase(ctx), fd_(ctx.fd), ring_(make(ctx)) {
        op::Read(Fd{fd_}, buffers_.slot(0), w_.bs, 0).prepare(*ring_.get_sqe());
        const int sub = ring_.submit_and_wait(1);
        int res = sub;
        if (sub >= 0) ring_.for_each_completion([&](const Completion& c) { res = c.res; });
        if (res == -EOPNOTSUPP)
            throw EngineUnavailable(
                "the device has no poll queues (an IOPOLL read returned EOPNOTSUPP; NVMe needs nvme.poll_queues)");
        if (res < 0) throw EngineUnavailable(std::string("an IOPOLL probe read failed: ") + std::strerror(-res));
    }

    PhaseResult run(const Phase& ph) override {
        const int fd = fd_;
        const std::uint32_t bs = w_.bs;
        return run_loop(ring_, ph, [&](Ring& ring, unsigned s, const Io& io) {
            void* buf = buffers_.slot(s);
            io_uring_sqe* sqe = ring.get_sqe();
            if (io.write)
                op::Write(Fd{fd}, buf, bs, io.offset).prepare(*sqe);
            else
                op::Read(Fd{fd}, buf, bs, io.offset).prepare(*sqe);
            sqe->user_data = s;
        });
    }

private:
    static Ring make(const JobContext& ctx) {
        if (!ctx.workload->direct)
            throw EngineUnavailable("IOPOLL polls the device, so it works only with O_DIRECT (add --direct)");
        return make_ring(ctx.depth, iopoll_options());
    }
    int fd_;
    Ring ring_;
};

}  // namespace

std::unique_ptr<EngineJob> start_uring_iopoll(const JobContext& ctx) {
    return std::make_unique<UringIopollJob>(ctx);
}

}  // namespace uringkit::engines::detail
