// The skeleton every queue-depth engine (uring*, liburing, libaio, threadpool)
// runs on (not installed): the slots of the I/Os in flight, how an I/O is
// issued into a free slot and how its completion is accounted.  An engine adds
// only what its submission API needs (an SQE, an iocb, a queue item) and its
// own submit, wait and reap; so every engine draws the same offsets, stamps and
// verifies the same way and times "submit to reap" the same way: a clock read
// per I/O as it is handed over, one per reap for the completions it takes.
// Nothing here allocates after construction.
#pragma once

#include "internal.hpp"

#include <cstdint>
#include <type_traits>
#include <vector>

namespace uringkit::engines::detail {

struct InflightSlot {
    std::uint64_t offset;
    std::uint64_t submitted_ns;  // this I/O's own clock read, just before it was handed over
    bool write;
};

class QueueJob : public EngineJob {
protected:
    explicit QueueJob(const JobContext& ctx)
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

    // The running state of one phase.
    struct PhaseState {
        PhaseState(QueueJob& job, const Phase& ph) noexcept : issuing(!stop_requested(ph)) {
            if (ph.restart_offsets) job.pattern_.restart();
        }
        PhaseResult r;
        unsigned inflight = 0;     // handed to the kernel or the pool, not yet reaped
        std::uint64_t issued = 0;  // counted against the phase's I/O budget
        bool issuing;              // false once stopped, past the deadline or failed
    };

    // Fills every free slot with the pattern's next I/O, up to the budget,
    // and returns how many it prepared.  `prep(slot, io)` hands one to the
    // engine's API; it may return false where the API refuses it, which
    // frees the slot again and ends the batch.
    template <class Prep>
    unsigned issue(const Phase& ph, PhaseState& st, Prep&& prep) {
        unsigned prepared = 0;
        if (!st.issuing) return 0;
        while (nfree_ > 0 && st.issued < ph.max_ios) {
            const unsigned s = free_[--nfree_];
            const Io io = pattern_.next();
            if (io.write) stamp_block(buffers_.slot(s), w_.bs, io.offset);
            // Each I/O is stamped as it is handed over, as pread stamps each
            // call: a batch's I/Os then differ by the time spent handing over
            // the ones before them (a synchronous io_submit, a pool hand-off).
            // No clock read when nothing records latency (--no-latency).
            slots_[s] = InflightSlot{io.offset, ph.latency ? now_ns() : 0, io.write};
            if constexpr (std::is_same_v<decltype(prep(s, io)), bool>) {
                if (!prep(s, io)) {
                    release(s);
                    break;
                }
            } else {
                prep(s, io);
            }
            ++st.issued;
            ++prepared;
        }
        return prepared;
    }

    // Completions to wait for in one call: the batch, or all in flight if fewer.
    unsigned want(const PhaseState& st) const noexcept {
        return st.inflight < batch_ ? st.inflight : batch_;
    }

    // Accounts one completion with result `res` (bytes or -errno) and frees
    // its slot; returns true when the transfer was whole (and verified).
    // A failed one stops issuing: the phase drains and reports it.
    bool settle(PhaseState& st, unsigned s, std::int64_t res) noexcept {
        const InflightSlot& slot = slots_[s];
        --st.inflight;
        free_[nfree_++] = s;  // its fields stay valid until the slot is issued again
        if (check_transfer(st.r, res, w_.bs, slot.offset, buffers_.slot(s), slot.write,
                           w_.verify)) {
            ++st.r.ios;
            st.r.bytes += w_.bs;
            st.r.writes += slot.write;
            return true;
        }
        st.issuing = false;
        return false;
    }
    void record_latency(const Phase& ph, unsigned s, std::uint64_t t_reap) noexcept {
        if (ph.latency) ph.latency->record(t_reap - slots_[s].submitted_ns);
    }
    // settle() and, for a good transfer, its latency from the batch's reap time.
    void complete(const Phase& ph, PhaseState& st, unsigned s, std::int64_t res,
                  std::uint64_t t_reap) noexcept {
        if (settle(st, s, res)) record_latency(ph, s, t_reap);
    }
    // Returns a slot that was prepared but never handed over.
    void release(unsigned s) noexcept { free_[nfree_++] = s; }

    // After each reap: progress for the live line, and no new I/O past the
    // deadline or once stopped.
    static void end_turn(const Phase& ph, PhaseState& st, std::uint64_t t_reap) noexcept {
        publish_progress(ph, st.r.ios);
        if (t_reap >= ph.deadline_ns || stop_requested(ph)) st.issuing = false;
    }

    const InflightSlot& slot(unsigned s) const noexcept { return slots_[s]; }

    const Workload& w_;
    unsigned depth_;
    unsigned batch_;
    IoPattern pattern_;
    BufferArena buffers_;

private:
    std::vector<InflightSlot> slots_;  // sized once here; the loops only index
    std::vector<unsigned> free_;
    unsigned nfree_ = 0;
};

}  // namespace uringkit::engines::detail
