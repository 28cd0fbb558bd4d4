// Index-level checks of the hand-built ring, after each step (as Zig's
// IoUring.zig tests do): what we prepared, what the kernel consumed, what
// completed, and that a full SQ refuses rather than overwrites.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/big_ring.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

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

// ---- 128-byte SQEs and 32-byte CQEs (BigRing) ------------------------------

// A 128-byte operation cannot be prepared in a 64-byte ring: no overload takes it.
template <class R, class Op>
concept Preparable = requires(R& r, const Op& o) {
    r.prepare(o);
};
static_assert(!Preparable<Ring, op::NvmeCmd>, "a 128-byte op in a 64-byte ring must not compile");
static_assert(Preparable<BigRing, op::NvmeCmd>);
static_assert(Preparable<Ring, op::Nop> && Preparable<BigRing, op::Nop>);

TEST(BigRingIndex, ARingRefusesTheBigLayoutFlags) {
    for (std::uint32_t flag : {IORING_SETUP_SQE128, IORING_SETUP_CQE32}) {
        RingOptions o;
        o.extra_flags = flag;
        try {
            Ring ring(4, o);
            ADD_FAILURE() << "a Ring with flag " << flag << " was set up";
        } catch (const RingError& e) {
            EXPECT_EQ(e.code().value(), EINVAL);
            EXPECT_NE(std::string(e.what()).find("BigRing"), std::string::npos) << e.what();
        }
    }
}

TEST(BigRingIndex, SlotsAre128BytesApartAndZeroedWhole) {
    BigRing big(4);
    ASSERT_TRUE(big.ring().big_sqes() && big.ring().big_cqes());
    EXPECT_FALSE(Ring(4).big_sqes());
    io_uring_sqe* first = big.ring().get_sqe();
    io_uring_sqe* second = big.ring().get_sqe();
    ASSERT_TRUE(first && second);
    EXPECT_EQ(reinterpret_cast<char*>(second) - reinterpret_cast<char*>(first), 128);
    // Dirty both halves of every slot, then use each again: get_sqe clears all 128 bytes.
    std::memset(first, 0xab, 128);
    std::memset(second, 0xab, 128);
    for (unsigned i = 0; i < 2; ++i) big.prepare(op::Nop{}).user_data(i);
    ASSERT_EQ(big.ring().submit_and_wait(4), 4);
    EXPECT_EQ(big.for_each_completion([](const BigCompletion&) {}), 4u);
    for (unsigned i = 0; i < 4; ++i) {
        io_uring_sqe* s = big.ring().get_sqe();
        ASSERT_NE(s, nullptr);
        const auto* bytes = reinterpret_cast<const unsigned char*>(s);
        EXPECT_EQ(std::count(bytes, bytes + 128, 0), 128) << "slot " << i;
    }
}

// Reads of distinct blocks through a BigRing across many wraparounds of a
// small SQ and CQ: every CQE read at the 32-byte stride carries its own
// user_data and length, and every buffer its own block.
TEST(BigRingIndex, OrdinaryOpsMoveTheRightDataAcrossWraparound) {
    const uringkit::testing::TempFile file(64 * 512, 3);
    const std::vector<std::byte> data = file.contents();
    BigRing big(4, RingOptions{.cq_entries = 8});
    std::vector<std::array<char, 512>> bufs(64);
    std::multiset<std::uint64_t> seen;
    for (unsigned block = 0; block < 64;) {
        const unsigned batch = std::min(3u, 64 - block);
        for (unsigned i = 0; i < batch; ++i, ++block)
            ASSERT_TRUE(
                big.prepare(op::Read(Fd{file.fd()}, bufs[block].data(), 512, block * 512ULL))
                    .user_data(block));
        ASSERT_EQ(big.ring().submit_and_wait(batch), static_cast<int>(batch));
        unsigned got = 0;
        while (got < batch) {
            got += big.for_each_completion([&](const BigCompletion& c) {
                EXPECT_EQ(c.res, 512) << c.user_data;
                EXPECT_EQ(c.big[0] | c.big[1], 0u) << "a read leaves the extra 16 bytes zero";
                seen.insert(c.user_data);
            });
            if (got < batch) {
                ASSERT_GE(big.ring().submit_and_wait(1), 0);
            }
        }
    }
    ASSERT_EQ(seen.size(), 64u);
    for (unsigned b = 0; b < 64; ++b) {
        EXPECT_EQ(seen.count(b), 1u) << b;
        EXPECT_EQ(std::memcmp(bufs[b].data(), data.data() + b * 512, 512), 0) << "block " << b;
    }
}
