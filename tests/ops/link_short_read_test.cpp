// Linked chains: a short read (or any failure) breaks a .link() chain and the
// rest completes with -ECANCELED; .hardlink() keeps going whatever the result.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"

#include <gtest/gtest.h>

#include <cstring>

using namespace uringkit;
using namespace uringkit::testing;

TEST(LinkShortRead, ShortReadCancelsTheRestOfTheChain) {
    TempFile file(1000, 2);
    Ring ring(8);
    std::vector<std::byte> a(4096), b(100);
    TempFile out;
    ring.prepare(op::Read(Fd{file.fd()}, a.data(), 4096, 0)).user_data(1).link();  // short: 1000
    ring.prepare(op::Write(Fd{out.fd()}, a.data(), 1000, 0)).user_data(2).link();
    ring.prepare(op::Read(Fd{file.fd()}, b.data(), 100, 0)).user_data(3);
    ring.prepare(op::Nop{}).user_data(4);  // not in the chain
    const auto cs = reap(ring, 4);
    EXPECT_EQ(find(cs, 1).res, 1000);
    EXPECT_EQ(std::memcmp(a.data(), pattern(1000, 2).data(), 1000), 0);
    EXPECT_EQ(find(cs, 2).res, -ECANCELED);
    EXPECT_EQ(find(cs, 3).res, -ECANCELED);
    EXPECT_EQ(find(cs, 4).res, 0);
    EXPECT_TRUE(out.contents().empty()) << "a cancelled write still wrote";
}

TEST(LinkShortRead, FullReadRunsTheChainInOrder) {
    TempFile file(4096, 2);
    TempFile out;
    Ring ring(8);
    std::vector<std::byte> a(4096);
    // The write uses the bytes the read put in the buffer: only right if it
    // really ran after the read completed.
    ring.prepare(op::Read(Fd{file.fd()}, a.data(), 4096, 0)).user_data(1).link();
    ring.prepare(op::Write(Fd{out.fd()}, a.data(), 4096, 0)).user_data(2).link();
    ring.prepare(op::Fsync(Fd{out.fd()})).user_data(3);
    const auto cs = reap(ring, 3);
    EXPECT_EQ(find(cs, 1).res, 4096);
    EXPECT_EQ(find(cs, 2).res, 4096);
    EXPECT_EQ(find(cs, 3).res, 0);
    EXPECT_EQ(out.contents(), pattern(4096, 2));
    // Completions of a chain arrive in chain order.
    ASSERT_EQ(cs.size(), 3u);
    EXPECT_EQ(cs[0].user_data, 1u);
    EXPECT_EQ(cs[1].user_data, 2u);
    EXPECT_EQ(cs[2].user_data, 3u);
}

TEST(LinkShortRead, FailureAtTheHeadCancelsEverythingAfter) {
    Ring ring(8);
    char buf[16];
    ring.prepare(op::Read(Fd{-1}, buf, 16, 0)).user_data(1).link();
    ring.prepare(op::Nop{}).user_data(2).link();
    ring.prepare(op::Nop{}).user_data(3);
    const auto cs = reap(ring, 3);
    EXPECT_EQ(find(cs, 1).res, -EBADF);
    EXPECT_EQ(find(cs, 2).res, -ECANCELED);
    EXPECT_EQ(find(cs, 3).res, -ECANCELED);
}

TEST(LinkShortRead, HardlinkContinuesPastAShortRead) {
    TempFile file(1000, 3);
    TempFile out;
    Ring ring(8);
    std::vector<std::byte> a(4096);
    ring.prepare(op::Read(Fd{file.fd()}, a.data(), 4096, 0)).user_data(1).hardlink();
    ring.prepare(op::Write(Fd{out.fd()}, a.data(), 1000, 0)).user_data(2).hardlink();
    ring.prepare(op::Read(Fd{-1}, a.data(), 1, 0)).user_data(3).hardlink();  // fails
    ring.prepare(op::Nop{}).user_data(4);                                    // still runs
    const auto cs = reap(ring, 4);
    EXPECT_EQ(find(cs, 1).res, 1000);
    EXPECT_EQ(find(cs, 2).res, 1000);
    EXPECT_EQ(find(cs, 3).res, -EBADF);
    EXPECT_EQ(find(cs, 4).res, 0);
    EXPECT_EQ(out.contents(), pattern(1000, 3));
}

TEST(LinkShortRead, TwoChainsInOneBatchAreIndependent) {
    TempFile small(10, 1), big(100, 1);
    Ring ring(8);
    char a[50], b[50];
    ring.prepare(op::Read(Fd{small.fd()}, a, 50, 0)).user_data(1).link();  // short
    ring.prepare(op::Nop{}).user_data(2);                                  // chain 1 ends
    ring.prepare(op::Read(Fd{big.fd()}, b, 50, 0)).user_data(3).link();    // full
    ring.prepare(op::Nop{}).user_data(4);
    const auto cs = reap(ring, 4);
    EXPECT_EQ(find(cs, 1).res, 10);
    EXPECT_EQ(find(cs, 2).res, -ECANCELED);
    EXPECT_EQ(find(cs, 3).res, 50);
    EXPECT_EQ(find(cs, 4).res, 0);
}
