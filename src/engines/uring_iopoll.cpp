// uring-iopoll and uring-hybrid: the ring polls the device for completions instead of taking
// interrupts.  Only O_DIRECT I/O on a device with poll queues can be polled
// (NVMe with nvme.poll_queues > 0, for example).  The block layer says so in
// /sys/block/<dev>/queue/io_poll; where it is 0 a polled read may never be
// reaped (the kernel spins in its poll loop), so we ask sysfs first and only
// then probe with one read.
#include "uring_loop.hpp"

#include "uringkit/ops/ops.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstring>
#include <fstream>
#include <string>

namespace uringkit::engines::detail {
namespace {

// The block queue under `fd`: "1" when it can poll, "0" when not, empty when unknown.
std::string queue_io_poll(int fd, std::string& device) {
    struct stat st;
    if (::fstat(fd, &st) != 0) return {};
    const dev_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
    const std::string base =
        "/sys/dev/block/" + std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
    for (const char* q :
         {"/queue/io_poll", "/../queue/io_poll"}) {  // a partition's queue is its disk's
        std::ifstream in(base + q);
        std::string v;
        if (in >> v) {
            std::ifstream name(base + (q[1] == '.' ? "/../uevent" : "/uevent"));
            for (std::string line; std::getline(name, line);)
                if (line.rfind("DEVNAME=", 0) == 0) device = line.substr(8);
            return v;
        }
    }
    return {};
}

RingOptions iopoll_options(bool hybrid) noexcept {
    RingOptions o = lean_ring_options();
    o.iopoll = true;
    // 6.13: the task sleeps for about half a request's measured latency
    // before it polls, trading a little latency for most of the polling CPU.
    if (hybrid) o.extra_flags |= IORING_SETUP_HYBRID_IOPOLL;
    return o;
}

class UringIopollJob final : public UringJobBase {
public:
    UringIopollJob(const JobContext& ctx, bool hybrid)
        : UringJobBase(ctx), fd_(ctx.fd), ring_(make(ctx, hybrid)) {
        op::Read(Fd{fd_}, buffers_.slot(0), w_.bs, 0).prepare(*ring_.get_sqe());
        const int sub = ring_.submit_and_wait(1);
        int res = sub;
        if (sub >= 0) ring_.for_each_completion([&](const Completion& c) { res = c.res; });
        if (res == -EOPNOTSUPP)
            throw EngineUnavailable(
                "the device has no poll queues (an IOPOLL read returned EOPNOTSUPP; NVMe needs "
                "nvme.poll_queues)");
        if (res < 0)
            throw EngineUnavailable(std::string("an IOPOLL probe read failed: ") +
                                    std::strerror(-res));
    }

    PhaseResult run(const Phase& ph) override { return run_rw(ring_, ph, Fd{fd_}); }

private:
    static Ring make(const JobContext& ctx, bool hybrid) {
        if (!ctx.workload->direct)
            throw EngineUnavailable(
                "IOPOLL polls the device, so it works only with O_DIRECT (add --direct)");
        std::string device;
        if (queue_io_poll(ctx.fd, device) != "1")
            throw EngineUnavailable(
                "the device" + (device.empty() ? std::string() : " " + device) +
                " has no poll queues (its queue/io_poll in sysfs is not 1; NVMe needs "
                "nvme.poll_queues)");
        if (!hybrid) return make_ring(ctx.depth, iopoll_options(false));
        try {
            return make_ring(ctx.depth, iopoll_options(true));
        } catch (const EngineUnavailable& e) {
            throw EngineUnavailable(
                std::string("IORING_SETUP_HYBRID_IOPOLL (Linux 6.13) was refused: ") + e.what());
        }
    }
    int fd_;
    Ring ring_;
};

}  // namespace

std::unique_ptr<EngineJob> start_uring_iopoll(const JobContext& ctx) {
    return std::make_unique<UringIopollJob>(ctx, false);
}
std::unique_ptr<EngineJob> start_uring_hybrid(const JobContext& ctx) {
    return std::make_unique<UringIopollJob>(ctx, true);
}

}  // namespace uringkit::engines::detail
