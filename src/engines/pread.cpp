// pread: one blocking pread/pwrite per I/O, as fio's psync engine.  Depth has
// no meaning here: one I/O is in flight and the thread waits for it.
#include "internal.hpp"

#include <unistd.h>

#include <cerrno>

namespace uringkit::engines::detail {
namespace {

class PreadJob final : public EngineJob {
public:
    explicit PreadJob(const JobContext& ctx)
        : fd_(ctx.fd),
          w_(*ctx.workload),
          pattern_(w_, ctx.job, ctx.jobs),
          buf_(1, w_.bs, ctx.buffer_align) {}

    PhaseResult run(const Phase& ph) override {
        PhaseResult r;
        if (ph.restart_offsets) pattern_.restart();
        void* buf = buf_.slot(0);
        const std::uint32_t bs = w_.bs;
        while (r.ios < ph.max_ios && !stop_requested(ph)) {
            const Io io = pattern_.next();
            if (io.write) stamp_block(buf, bs, io.offset);
            const std::uint64_t t0 = ph.latency ? now_ns() : 0;
            ssize_t n;
            do {
                ++r.syscalls;
                n = io.write ? ::pwrite(fd_, buf, bs, static_cast<off_t>(io.offset))
                             : ::pread(fd_, buf, bs, static_cast<off_t>(io.offset));
            } while (n < 0 && errno == EINTR);
            const std::uint64_t t1 = now_ns();
            ++r.submits;
            if (!check_transfer(r, n < 0 ? -errno : n, bs, io.offset, buf, io.write, w_.verify))
                break;
            ++r.ios;
            r.bytes += bs;
            r.writes += io.write;
            if (ph.latency) ph.latency->record(t1 - t0);
            publish_progress(ph, r.ios);
            if (t1 >= ph.deadline_ns) break;
        }
        return r;
    }

private:
    int fd_;
    const Workload& w_;
    IoPattern pattern_;
    BufferArena buf_;
};

}  // namespace

std::unique_ptr<EngineJob> start_pread(const JobContext& ctx) {
    return std::make_unique<PreadJob>(ctx);
}

}  // namespace uringkit::engines::detail
