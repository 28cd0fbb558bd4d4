// fsync, fdatasync, fallocate (allocate, keep size, punch hole) and statx.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"

#include <linux/falloc.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstring>

using namespace uringkit;
using namespace uringkit::testing;

TEST(FsOps, FsyncAndDatasyncAfterAWrite) {
    TempFile file;
    Ring ring(4);
    const auto data = pattern(4096, 1);
    ring.prepare(op::Write(Fd{file.fd()}, data.data(), 4096, 0)).user_data(1).link();
    ring.prepare(op::Fsync(Fd{file.fd()})).user_data(2).link();
    ring.prepare(op::Fsync(Fd{file.fd()}).datasync()).user_data(3);
    const auto cs = reap(ring, 3);
    EXPECT_EQ(find(cs, 1).res, 4096);
    EXPECT_EQ(find(cs, 2).res, 0);
    EXPECT_EQ(find(cs, 3).res, 0);
    EXPECT_EQ(file.contents(), data);
    // The datasync flag is in the SQE.
    Sqe s = ring.prepare(op::Fsync(Fd{file.fd()}).datasync());
    EXPECT_EQ(s.get()->fsync_flags, IORING_FSYNC_DATASYNC);
    ring.submit_and_wait(1);
    ring.for_each_completion([](const Completion&) {});
    ring.prepare(op::Fsync(Fd{-1})).user_data(4);
    EXPECT_EQ(reap_one(ring).res, -EBADF);
}

TEST(FsOps, FallocateExtendsKeepsSizeAndPunches) {
    TempFile file(8192, 2);
    Ring ring(4);
    struct stat st {};
    // Extend to 1 MiB.
    ring.prepare(op::Fallocate(Fd{file.fd()}, 0, 0, 1 << 20)).user_data(1);
    ASSERT_EQ(reap_one(ring).res, 0);
    ASSERT_EQ(::fstat(file.fd(), &st), 0);
    EXPECT_EQ(st.st_size, 1 << 20);
    // Allocate beyond the end without changing the size.
    ring.prepare(op::Fallocate(Fd{file.fd()}, FALLOC_FL_KEEP_SIZE, 1 << 20, 1 << 20)).user_data(2);
    ASSERT_EQ(reap_one(ring).res, 0);
    ASSERT_EQ(::fstat(file.fd(), &st), 0);
    EXPECT_EQ(st.st_size, 1 << 20);
    EXPECT_GE(st.st_blocks * 512, 2 << 20) << "the blocks beyond the end were allocated";
    // Punch the first 4 KiB: zeros there, the pattern still after it.
    ring.prepare(op::Fallocate(Fd{file.fd()}, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096))
        .user_data(3);
    const int r = reap_one(ring).res;
    if (r == -EOPNOTSUPP) GTEST_SKIP() << "this file system cannot punch holes";
    ASSERT_EQ(r, 0);
    const auto got = file.contents();
    for (unsigned i = 0; i < 4096; ++i) ASSERT_EQ(got[i], std::byte{0}) << i;
    EXPECT_EQ(std::memcmp(got.data() + 4096, pattern(8192, 2).data() + 4096, 4096), 0);
}

TEST(FsOps, StatxMatchesFstat) {
    TempFile file(12345);
    Ring ring(4);
    struct statx sx {};
    ring.prepare(op::Statx(AT_FDCWD, file.path().c_str(), 0, STATX_BASIC_STATS, &sx)).user_data(1);
    ASSERT_EQ(reap_one(ring).res, 0);
    struct stat st {};
    ASSERT_EQ(::fstat(file.fd(), &st), 0);
    EXPECT_EQ(sx.stx_size, 12345u);
    EXPECT_EQ(sx.stx_ino, st.st_ino);
    EXPECT_TRUE(S_ISREG(sx.stx_mode));
    EXPECT_TRUE(sx.stx_mask & STATX_SIZE);

    // On a descriptor with AT_EMPTY_PATH.
    struct statx by_fd {};
    ring.prepare(op::Statx(file.fd(), "", AT_EMPTY_PATH, STATX_SIZE, &by_fd)).user_data(2);
    ASSERT_EQ(reap_one(ring).res, 0);
    EXPECT_EQ(by_fd.stx_size, 12345u);

    struct statx none {};
    ring.prepare(op::Statx(AT_FDCWD, "/nonexistent/uringkit", 0, STATX_SIZE, &none)).user_data(3);
    EXPECT_EQ(reap_one(ring).res, -ENOENT);
}
