// The io_uring benchmark loop shared by uring, uring-reg, uring-sqpoll,
// uring-iopoll, uring-cmd and auto (not installed).  At depth D and batch B it keeps D
// I/Os in flight; each turn prepares SQEs for every slot freed, then makes ONE
// io_uring_enter that submits them and waits for min(B, in flight)
// completions, then reaps everything ready.  So the system calls per I/O are
// 1/B at steady state.
//
// Completion latency is "submit to reap" per I/O: each I/O is stamped as its
// SQE is prepared (queue_job.hpp), and the completions one reap takes share
// the clock read after the enter returns, when they became visible.
#pragma once

#include "queue_job.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/hand_loop.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/error.hpp"

#include <cerrno>

namespace uringkit::engines::detail {

// Ring options every uring engine starts from: the job thread owns its ring,
// so it can promise a single issuer (6.0), defer completion work to the wait
// (6.1) and register the ring fd to skip the fd lookup on each enter (5.18).
RingOptions lean_ring_options() noexcept;
// Builds the ring, dropping the newer flags when the kernel refuses them
// (EINVAL on older kernels); other failures (io_uring disabled, ENOMEM) become
// EngineUnavailable with the library's explanation.
Ring make_ring(unsigned entries, RingOptions options);
// The ring for a job: `depth` entries, or JobContext::ring_entries for both
// the SQ and the CQ (a CQ smaller than the depth can overflow).
Ring make_job_ring(const JobContext& ctx, RingOptions options);

// A uring-style job: the shared slots (queue_job.hpp) driven by one ring;
// run_loop below is parameterised by how an SQE is prepared.
class UringJobBase : public QueueJob {
public:
    explicit UringJobBase(const JobContext& ctx) : QueueJob(ctx) {}

protected:
    // Runs `reg` (a registration on the ring); the kernel refusing it makes
    // the engine unavailable here rather than failed.
    template <class Register>
    static void register_or_unavailable(Register&& reg) {
        try {
            reg();
        } catch (const RingError& e) {
            throw EngineUnavailable(e.what());
        }
    }

    // prep(ring, slot, io) writes one SQE for slot `slot`; the SQ always has
    // room (it holds at least `depth` entries and at most `depth` are in flight).
    template <class Prep>
    PhaseResult run_loop(Ring& ring, const Phase& ph, Prep&& prep) {
        return run_loop(ring, ph, prep, [](const Completion& c) { return c.res; });
    }
    // As above; `result(c)` turns a completion into the byte count or -errno
    // a read or write returns (NVMe passthrough answers 0 or an NVMe status).
    template <class Prep, class Result>
    PhaseResult run_loop(Ring& ring, const Phase& ph, Prep&& prep, Result&& result) {
        PhaseState st(*this, ph);
        const bool sqpoll = ring.setup_flags() & IORING_SETUP_SQPOLL;
        const std::uint64_t enters_before = ring.enter_calls();
        for (;;) {
            st.inflight +=
                issue(ph, st, [&](unsigned s, const Io& io) { return prep(ring, s, io); });
            if (st.inflight == 0) break;
            // A sleeping SQPOLL thread costs an enter with IORING_ENTER_SQ_WAKEUP
            // (Ring::enter adds it): count what the application saw, before it enters.
            if (sqpoll && ring.sq_pending() && (ring.sq_flags() & IORING_SQ_NEED_WAKEUP))
                ++st.r.sq_wakeups;
            const int ret = ring.submit_and_wait(want(st));
            ++st.r.submits;
            if (!enter_continues(ret)) {
                // The ring itself failed: nothing more can be trusted to complete.
                if (st.r.error == 0) st.r.error = ret;
                break;
            }
            if (ret < 0) ++st.r.enter_retries;
            // A full CQ parks completions in the kernel's overflow list;
            // for_each_completion flushes them back in, at the cost of an enter.
            if (ring.sq_flags() & IORING_SQ_CQ_OVERFLOW) ++st.r.cq_overflows;
            const std::uint64_t t_reap = now_ns();
            ring.for_each_completion([&](const Completion& c) {
                complete(ph, st, static_cast<unsigned>(c.user_data), result(c), t_reap);
            });
            end_turn(ph, st, t_reap);
        }
        st.r.syscalls = ring.enter_calls() - enters_before;
        return st.r;
    }

    // The loop with plain IORING_OP_READ/WRITE on `file` (an Fd, or a Fixed
    // index into the registered files); `sqe_flags` are OR-ed into every SQE
    // (IOSQE_ASYNC for uring-async).
    PhaseResult run_rw(Ring& ring, const Phase& ph, File file, std::uint8_t sqe_flags = 0) {
        const std::uint32_t bs = w_.bs;
        return run_loop(ring, ph, [&](Ring& rg, unsigned s, const Io& io) {
            void* buf = buffers_.slot(s);
            io_uring_sqe* sqe = next_sqe(rg);
            if (!sqe) return false;
            if (io.write)
                op::Write(file, buf, bs, io.offset).prepare(*sqe);
            else
                op::Read(file, buf, bs, io.offset).prepare(*sqe);
            sqe->flags |= sqe_flags;
            sqe->user_data = s;
            return true;
        });
    }

    // The SQ holds `depth` entries and at most `depth` I/Os are in flight, yet
    // with SQPOLL it can look full for a moment: the poll thread moves the SQ
    // head only after submitting its whole batch, and a read it completed
    // inline may already be reaped and its slot refilled.  Wait for the head
    // then (Ring::wait_sq_space); nullptr only if the ring itself failed.
    static io_uring_sqe* next_sqe(Ring& ring) noexcept {
        for (;;) {
            if (io_uring_sqe* sqe = ring.get_sqe()) return sqe;
            if (ring.wait_sq_space() < 0) return nullptr;
        }
    }
};

}  // namespace uringkit::engines::detail
