// Timeouts: a timeout fires with -ETIME; a count-based one completes with 0
// once enough other completions were posted; timeout_remove cancels one; a
// link_timeout cancels a read that would block forever.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"

#include <gtest/gtest.h>

#include <cstring>

using namespace uringkit;
using namespace uringkit::testing;

namespace {
__kernel_timespec ms(long long v) {
    return {v / 1000, (v % 1000) * 1'000'000};
}
constexpr __kernel_timespec kLong{3600, 0};  // never fires during a test
}  // namespace

TEST(Timeout, FiresWithEtime) {
    Ring ring(4);
    const auto ts = ms(5);
    ring.prepare(op::Timeout(&ts)).user_data(1);
    const auto c = reap_one(ring);
    EXPECT_EQ(c.user_data, 1u);
    EXPECT_EQ(c.res, -ETIME);
}

TEST(Timeout, CountBasedCompletesAfterThatManyCompletions) {
    Ring ring(8);
    ring.prepare(op::Timeout(&kLong, 2)).user_data(1);
    ring.prepare(op::Nop{}).user_data(2);
    ring.prepare(op::Nop{}).user_data(3);
    const auto cs = reap(ring, 3);
    EXPECT_EQ(find(cs, 1).res, 0) << "the count, not the hour, ended it";
    EXPECT_EQ(find(cs, 2).res, 0);
    EXPECT_EQ(find(cs, 3).res, 0);
}

TEST(Timeout, TimeoutRemoveCancelsIt) {
    Ring ring(4);
    ring.prepare(op::Timeout(&kLong)).user_data(1);
    ASSERT_EQ(ring.submit(), 1);
    ring.prepare(op::TimeoutRemove(1)).user_data(2);
    const auto cs = reap(ring, 2);
    EXPECT_EQ(find(cs, 1).res, -ECANCELED);
    EXPECT_EQ(find(cs, 2).res, 0);
    // Removing it again finds nothing.
    ring.prepare(op::TimeoutRemove(1)).user_data(3);
    EXPECT_EQ(reap_one(ring).res, -ENOENT);
}

TEST(Timeout, LinkTimeoutCancelsABlockedRead) {
    Ring ring(4);
    Pipe pipe;
    char buf[16];
    const auto ts = ms(10);
    ring.prepare(op::Read(Fd{pipe.read_end.get()}, buf, sizeof buf, 0)).user_data(1).link();
    ring.prepare(op::LinkTimeout(&ts)).user_data(2);
    const auto cs = reap(ring, 2);
    EXPECT_EQ(find(cs, 1).res, -ECANCELED);
    EXPECT_EQ(find(cs, 2).res, -ETIME);
    // The pipe is still usable and nothing was consumed.
    ASSERT_EQ(::write(pipe.write_end.get(), "abc", 3), 3);
    ring.prepare(op::Read(Fd{pipe.read_end.get()}, buf, sizeof buf, 0)).user_data(3);
    EXPECT_EQ(reap_one(ring).res, 3);
    EXPECT_EQ(std::memcmp(buf, "abc", 3), 0);
}

TEST(Timeout, LinkTimeoutIsCancelledWhenTheOperationWins) {
    Ring ring(4);
    TempFile file(64, 5);
    char buf[64];
    ring.prepare(op::Read(Fd{file.fd()}, buf, 64, 0)).user_data(1).link();
    ring.prepare(op::LinkTimeout(&kLong)).user_data(2);
    const auto cs = reap(ring, 2);
    EXPECT_EQ(find(cs, 1).res, 64);
    EXPECT_EQ(find(cs, 2).res, -ECANCELED);
    EXPECT_EQ(std::memcmp(buf, pattern(64, 5).data(), 64), 0);
}

TEST(Timeout, AbsoluteTimeoutInThePastFiresAtOnce) {
    Ring ring(4);
    const __kernel_timespec past{1, 0};  // CLOCK_MONOTONIC second 1: long gone
    ring.prepare(op::Timeout(&past).absolute()).user_data(1);
    EXPECT_EQ(reap_one(ring).res, -ETIME);
}
