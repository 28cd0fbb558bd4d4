// The batching wait (IORING_FEAT_MIN_TIMEOUT, 6.12) and BatchWait's choice of
// when to use it.  Kernel behaviour is checked on both completion paths
// (plain, and SINGLE_ISSUER|DEFER_TASKRUN, where the kernel also holds back
// the wake-up); times are only checked from below, where the kernel promises
// them, or against seconds.
#include "uringkit/async/batch_wait.hpp"
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/sys/error.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <utility>
#include <vector>

using namespace uringkit;
using namespace uringkit::testing;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

Ring make_ring(bool defer_taskrun) {
    RingOptions o;
    o.single_issuer = o.defer_taskrun = defer_taskrun;
    return Ring(16, o);
}

class BatchWaitKernel : public ::testing::TestWithParam<bool> {
protected:
    void SetUp() override {
        try {
            ring_.emplace(make_ring(GetParam()));
        } catch (const RingError& e) {
            GTEST_SKIP() << "no DEFER_TASKRUN ring here (6.1): " << e.what();
        }
        if (!ring_->has_feature(IORING_FEAT_MIN_TIMEOUT))
            GTEST_SKIP() << "no IORING_FEAT_MIN_TIMEOUT (6.12): the batching wait is not there";
    }
    std::optional<Ring> ring_;
};

std::chrono::milliseconds since(Clock::time_point t0) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
}

}  // namespace

// Fewer than wait_nr: the kernel holds the wait for min_wait, then returns
// with what it has rather than waiting for all of them.
TEST_P(BatchWaitKernel, ReturnsWithFewerOnceTheBatchWaitHasPassed) {
    Ring& ring = *ring_;
    ring.prepare(op::Nop{}).user_data(7);
    const auto t0 = Clock::now();
    EXPECT_EQ(ring.submit_and_wait_batch(8, 40ms, 10s), 1);
    const auto took = since(t0);
    EXPECT_GE(took, 35ms) << "returned before the batch wait";
    EXPECT_LT(took, 5s) << "waited for all eight";
    ASSERT_EQ(ring.cq_ready(), 1u);
    EXPECT_EQ(reap_one(ring).user_data, 7u);
}

TEST_P(BatchWaitKernel, ReturnsAtOnceWhenWaitNrAreReady) {
    Ring& ring = *ring_;
    for (int i = 0; i < 8; ++i)
        ring.prepare(op::Nop{}).user_data(static_cast<std::uint64_t>(i + 1));
    const auto t0 = Clock::now();
    EXPECT_EQ(ring.submit_and_wait_batch(8, 3s, 10s), 8);
    EXPECT_LT(since(t0), 2s) << "sat out the batch wait with all eight ready";
    EXPECT_EQ(ring.cq_ready(), 8u);
}

// Nothing ready when the batch wait ends: the wait goes on until the first
// completion, not back to the caller empty-handed.
TEST_P(BatchWaitKernel, WithNothingReadyWaitsForTheFirstCompletion) {
    Ring& ring = *ring_;
    const __kernel_timespec ts{0, 120'000'000};
    ring.prepare(op::Timeout(&ts)).user_data(3);
    const auto t0 = Clock::now();
    EXPECT_EQ(ring.submit_and_wait_batch(8, 10ms, 10s), 1);
    EXPECT_GE(since(t0), 100ms);
    ASSERT_EQ(ring.cq_ready(), 1u);
    const Completion c = reap_one(ring);
    EXPECT_EQ(c.user_data, 3u);
    EXPECT_EQ(c.res, -ETIME);
}

TEST_P(BatchWaitKernel, GivesUpWithEtimeAtTheTimeout) {
    Ring& ring = *ring_;
    const auto t0 = Clock::now();
    EXPECT_EQ(ring.submit_and_wait_batch(8, 5ms, 60ms), -ETIME);
    EXPECT_GE(since(t0), 50ms);
    EXPECT_EQ(ring.cq_ready(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Paths, BatchWaitKernel, ::testing::Values(false, true),
                         [](const auto& p) { return p.param ? "DeferTaskrun" : "Plain"; });

TEST(BatchWait, ZeroMinWaitIsNotSupported) {
    Ring ring(4);
    EXPECT_EQ(ring.submit_and_wait_batch(8, 0us, 1s), -EOPNOTSUPP);
    BatchWaitOptions o;
    o.min_wait = 0us;
    EXPECT_FALSE(BatchWait(ring, o).supported());
}

// The policy, driven with a fake millisecond clock.  Where the kernel lacks
// the batching wait it must never choose it.
class BatchWaitPolicy : public ::testing::Test {
protected:
    Ring ring_{4};
    BatchWaitOptions options_ = [] {
        BatchWaitOptions o;  // batch while clients spend >= 10 x 50 µs in the system
        o.min_wait = std::chrono::microseconds(50);
        o.latency_factor = 10;
        return o;
    }();
    std::uint64_t now_ = 1000;

    // One window: `requests` spread over `clients`, each stamping itself.
    void window(BatchWait& w, unsigned clients, unsigned requests) {
        std::vector<std::uint32_t> stamps(clients, 0);
        w.tick(now_);
        for (unsigned i = 0; i < requests; ++i) w.request(stamps[i % clients]);
        now_ += static_cast<std::uint64_t>(options_.window.count());
        w.tick(now_);
    }
};

TEST_F(BatchWaitPolicy, OneClientNeverBatches) {
    BatchWait w(ring_, options_);
    for (unsigned requests : {100u, 700u, 5000u}) {
        window(w, 1, requests);
        EXPECT_FALSE(w.batching()) << requests << " requests from one client";
    }
}

TEST_F(BatchWaitPolicy, ASlowLoneClientDoesNotBatch) {
    BatchWait w(ring_, options_);
    // 100 requests in 20 ms from one client: 200 µs each, yet nobody to wait for.
    window(w, 1, 100);
    EXPECT_FALSE(w.batching());
    window(w, 3, 60);  // three slow clients: still under min_clients
    EXPECT_FALSE(w.batching());
    window(w, 4, 60);  // four clients, 1.3 ms each
    EXPECT_EQ(w.batching(), w.supported());
}

TEST_F(BatchWaitPolicy, ManyClientsWaitingLongBatch) {
    BatchWait w(ring_, options_);
    // 64 clients, 1,600 requests in 20 ms: each spends ~800 µs in the system.
    window(w, 64, 1600);
    EXPECT_EQ(w.batching(), w.supported());
}

TEST_F(BatchWaitPolicy, FewClientsWithShortTurnsDoNot) {
    BatchWait w(ring_, options_);
    // 4 clients, 1,600 requests in 20 ms: 50 µs each, a 50 µs wait would double it.
    window(w, 4, 1600);
    EXPECT_FALSE(w.batching());
}

TEST_F(BatchWaitPolicy, AQuietWindowDoesNotCountAsLoad) {
    BatchWait w(ring_, options_);
    window(w, 64, 20);  // under min_requests
    EXPECT_FALSE(w.batching());
}

TEST_F(BatchWaitPolicy, StopsBatchingWhenTheLoadChanges) {
    BatchWait w(ring_, options_);
    window(w, 64, 1600);
    EXPECT_EQ(w.batching(), w.supported());
    window(w, 2, 1600);
    EXPECT_FALSE(w.batching());
    window(w, 64, 1600);
    EXPECT_EQ(w.batching(), w.supported());
    window(w, 64, 0);  // the clients went away
    EXPECT_FALSE(w.batching());
}

TEST_F(BatchWaitPolicy, DecidesOnlyAtTheEndOfAWindow) {
    BatchWait w(ring_, options_);
    w.tick(now_);
    std::vector<std::uint32_t> stamps(64, 0);
    for (unsigned i = 0; i < 1600; ++i) w.request(stamps[i % 64]);
    w.tick(now_ + static_cast<std::uint64_t>(options_.window.count()) - 1);
    EXPECT_FALSE(w.batching()) << "decided before the window ended";
    w.tick(now_ + static_cast<std::uint64_t>(options_.window.count()));
    EXPECT_EQ(w.batching(), w.supported());
}
