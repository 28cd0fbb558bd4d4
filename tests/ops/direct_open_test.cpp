// Direct descriptors: openat straight into a registered slot, read through
// Fixed, close the slot, all as one linked chain (the slot is resolved when
// each step runs: IORING_FEAT_LINKED_FILE); and into_any_slot.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/sys/error.hpp"

#include <sys/mman.h>

#include <gtest/gtest.h>

#include <cstring>

using namespace uringkit;
using namespace uringkit::testing;

TEST(DirectOpen, OpenReadCloseChainOnAFixedSlot) {
    Ring ring(8);
    if (!ring.has_feature(IORING_FEAT_LINKED_FILE))
        GTEST_SKIP() << "no IORING_FEAT_LINKED_FILE (5.17): a fixed slot opened in a chain is not "
                        "usable by the next link";
    try {
        ring.register_files_sparse(4);
    } catch (const RingError& e) {
        GTEST_SKIP() << "no sparse file table: " << e.what();
    }
    TempFile file(10000, 3);
    std::vector<std::byte> buf(10000);
    ring.prepare(op::OpenAt(AT_FDCWD, file.path().c_str(), O_RDONLY).into_slot(2))
        .user_data(1)
        .link();
    ring.prepare(op::Read(Fixed{2}, buf.data(), 10000, 0)).user_data(2).link();
    ring.prepare(op::Close(Fixed{2})).user_data(3);
    const auto cs = reap(ring, 3);
    EXPECT_EQ(find(cs, 1).res, 0) << "into a chosen slot the result is 0";
    EXPECT_EQ(find(cs, 2).res, 10000);
    EXPECT_EQ(find(cs, 3).res, 0);
    EXPECT_EQ(buf, pattern(10000, 3));
    // The slot is empty again.
    ring.prepare(op::Read(Fixed{2}, buf.data(), 1, 0)).user_data(4);
    EXPECT_EQ(reap_one(ring).res, -EBADF);
}

TEST(DirectOpen, ReadFixedThroughADirectDescriptor) {
    Ring ring(8);
    try {
        ring.register_files_sparse(2);
    } catch (const RingError& e) {
        GTEST_SKIP() << "no sparse file table: " << e.what();
    }
    void* m = ::mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(m, MAP_FAILED);
    auto* p = static_cast<std::byte*>(m);
    const iovec reg{p, 8192};
    ring.register_buffers({&reg, 1});
    TempFile file(8192, 4);
    ring.prepare(op::OpenAt(AT_FDCWD, file.path().c_str(), O_RDONLY).into_slot(0))
        .user_data(1)
        .link();
    ring.prepare(op::ReadFixed(Fixed{0}, p, 8192, 0, 0)).user_data(2).link();
    ring.prepare(op::Close(Fixed{0})).user_data(3);
    const auto cs = reap(ring, 3);
    EXPECT_EQ(find(cs, 1).res, 0);
    EXPECT_EQ(find(cs, 2).res, 8192);
    EXPECT_EQ(find(cs, 3).res, 0);
    EXPECT_EQ(std::memcmp(p, pattern(8192, 4).data(), 8192), 0);
    ring.unregister_buffers();
    ::munmap(m, 8192);
}

TEST(DirectOpen, IntoAnySlotReturnsTheSlot) {
    Ring ring(8);
    try {
        ring.register_files_sparse(3);
    } catch (const RingError& e) {
        GTEST_SKIP() << "no sparse file table: " << e.what();
    }
    TempFile a(50, 1), b(50, 2);
    ring.prepare(op::OpenAt(AT_FDCWD, a.path().c_str(), O_RDONLY).into_any_slot()).user_data(1);
    ring.prepare(op::OpenAt(AT_FDCWD, b.path().c_str(), O_RDONLY).into_any_slot()).user_data(2);
    const auto cs = reap(ring, 2);
    const int sa = find(cs, 1).res, sb = find(cs, 2).res;
    if (sa == -EINVAL) GTEST_SKIP() << "no IORING_FILE_INDEX_ALLOC (5.19)";
    ASSERT_GE(sa, 0);
    ASSERT_GE(sb, 0);
    ASSERT_LT(sa, 3);
    ASSERT_LT(sb, 3);
    EXPECT_NE(sa, sb);
    char x[50], y[50];
    ring.prepare(op::Read(Fixed{static_cast<unsigned>(sa)}, x, 50, 0)).user_data(3);
    ring.prepare(op::Read(Fixed{static_cast<unsigned>(sb)}, y, 50, 0)).user_data(4);
    const auto rs = reap(ring, 2);
    EXPECT_EQ(find(rs, 3).res, 50);
    EXPECT_EQ(find(rs, 4).res, 50);
    EXPECT_EQ(std::memcmp(x, pattern(50, 1).data(), 50), 0);
    EXPECT_EQ(std::memcmp(y, pattern(50, 2).data(), 50), 0);
    // The third slot is taken by the next open; a fourth finds the table full.
    TempFile c(1), d(1);
    ring.prepare(op::OpenAt(AT_FDCWD, c.path().c_str(), O_RDONLY).into_any_slot()).user_data(5);
    EXPECT_GE(reap_one(ring).res, 0);
    ring.prepare(op::OpenAt(AT_FDCWD, d.path().c_str(), O_RDONLY).into_any_slot()).user_data(6);
    EXPECT_EQ(reap_one(ring).res, -ENFILE);
}

TEST(DirectOpen, PlainOpenAtReturnsAWorkingDescriptor) {
    Ring ring(4);
    TempFile file(300, 9);
    ring.prepare(op::OpenAt(AT_FDCWD, file.path().c_str(), O_RDONLY | O_CLOEXEC)).user_data(1);
    const int fd = reap_one(ring).res;
    ASSERT_GE(fd, 0);
    char buf[300];
    ASSERT_EQ(::pread(fd, buf, 300, 0), 300);
    EXPECT_EQ(std::memcmp(buf, pattern(300, 9).data(), 300), 0);
    ring.prepare(op::Close(Fd{fd})).user_data(2);
    EXPECT_EQ(reap_one(ring).res, 0);
    EXPECT_EQ(::fcntl(fd, F_GETFD), -1) << "the descriptor is closed";
    ring.prepare(op::OpenAt(AT_FDCWD, "/nonexistent/uringkit", O_RDONLY)).user_data(3);
    EXPECT_EQ(reap_one(ring).res, -ENOENT);
}
