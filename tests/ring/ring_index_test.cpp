// Index-level checks of the hand-built ring, after each step (as Zig's
// IoUring.zig tests do): what we prepared, what the kernel consumed, what
// completed, and that a full SQ refuses rather than overwrites.
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/ring.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

using namespace uringkit;

TEST(RingIndex, FreshRingIsEmpty) {
    Ring ring(4);
    EXPECT_EQ(ring.sq_entries(), 4u);
    EXPECT_EQ(ring.cq_entries(), 8u);  // the kernel's default: twice the SQ
    EXPECT_EQ(ring.sq_space_left(), 4u);
    EXPECT_EQ(ring.sq_pending(), 0u);
    EXPECT_EQ(ring.cq_ready(), 0u);
}

TEST(RingIndex, FullSqRefusesInsteadOfOverwriting) {
    Ring ring(4);
    for (unsigned i = 0; i < 4; ++i) {
        ASSERT_TRUE(ring.prepare(op::Nop{})) << "slot " << i;
        EXPECT_EQ(ring.sq_space_left(), 3u - i);
        EXPECT_EQ(ring.sq_pending(), i + 1);
    }
    EXPECT_FALSE(ring.prepare(op::Nop{}));
    EXPECT_EQ(ring.get_sqe(), nullptr);
    EXPECT_EQ(ring.cq_ready(), 0u) << "nothing is visible to the kernel before submit";
    EXPECT_EQ(ring.submit(), 4);
    EXPECT_EQ(ring.sq_pending(), 0u);
    EXPECT_EQ(ring.sq_space_left(), 4u);
    EXPECT_EQ(ring.cq_ready(), 4u);
}

TEST(RingIndex, EveryUserDataCompletesOnceAcrossWraparound) {
    Ring ring(8);
    std::multiset<std::uint64_t> seen;
    std::uint64_t next = 0;
    for (int round = 0; round < 10; ++round) {
        for (int i = 0; i < 5; ++i) ring.prepare(op::Nop{}).user_data(next++);
        ASSERT_EQ(ring.submit_and_wait(5), 5);
        const unsigned n = ring.for_each_completion([&](const Completion& c) {
            EXPECT_EQ(c.res, 0);
            seen.insert(c.user_data);
        });
        EXPECT_EQ(n, 5u);
        EXPECT_EQ(ring.cq_ready(), 0u);
    }
    ASSERT_EQ(seen.size(), next);
    for (std::uint64_t u = 0; u < next; ++u) EXPECT_EQ(seen.count(u), 1u) << u;
}

TEST(RingIndex, StaleFieldsDoNotSurviveSlotReuse) {
    Ring ring(1);
    // A read with flags, then a NOP in the same slot: the NOP must not inherit
    // the link flag or the user_data.
    char buf[8];
    ring.prepare(op::Read(Fd{-1}, buf, sizeof buf, 0)).user_data(77).link();
    ASSERT_EQ(ring.submit_and_wait(1), 1);
    ring.for_each_completion([](const Completion& c) { EXPECT_EQ(c.res, -EBADF); });
    io_uring_sqe* s = ring.get_sqe();
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->flags, 0);
    EXPECT_EQ(s->user_data, 0u);
    EXPECT_EQ(s->addr, 0u);
}

TEST(RingIndex, MoveTransfersOwnership) {
    Ring a(4);
    const int fd = a.fd();
    Ring b(std::move(a));
    EXPECT_EQ(b.fd(), fd);
    EXPECT_EQ(a.fd(), -1);
    b.prepare(op::Nop{}).user_data(5);
    EXPECT_EQ(b.submit_and_wait(1), 1);
    EXPECT_EQ(b.cq_ready(), 1u);
}
