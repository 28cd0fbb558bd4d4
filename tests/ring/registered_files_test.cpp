// Registered files: a table of descriptors (and a sparse one filled by
// update_files) used through Fixed{index}, which sets IOSQE_FIXED_FILE.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/sys/error.hpp"

#include <gtest/gtest.h>

#include <cstring>

using namespace uringkit;
using namespace uringkit::testing;

TEST(RegisteredFiles, ReadAndWriteThroughFixedSlots) {
    Ring ring(8);
    TempFile src(8192, 6), dst;
    const int fds[2] = {dst.fd(), src.fd()};
    ring.register_files(fds);

    std::vector<std::byte> buf(8192);
    ring.prepare(op::Read(Fixed{1}, buf.data(), 8192, 0)).user_data(1);
    ASSERT_EQ(reap_one(ring).res, 8192);
    EXPECT_EQ(buf, pattern(8192, 6));
    // The SQE carried the fixed-file flag and the index, not the descriptor.
    ring.prepare(op::Write(Fixed{0}, buf.data(), 8192, 512)).user_data(2);
    const auto w = reap_one(ring);
    EXPECT_EQ(w.user_data, 2u);
    ASSERT_EQ(w.res, 8192);
    const auto got = dst.contents();
    ASSERT_EQ(got.size(), 8192u + 512);
    EXPECT_EQ(std::memcmp(got.data() + 512, buf.data(), 8192), 0);
}

TEST(RegisteredFiles, FixedSqeCarriesFlagAndIndex) {
    Ring ring(2);
    char b[4];
    Sqe s = ring.prepare(op::Read(Fixed{7}, b, 4, 0));
    ASSERT_TRUE(s);
    EXPECT_TRUE(s.get()->flags & IOSQE_FIXED_FILE);
    EXPECT_EQ(s.get()->fd, 7);
    Sqe p = ring.prepare(op::Read(Fd{7}, b, 4, 0));
    EXPECT_FALSE(p.get()->flags & IOSQE_FIXED_FILE);
}

TEST(RegisteredFiles, SparseTableFilledAndEmptiedByUpdates) {
    Ring ring(8);
    try {
        ring.register_files_sparse(4);
    } catch (const RingError& e) {
        if (e.code().value() == EINVAL)
            GTEST_SKIP() << "no sparse file tables (5.19): " << e.what();
        throw;
    }
    TempFile a(100, 1), b(100, 2);
    char buf[100];
    // An empty slot is a bad file.
    ring.prepare(op::Read(Fixed{2}, buf, 100, 0)).user_data(1);
    EXPECT_EQ(reap_one(ring).res, -EBADF);

    const int fa[1] = {a.fd()};
    ASSERT_EQ(ring.update_files(2, fa), 1);
    ring.prepare(op::Read(Fixed{2}, buf, 100, 0)).user_data(2);
    ASSERT_EQ(reap_one(ring).res, 100);
    EXPECT_EQ(std::memcmp(buf, pattern(100, 1).data(), 100), 0);

    // Replacing the slot makes the same index read the other file.
    const int fb[1] = {b.fd()};
    ASSERT_EQ(ring.update_files(2, fb), 1);
    ring.prepare(op::Read(Fixed{2}, buf, 100, 0)).user_data(3);
    ASSERT_EQ(reap_one(ring).res, 100);
    EXPECT_EQ(std::memcmp(buf, pattern(100, 2).data(), 100), 0);

    // -1 empties it again.
    const int none[1] = {-1};
    ASSERT_EQ(ring.update_files(2, none), 1);
    ring.prepare(op::Read(Fixed{2}, buf, 100, 0)).user_data(4);
    EXPECT_EQ(reap_one(ring).res, -EBADF);

    // Out of the table's range.
    EXPECT_LT(ring.update_files(4, fa), 0);
    ring.prepare(op::Read(Fixed{9}, buf, 100, 0)).user_data(5);
    EXPECT_EQ(reap_one(ring).res, -EBADF);
}

TEST(RegisteredFiles, TheTableKeepsItsOwnReference) {
    Ring ring(4);
    TempFile a(64, 8);
    const int dup = ::dup(a.fd());
    const int fds[1] = {dup};
    ring.register_files(fds);
    ::close(dup);  // the registered slot still holds the file
    char buf[64];
    ring.prepare(op::Read(Fixed{0}, buf, 64, 0)).user_data(1);
    ASSERT_EQ(reap_one(ring).res, 64);
    EXPECT_EQ(std::memcmp(buf, pattern(64, 8).data(), 64), 0);
    ring.unregister_files();
    ring.prepare(op::Read(Fixed{0}, buf, 64, 0)).user_data(2);
    EXPECT_LT(reap_one(ring).res, 0) << "a slot still works after unregister_files";
}

TEST(RegisteredFiles, BadDescriptorOrSecondTableThrowsNamingTheCall) {
    Ring ring(4);
    const int bad[1] = {987654};
    try {
        ring.register_files(bad);
        FAIL() << "registering a closed descriptor succeeded";
    } catch (const RingError& e) {
        EXPECT_EQ(e.code().value(), EBADF);
        EXPECT_NE(std::string(e.what()).find("REGISTER_FILES"), std::string::npos) << e.what();
    }
    TempFile a;
    const int ok[1] = {a.fd()};
    ring.register_files(ok);
    EXPECT_THROW(ring.register_files(ok), RingError);
}
