// One latency for every engine: submit to reap per I/O.  A fake queue
// engine on the shared skeleton (queue_job.hpp) whose hand-over of each I/O
// takes a known delay, as a synchronous io_submit on a buffered file does,
// and whose completions are all reaped after the batch: I/O k of a batch of
// 4 then waited (4-k+1) delays.  With one stamp per batch every I/O would
// share the first one and the spread would be zero.
#include "queue_job.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace uringkit::engines;
using namespace uringkit::measure;
using namespace uringkit::engines::detail;

namespace {

constexpr std::uint64_t kDelayNs = 2'000'000;  // 2 ms per hand-over

void spin_for(std::uint64_t ns) {
    const std::uint64_t until = now_ns() + ns;
    while (now_ns() < until) {
    }
}

class SlowSubmitJob final : public QueueJob {
public:
    explicit SlowSubmitJob(const JobContext& ctx) : QueueJob(ctx), ready_(ctx.depth) {}

    PhaseResult run(const Phase& ph) override {
        PhaseState st(*this, ph);
        for (;;) {
            unsigned n = 0;
            st.inflight += issue(ph, st, [&](unsigned s, const Io&) {
                spin_for(kDelayNs);  // the "device" does the I/O while it is handed over
                ready_[n++] = s;
            });
            if (st.inflight == 0) break;
            const std::uint64_t t_reap = now_ns();
            for (unsigned i = 0; i < n; ++i) complete(ph, st, ready_[i], w_.bs, t_reap);
            end_turn(ph, st, t_reap);
        }
        return st.r;
    }

private:
    std::vector<unsigned> ready_;
};

}  // namespace

TEST(BenchLatency, QueueEnginesStampEachIoAtItsHandOver) {
    Workload w;
    w.bs = 4096;
    w.size = 1 << 20;
    JobContext ctx;
    ctx.workload = &w;
    ctx.depth = 4;
    ctx.batch = 4;
    SlowSubmitJob job(ctx);
    LatencyHistogram lat;
    Phase ph;
    ph.max_ios = 4;  // one batch
    ph.latency = &lat;
    const PhaseResult r = job.run(ph);
    ASSERT_EQ(r.ios, 4u);
    ASSERT_EQ(lat.count(), 4u);
    // Each I/O waited at least its own hand-over; the first of the batch
    // waited all four.  The spread is at least three delays, however the
    // scheduler stretched them (a longer spin only widens it).
    const double min = static_cast<double>(lat.min()), max = static_cast<double>(lat.max());
    EXPECT_GE(min, kDelayNs * 0.99) << "an I/O's latency includes its own hand-over";
    EXPECT_GE(max - min, 3 * kDelayNs * 0.98)
        << "all I/Os of the batch share one stamp: min " << min << " ns, max " << max << " ns";
    EXPECT_GE(max, 4 * kDelayNs * 0.99);
}
