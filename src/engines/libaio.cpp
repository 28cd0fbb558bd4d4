// libaio: Linux native AIO, io_submit + io_getevents.  Truly asynchronous only
// for O_DIRECT: on a buffered file io_submit performs the read or write itself
// before returning, so "depth" is a queue of finished work, and the figures
// say so (see the note on the row).
#include "queue_job.hpp"

#ifdef URINGKIT_HAVE_LIBAIO
#include <libaio.h>

#include <cstring>
#include <string>
#include <vector>
#endif

namespace uringkit::engines::detail {

#ifdef URINGKIT_HAVE_LIBAIO
namespace {

class LibaioJob final : public QueueJob {
public:
    explicit LibaioJob(const JobContext& ctx)
        : QueueJob(ctx), fd_(ctx.fd), iocbs_(ctx.depth), pending_(ctx.depth), events_(ctx.depth) {
        const int r = io_setup(static_cast<int>(depth_), &ctx_);
        if (r < 0)
            throw EngineUnavailable(std::string("io_setup: ") + std::strerror(-r) +
                                    (r == -EAGAIN ? " (depth above /proc/sys/fs/aio-max-nr)" : ""));
    }
    ~LibaioJob() override { io_destroy(ctx_); }

    PhaseResult run(const Phase& ph) override {
        PhaseState st(*this, ph);
        PhaseResult& r = st.r;
        const int fd = fd_;
        const std::uint32_t bs = w_.bs;
        for (;;) {
            unsigned prepared = 0;
            issue(ph, st, [&](unsigned s, const Io& io) {
                void* buf = buffers_.slot(s);
                iocb* cb = &iocbs_[s];
                if (io.write)
                    io_prep_pwrite(cb, fd, buf, bs, static_cast<long long>(io.offset));
                else
                    io_prep_pread(cb, fd, buf, bs, static_cast<long long>(io.offset));
                cb->data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(s));
                pending_[prepared++] = cb;
            });
            // io_submit may take fewer than offered (-EAGAIN or a short count
            // when the kernel is out of requests); offer the rest again.
            unsigned done = 0;
            while (done < prepared) {
                const int n =
                    io_submit(ctx_, static_cast<long>(prepared - done), pending_.data() + done);
                ++r.syscalls;
                ++r.submits;
                if (n > 0) {
                    done += static_cast<unsigned>(n);
                    st.inflight += static_cast<unsigned>(n);
                    continue;
                }
                if (n == -EAGAIN && st.inflight > 0) break;  // reap first, then offer again below
                if (r.error == 0) {
                    r.error = n < 0 ? n : -EIO;
                    r.error_offset = slot(slot_of(pending_[done]->data)).offset;
                }
                st.issuing = false;
                break;
            }
            for (unsigned i = done; i < prepared; ++i)  // not taken: back to the free list
                release(slot_of(pending_[i]->data));
            st.issued -= prepared - done;
            if (st.inflight == 0) break;
            const long want_n = want(st);
            int got;
            do {
                got =
                    io_getevents(ctx_, want_n, static_cast<long>(depth_), events_.data(), nullptr);
                ++r.syscalls;
            } while (got == -EINTR);
            if (got < 0) {
                if (r.error == 0) r.error = got;
                break;
            }
            const std::uint64_t t_reap = now_ns();
            for (int i = 0; i < got; ++i) {
                const io_event& ev = events_[static_cast<unsigned>(i)];
                // res is the byte count or -errno (a signed value in an unsigned field).
                complete(ph, st, slot_of(ev.data), static_cast<std::int64_t>(ev.res), t_reap);
            }
            end_turn(ph, st, t_reap);
        }
        return r;
    }

    std::string note() const override {
        return w_.direct ? std::string() : "buffered: io_submit completes the I/O before returning";
    }

private:
    static unsigned slot_of(const void* data) noexcept {
        return static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(data));
    }

    int fd_;
    std::vector<iocb> iocbs_;
    std::vector<iocb*> pending_;
    std::vector<io_event> events_;
    io_context_t ctx_ = nullptr;
};

}  // namespace

std::unique_ptr<EngineJob> start_libaio(const JobContext& ctx) {
    return std::make_unique<LibaioJob>(ctx);
}

#else

std::unique_ptr<EngineJob> start_libaio(const JobContext&) {
    throw EngineUnavailable("not built: libaio-dev was not found when uringkit was built");
}

#endif

}  // namespace uringkit::engines::detail
