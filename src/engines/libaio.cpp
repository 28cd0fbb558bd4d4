// libaio: Linux native AIO, io_submit + io_getevents.  Truly asynchronous only
// for O_DIRECT: on a buffered file io_submit performs the read or write itself
// before returning, so "depth" is a queue of finished work, and the figures
// say so (see the note on the row).
#include "internal.hpp"

#ifdef URINGKIT_HAVE_LIBAIO
#include <libaio.h>

#include <cstring>
#include <string>
#include <vector>
#endif

namespace uringkit::engines::detail {

#ifdef URINGKIT_HAVE_LIBAIO
namespace {

struct Slot {
    std::uint64_t offset;
    std::uint64_t submitted_ns;
    bool write;
};

class LibaioJob final : public EngineJob {
public:
    explicit LibaioJob(const JobContext& ctx)
        : fd_(ctx.fd),
          w_(*ctx.workload),
          depth_(ctx.depth),
          batch_(ctx.batch),
          pattern_(w_, ctx.job, ctx.jobs),
          buffers_(ctx.depth, w_.bs, ctx.buffer_align),
          slots_(ctx.depth),
          free_(ctx.depth),
          iocbs_(ctx.depth),
          pending_(ctx.depth),
          events_(ctx.depth) {
        for (unsigned i = 0; i < depth_; ++i) free_[i] = depth_ - 1 - i;
        nfree_ = depth_;
        const int r = io_setup(static_cast<int>(depth_), &ctx_);
        if (r < 0)
            throw EngineUnavailable(std::string("io_setup: ") + std::strerror(-r) +
                                    (r == -EAGAIN ? " (depth above /proc/sys/fs/aio-max-nr)" : ""));
    }
    ~LibaioJob() override { io_destroy(ctx_); }

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
                    iocb* cb = &iocbs_[s];
                    if (io.write) {
                        stamp_block(buf, bs, io.offset);
                        io_prep_pwrite(cb, fd_, buf, bs, static_cast<long long>(io.offset));
                    } else {
                        io_prep_pread(cb, fd_, buf, bs, static_cast<long long>(io.offset));
                    }
                    cb->data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(s));
                    pending_[prepared++] = cb;
                    ++issued;
                }
            }
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
                    inflight += static_cast<unsigned>(n);
                    continue;
                }
                if (n == -EAGAIN && inflight > 0) break;  // reap first, then offer again below
                if (r.error == 0) {
                    r.error = n < 0 ? n : -EIO;
                    r.error_offset = slots_[static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(
                                                pending_[done]->data))]
                                         .offset;
                }
                issuing = false;
                break;
            }
            for (unsigned i = done; i < prepared; ++i)  // not taken: back to the free list
                free_[nfree_++] =
                    static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(pending_[i]->data));
            issued -= prepared - done;
            if (inflight == 0) break;
            const long want = inflight < batch_ ? inflight : batch_;
            int got;
            do {
                got = io_getevents(ctx_, want, static_cast<long>(depth_), events_.data(), nullptr);
                ++r.syscalls;
            } while (got == -EINTR);
            if (got < 0) {
                if (r.error == 0) r.error = got;
                break;
            }
            const std::uint64_t t_reap = now_ns();
            for (int i = 0; i < got; ++i) {
                const io_event& ev = events_[static_cast<unsigned>(i)];
                const auto s = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(ev.data));
                const Slot& slot = slots_[s];
                --inflight;
                free_[nfree_++] = s;
                // res is the byte count or -errno (a signed value in an unsigned field).
                const auto res = static_cast<std::int64_t>(ev.res);
                if (check_transfer(r, res, bs, slot.offset, buffers_.slot(s), slot.write, verify)) {
                    ++r.ios;
                    r.bytes += bs;
                    if (ph.latency) ph.latency->record(t_reap - slot.submitted_ns);
                } else {
                    issuing = false;
                }
            }
            publish_progress(ph, r.ios);
            if (t_reap >= ph.deadline_ns || stop_requested(ph)) issuing = false;
        }
        return r;
    }

    std::string note() const override {
        return w_.direct ? std::string() : "buffered: io_submit completes the I/O before returning";
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
