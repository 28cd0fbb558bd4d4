// The io_uring benchmark loop shared by uring, uring-reg, uring-sqpoll,
// uring-iopoll and auto (not installed).  At depth D and batch B it keeps D
// I/Os in flight; each turn prepares SQEs for every slot freed, then makes ONE
// io_uring_enter that submits them and waits for min(B, in flight)
// completions, then reaps everything ready.  So the system calls per I/O are
// 1/B at steady state.
//
// Completion latency is "submit to reap" taken with one clock read per batch
// on each side (before preparing, after the enter returns): every I/O in a
// batch shares its batch's two timestamps.  Two vDSO clock reads per batch
// instead of two per I/O keeps the clock out of the figures it measures.
#pragma once

#include "internal.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/error.hpp"

#include <cerrno>
#include <memory>
#include <vector>

namespace uringkit::engines::detail {

struct UringSlot {
    std::uint64_t offset;
    std::uint64_t submitted_ns;
    bool write;
};

// Ring options every uring engine starts from: the job thread owns its ring,
// so it can promise a single issuer (6.0), defer completion work to the wait
// (6.1) and register the ring fd to skip the fd lookup on each enter (5.18).
RingOptions lean_ring_options() noexcept;
// Builds the ring, dropping the newer flags when the kernel refuses them
// (EINVAL on older kernels); other failures (io_uring disabled, ENOMEM) become
// EngineUnavailable with the library's explanation.
Ring make_ring(unsigned entries, RingOptions options);

// The slots, buffers and offsets of one uring-style job; the loop itself is
// run_uring_loop below, parameterised by how an SQE is prepared.
class UringJobBase : public EngineJob {
public:
    explicit UringJobBase(const JobContext& ctx)
        : w_(*ctx.workload),
          depth_(ctx.depth),
          batch_(ctx.batch),
          pattern_(w_, ctx.job, ctx.jobs),
          buffers_(ctx.depth, w_.bs, ctx.buffer_align),
          slots_(ctx.depth),
          free_(ctx.depth) {
        for (unsigned i = 0; i < depth_; ++i) free_[i] = depth_ - 1 - i;
        nfree_ = depth_;
    }

protected:
    // prep(ring, slot, io) writes one SQE for slot `slot`; the SQ always has
    // room (it holds at least `depth` entries and at most `depth` are in flight).
    template <class Prep>
    PhaseResult run_loop(Ring& ring, const Phase& ph, Prep&& prep) {
        PhaseResult r;
        const std::uint64_t enters_before = ring.enter_calls();
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
                    slots_[s] = UringSlot{io.offset, t_submit, io.write};
                    if (io.write) stamp_block(buffers_.slot(s), bs, io.offset);
                    prep(ring, s, io);
                    ++issued;
                    ++prepared;
                }
            }
            inflight += prepared;
            if (inflight == 0) break;
            const unsigned want = inflight < batch_ ? inflight : batch_;
            const int ret = ring.submit_and_wait(want);
            ++r.submits;
            if (ret < 0 && ret != -EBUSY && ret != -EAGAIN && ret != -EINTR) {
                // The ring itself failed: nothing more can be trusted to complete.
                if (r.error == 0) r.error = ret;
                break;
            }
            const std::uint64_t t_reap = now_ns();
            ring.for_each_completion([&](const Completion& c) {
                const auto s = static_cast<unsigned>(c.user_data);
                const UringSlot& slot = slots_[s];
                --inflight;
                free_[nfree_++] = s;
                if (check_transfer(r, c.res, bs, slot.offset, buffers_.slot(s), slot.write,
                                   verify)) {
                    ++r.ios;
                    r.bytes += bs;
                    if (ph.latency) ph.latency->record(t_reap - slot.submitted_ns);
                } else {
                    issuing = false;
                }
            });
            publish_progress(ph, r.ios);
            if (t_reap >= ph.deadline_ns || stop_requested(ph)) issuing = false;
        }
        r.syscalls = ring.enter_calls() - enters_before;
        return r;
    }

    const Workload& w_;
    unsigned depth_;
    unsigned batch_;
    IoPattern pattern_;
    BufferArena buffers_;
    std::vector<UringSlot> slots_;  // sized once here; the loop only indexes
    std::vector<unsigned> free_;
    unsigned nfree_ = 0;
};

}  // namespace uringkit::engines::detail
