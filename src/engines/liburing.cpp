// liburing: the uring engine's loop written on liburing, as a peer inside the
// tool: the same ring flags, the same batching, one io_uring_submit_and_wait
// per batch.  If our ring costs more than liburing's, this row shows it.
#include "internal.hpp"

#ifdef URINGKIT_HAVE_LIBURING
#include <liburing.h>

#include <cstring>
#include <string>
#include <vector>
#endif

namespace uringkit::engines::detail {

#ifdef URINGKIT_HAVE_LIBURING
namespace {

struct Slot {
    std::uint64_t offset;
    std::uint64_t submitted_ns;
    bool write;
};

class LiburingJob final : public EngineJob {
public:
    explicit LiburingJob(const JobContext& ctx)
        : fd_(ctx.fd),
          w_(*ctx.workload),
          depth_(ctx.depth),
          batch_(ctx.batch),
          pattern_(w_, ctx.job, ctx.jobs),
          buffers_(ctx.depth, w_.bs, ctx.buffer_align),
          slots_(ctx.depth),
          free_(ctx.depth) {
        for (unsigned i = 0; i < depth_; ++i) free_[i] = depth_ - 1 - i;
        nfree_ = depth_;
        io_uring_params p{};
        p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
        int r = io_uring_queue_init_params(depth_, &ring_, &p);
        if (r == -EINVAL) {
            p = io_uring_params{};
            r = io_uring_queue_init_params(depth_, &ring_, &p);
        }
        if (r < 0)
            throw EngineUnavailable(std::string("io_uring_queue_init (liburing): ") +
                                    std::strerror(-r));
        io_uring_register_ring_fd(&ring_);  // best effort, as the uring engine
    }
    ~LiburingJob() override { io_uring_queue_exit(&ring_); }

    PhaseResult run(const Phase& ph) override {
        PhaseResult r;
        const std::uint32_t bs = w_.bs;
        const bool verify = w_.verify;
        unsigned inflight = 0;
        std::uint64_t issued = 0;
        bool issuing = !stop_requested(ph);
        for (;;) {
            const std::uint64_t t_submit = now_ns();
            unsigned prepared = 0;
            if (issuing) {
                while (nfree_ > 0 && issued < ph.max_ios) {
                    const unsigned s = free_[--nfree_];
                    const Io io = pattern_.next();
                    slots_[s] = Slot{io.offset, t_submit, io.write};
                    void* buf = buffers_.slot(s);
                    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
                    if (io.write) {
                        stamp_block(buf, bs, io.offset);
                        io_uring_prep_write(sqe, fd_, buf, bs, io.offset);
                    } else {
                        io_uring_prep_read(sqe, fd_, buf, bs, io.offset);
                    }
                    io_uring_sqe_set_data64(sqe, s);
                    ++issued;
                    ++prepared;
                }
            }
            inflight += prepared;
            if (inflight == 0) break;
            const unsigned want = inflight < batch_ ? inflight : batch_;
            // liburing makes exactly one io_uring_enter here: wait_nr > 0
            // always needs the kernel (liburing 2.x __io_uring_submit).
            const int ret = io_uring_submit_and_wait(&ring_, want);
            ++r.syscalls;
            ++r.submits;
            if (ret < 0 && ret != -EBUSY && ret != -EAGAIN && ret != -EINTR) {
                if (r.error == 0) r.error = ret;
                break;
            }
            const std::uint64_t t_reap = now_ns();
            unsigned head;
            unsigned seen = 0;
            io_uring_cqe* cqe;
            io_uring_for_each_cqe(&ring_, head, cqe) {
                const auto s = static_cast<unsigned>(cqe->user_data);
                const Slot& slot = slots_[s];
                --inflight;
                free_[nfree_++] = s;
                ++seen;
                if (check_transfer(r, cqe->res, bs, slot.offset, buffers_.slot(s), slot.write,
                                   verify)) {
                    ++r.ios;
                    r.bytes += bs;
                    if (ph.latency) ph.latency->record(t_reap - slot.submitted_ns);
                } else {
                    issuing = false;
                }
            }
            io_uring_cq_advance(&ring_, seen);
            publish_progress(ph, r.ios);
            if (t_reap >= ph.deadline_ns || stop_requested(ph)) issuing = false;
        }
        return r;
    }

private:
    int fd_;
    const Workload& w_;
    unsigned depth_;
    unsigned batch_;
    IoPattern pattern_;
    BufferArena buffers_;
    std::vector<Slot> slots_;
    std::vector<unsigned> free_;
    unsigned nfree_ = 0;
    io_uring ring_{};
};

}  // namespace

std::unique_ptr<EngineJob> start_liburing(const JobContext& ctx) {
    return std::make_unique<LiburingJob>(ctx);
}

#else

std::unique_ptr<EngineJob> start_liburing(const JobContext&) {
    throw EngineUnavailable("not built: liburing-dev was not found when uringkit was built");
}

#endif

}  // namespace uringkit::engines::detail
