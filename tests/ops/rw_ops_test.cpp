// read, write, readv, writev end to end: the bytes read are the bytes written,
// explicit offsets are honoured, and offset -1 uses (and advances) the file
// position (IORING_FEAT_RW_CUR_POS).
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstring>

using namespace uringkit;
using namespace uringkit::testing;

TEST(RwOps, ReadAtOffsetsReturnsThoseBytes) {
    TempFile file(64 * 1024, 3);
    const auto expect = pattern(64 * 1024, 3);
    Ring ring(8);
    // Four reads at scattered, unaligned offsets in one batch.
    const std::array<std::uint64_t, 4> offsets{0, 4097, 30000, 65536 - 100};
    std::array<std::array<std::byte, 100>, 4> bufs{};
    for (unsigned i = 0; i < 4; ++i)
        ring.prepare(op::Read(Fd{file.fd()}, bufs[i].data(), 100, offsets[i])).user_data(i);
    const auto cs = reap(ring, 4);
    for (unsigned i = 0; i < 4; ++i) {
        EXPECT_EQ(find(cs, i).res, 100) << "read " << i;
        EXPECT_EQ(std::memcmp(bufs[i].data(), expect.data() + offsets[i], 100), 0) << "read " << i;
    }
}

TEST(RwOps, ReadPastEndIsShortThenZero) {
    TempFile file(1000, 1);
    Ring ring(4);
    std::array<std::byte, 512> a{}, b{};
    ring.prepare(op::Read(Fd{file.fd()}, a.data(), 512, 800)).user_data(1);
    ring.prepare(op::Read(Fd{file.fd()}, b.data(), 512, 5000)).user_data(2);
    const auto cs = reap(ring, 2);
    EXPECT_EQ(find(cs, 1).res, 200);
    EXPECT_EQ(find(cs, 2).res, 0);
    EXPECT_EQ(std::memcmp(a.data(), pattern(1000, 1).data() + 800, 200), 0);
}

TEST(RwOps, WriteThenReadBackSameBytes) {
    TempFile file;
    Ring ring(4);
    const auto data = pattern(12345, 9);
    ring.prepare(op::Write(Fd{file.fd()}, data.data(), 12345, 100)).user_data(1);
    ASSERT_EQ(reap_one(ring).res, 12345);
    // The kernel's view (plain pread) has a 100-byte hole of zeros, then the data.
    const auto got = file.contents();
    ASSERT_EQ(got.size(), 12445u);
    for (unsigned i = 0; i < 100; ++i) ASSERT_EQ(got[i], std::byte{0}) << i;
    EXPECT_EQ(std::memcmp(got.data() + 100, data.data(), data.size()), 0);
    // And io_uring reads the same bytes back.
    std::vector<std::byte> back(12345);
    ring.prepare(op::Read(Fd{file.fd()}, back.data(), 12345, 100)).user_data(2);
    ASSERT_EQ(reap_one(ring).res, 12345);
    EXPECT_EQ(back, data);
}

TEST(RwOps, WritevAndReadvScatterGather) {
    TempFile file;
    Ring ring(4);
    const auto data = pattern(3 * 1000 + 17, 5);
    // Three uneven pieces out, four uneven pieces back in.
    iovec out[3] = {{const_cast<std::byte*>(data.data()), 17},
                    {const_cast<std::byte*>(data.data()) + 17, 2000},
                    {const_cast<std::byte*>(data.data()) + 2017, 1000}};
    ring.prepare(op::Writev(Fd{file.fd()}, out, 3, 4096)).user_data(1);
    ASSERT_EQ(reap_one(ring).res, 3017);

    std::vector<std::byte> a(1), b(1500), c(1000), d(600, std::byte{0xee});
    iovec in[4] = {
        {a.data(), a.size()}, {b.data(), b.size()}, {c.data(), c.size()}, {d.data(), d.size()}};
    ring.prepare(op::Readv(Fd{file.fd()}, in, 4, 4096)).user_data(2);
    const auto done = reap_one(ring);
    EXPECT_EQ(done.user_data, 2u);
    ASSERT_EQ(done.res, 3017);
    std::vector<std::byte> joined;
    for (const auto* v : {&a, &b, &c}) joined.insert(joined.end(), v->begin(), v->end());
    joined.insert(joined.end(), d.begin(), d.begin() + 516);
    EXPECT_EQ(joined, data);
    EXPECT_EQ(d[516], std::byte{0xee}) << "readv wrote past the end of the file's data";
}

TEST(RwOps, OffsetMinusOneUsesAndAdvancesFilePosition) {
    Ring ring(4);
    if (!ring.has_feature(IORING_FEAT_RW_CUR_POS))
        GTEST_SKIP() << "no IORING_FEAT_RW_CUR_POS (5.6)";
    TempFile file(4096, 2);
    const auto expect = pattern(4096, 2);
    ASSERT_EQ(::lseek(file.fd(), 1000, SEEK_SET), 1000);
    std::array<std::byte, 300> a{}, b{};
    // Linked so the second read starts after the first moved the position.
    ring.prepare(op::Read(Fd{file.fd()}, a.data(), 300, ~0ull)).user_data(1).link();
    ring.prepare(op::Read(Fd{file.fd()}, b.data(), 300, ~0ull)).user_data(2);
    const auto cs = reap(ring, 2);
    EXPECT_EQ(find(cs, 1).res, 300);
    EXPECT_EQ(find(cs, 2).res, 300);
    EXPECT_EQ(std::memcmp(a.data(), expect.data() + 1000, 300), 0);
    EXPECT_EQ(std::memcmp(b.data(), expect.data() + 1300, 300), 0);
    EXPECT_EQ(::lseek(file.fd(), 0, SEEK_CUR), 1600) << "the file position moved by both reads";

    // A write at -1 appends at the position too.
    const char msg[] = "position";
    ring.prepare(op::Write(Fd{file.fd()}, msg, 8, ~0ull)).user_data(3);
    ASSERT_EQ(reap_one(ring).res, 8);
    EXPECT_EQ(::lseek(file.fd(), 0, SEEK_CUR), 1608);
    const auto got = file.contents();
    EXPECT_EQ(std::memcmp(got.data() + 1600, msg, 8), 0);
}

TEST(RwOps, ErrorsKeepTheKernelsMeaning) {
    Ring ring(4);
    char buf[16];
    TempFile file(16);
    ring.prepare(op::Read(Fd{-1}, buf, 16, 0)).user_data(1);
    ring.prepare(op::Read(Fd{file.fd()}, nullptr, 16, 0)).user_data(2);
    const auto cs = reap(ring, 2);
    EXPECT_EQ(find(cs, 1).res, -EBADF);
    EXPECT_EQ(find(cs, 2).res, -EFAULT);
}
