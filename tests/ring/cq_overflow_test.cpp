// A small CQ overrun 4x without reaping: with IORING_FEAT_NODROP the kernel
// parks the surplus in its overflow list and sets IORING_SQ_CQ_OVERFLOW; the
// ring must flush it back so that every user_data completes exactly once.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

using namespace uringkit;
using namespace uringkit::testing;

namespace {
constexpr unsigned kCq = 16;

// Submits 4 * kCq NOPs (user_data 0..) in batches of kCq without reaping.
void overrun(Ring& ring) {
    std::uint64_t ud = 0;
    for (unsigned batch = 0; batch < 4; ++batch) {
        for (unsigned i = 0; i < kCq; ++i) ASSERT_TRUE(ring.prepare(op::Nop{}).user_data(ud++));
        int r;
        // EBUSY/EAGAIN would be the kernel asking us to reap first: that is
        // exactly what this test refuses to do, so it must not happen here.
        ASSERT_EQ(r = ring.submit(), static_cast<int>(kCq)) << "batch " << batch << ": " << r;
    }
}

void expect_each_once(const std::vector<std::uint64_t>& seen) {
    std::vector<int> count(4 * kCq, 0);
    for (auto u : seen) {
        ASSERT_LT(u, count.size());
        ++count[u];
    }
    for (unsigned u = 0; u < count.size(); ++u) EXPECT_EQ(count[u], 1) << "user_data " << u;
}
}  // namespace

TEST(CqOverflow, ForEachCompletionFlushesTheOverflowList) {
    Ring ring(kCq, {.cq_entries = kCq});
    if (!ring.has_feature(IORING_FEAT_NODROP))
        GTEST_SKIP() << "no IORING_FEAT_NODROP (5.5): the kernel drops";
    ASSERT_EQ(ring.cq_entries(), kCq);
    overrun(ring);
    EXPECT_EQ(ring.cq_ready(), kCq) << "the CQ is full";
    EXPECT_TRUE(ring.needs_flush()) << "IORING_SQ_CQ_OVERFLOW is set while completions wait";

    std::vector<std::uint64_t> seen;
    const unsigned n = ring.for_each_completion([&](const Completion& c) {
        EXPECT_EQ(c.res, 0);
        seen.push_back(c.user_data);
    });
    EXPECT_EQ(n, 4 * kCq);
    expect_each_once(seen);
    EXPECT_FALSE(ring.needs_flush());
    // With NODROP the surplus was parked, not dropped: the CQ ring's overflow
    // counter (what a kernel without NODROP would count) stays 0.
    EXPECT_EQ(ring.dropped_completions(), 0u);
    EXPECT_EQ(ring.cq_ready(), 0u);
    // The overflow flag does not linger: the ring keeps working.
    ring.prepare(op::Nop{}).user_data(999);
    EXPECT_EQ(reap_one(ring).user_data, 999u);
}

TEST(CqOverflow, CopyCompletionsFlushesToo) {
    Ring ring(kCq, {.cq_entries = kCq});
    if (!ring.has_feature(IORING_FEAT_NODROP)) GTEST_SKIP() << "no IORING_FEAT_NODROP (5.5)";
    overrun(ring);
    std::vector<std::uint64_t> seen;
    std::array<Completion, 7> out{};  // an odd size: partial batches
    for (int guard = 0; guard < 100 && seen.size() < 4 * kCq; ++guard) {
        const unsigned n = ring.copy_completions(out);
        for (unsigned i = 0; i < n; ++i) seen.push_back(out[i].user_data);
        if (n == 0) break;
    }
    EXPECT_EQ(seen.size(), 4 * kCq);
    expect_each_once(seen);
    EXPECT_FALSE(ring.needs_flush());
}

TEST(CqOverflow, SubmitAndWaitAfterOverrunStillDeliversAll) {
    Ring ring(kCq, {.cq_entries = kCq});
    if (!ring.has_feature(IORING_FEAT_NODROP)) GTEST_SKIP() << "no IORING_FEAT_NODROP (5.5)";
    overrun(ring);
    // A reaper that waits one at a time (the usual loop) sees everything.
    const auto cs = reap(ring, 4 * kCq);
    std::vector<std::uint64_t> seen;
    for (const auto& c : cs) seen.push_back(c.user_data);
    expect_each_once(seen);
}
