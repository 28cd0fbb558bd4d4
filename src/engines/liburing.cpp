// liburing: the uring engine's loop written on liburing, as a peer inside the
// tool: the same ring flags, the same batching, one io_uring_submit_and_wait
// per batch.  If our ring costs more than liburing's, this row shows it.
#include "queue_job.hpp"

#ifdef URINGKIT_HAVE_LIBURING
#include <liburing.h>

#include <cstring>
#include <string>
#endif

namespace uringkit::engines::detail {

#ifdef URINGKIT_HAVE_LIBURING
namespace {

class LiburingJob final : public QueueJob {
public:
    explicit LiburingJob(const JobContext& ctx) : QueueJob(ctx), fd_(ctx.fd) {
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
        PhaseState st(*this, ph);
        const int fd = fd_;
        const std::uint32_t bs = w_.bs;
        for (;;) {
            st.inflight += issue(ph, st, [&](unsigned s, const Io& io) {
                void* buf = buffers_.slot(s);
                io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
                if (io.write)
                    io_uring_prep_write(sqe, fd, buf, bs, io.offset);
                else
                    io_uring_prep_read(sqe, fd, buf, bs, io.offset);
                io_uring_sqe_set_data64(sqe, s);
            });
            if (st.inflight == 0) break;
            // liburing makes exactly one io_uring_enter here: wait_nr > 0
            // always needs the kernel (liburing 2.x __io_uring_submit).
            const int ret = io_uring_submit_and_wait(&ring_, want(st));
            ++st.r.syscalls;
            ++st.r.submits;
            if (ret < 0 && ret != -EBUSY && ret != -EAGAIN && ret != -EINTR) {
                if (st.r.error == 0) st.r.error = ret;
                break;
            }
            const std::uint64_t t_reap = now_ns();
            unsigned head;
            unsigned seen = 0;
            io_uring_cqe* cqe;
            io_uring_for_each_cqe(&ring_, head, cqe) {
                complete(ph, st, static_cast<unsigned>(cqe->user_data), cqe->res, t_reap);
                ++seen;
            }
            io_uring_cq_advance(&ring_, seen);
            end_turn(ph, st, t_reap);
        }
        return st.r;
    }

private:
    int fd_;
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
