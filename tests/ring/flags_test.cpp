// Per-SQE flags: drain waits for everything before it, async forces the io-wq
// path (same data), cqe_skip_success posts nothing on success but still
// reports a failure, buffer_select takes a buffer from a provided ring.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/buffer_ring.hpp"
#include "uringkit/sys/error.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <optional>

using namespace uringkit;
using namespace uringkit::testing;

TEST(Flags, DrainWaitsForEveryEarlierRequest) {
    Ring ring(8);
    Pipe pipe;
    char buf[4];
    ring.prepare(op::Read(Fd{pipe.read_end.get()}, buf, 4, 0)).user_data(1);
    ring.prepare(op::Nop{}).user_data(2).drain();
    ring.prepare(op::Nop{}).user_data(3);  // after the drain: held back too
    ASSERT_EQ(ring.submit(), 3);
    // The read blocks on an empty pipe, so the drained NOP cannot have run.
    EXPECT_EQ(ring.cq_ready(), 0u);
    ASSERT_EQ(::write(pipe.write_end.get(), "data", 4), 4);
    const auto cs = reap(ring, 3);
    ASSERT_EQ(cs.size(), 3u);
    EXPECT_EQ(cs[0].user_data, 1u) << "the read completes before the drained NOP";
    EXPECT_EQ(cs[0].res, 4);
    EXPECT_EQ(find(cs, 2).res, 0);
    EXPECT_EQ(find(cs, 3).res, 0);
    EXPECT_EQ(std::memcmp(buf, "data", 4), 0);
}

TEST(Flags, AsyncReadReturnsTheSameData) {
    Ring ring(8);
    TempFile file(32768, 4);
    std::vector<std::byte> buf(32768);
    for (unsigned i = 0; i < 8; ++i)
        ring.prepare(op::Read(Fd{file.fd()}, buf.data() + i * 4096, 4096, i * 4096))
            .user_data(i)
            .async();
    const auto cs = reap(ring, 8);
    for (unsigned i = 0; i < 8; ++i) EXPECT_EQ(find(cs, i).res, 4096);
    EXPECT_EQ(buf, pattern(32768, 4));
}

TEST(Flags, SkipSuccessPostsOnlyFailures) {
    Ring ring(8);
    if (!ring.has_feature(IORING_FEAT_CQE_SKIP)) GTEST_SKIP() << "no IORING_FEAT_CQE_SKIP (5.17)";
    char buf[4];
    ring.prepare(op::Nop{}).user_data(1).skip_success();
    ring.prepare(op::Read(Fd{-1}, buf, 4, 0)).user_data(2).skip_success();  // fails: still posted
    ring.prepare(op::Nop{}).user_data(3);
    ASSERT_EQ(ring.submit_and_wait(2), 3);
    std::vector<Completion> cs;
    ring.for_each_completion([&](const Completion& c) { cs.push_back(c); });
    ASSERT_EQ(cs.size(), 2u) << "the successful skip_success NOP posted a completion";
    EXPECT_EQ(find(cs, 2).res, -EBADF);
    EXPECT_EQ(find(cs, 3).res, 0);
}

TEST(Flags, BufferSelectReadFromAFile) {
    Ring ring(4);
    std::optional<BufferRing> buffers;
    try {
        buffers.emplace(ring, 3, 2, 1024);
    } catch (const RingError& e) {
        GTEST_SKIP() << "no provided buffer rings (5.19): " << e.what();
    }
    TempFile file(5000, 6);
    ring.prepare(op::ReadProvided(Fd{file.fd()}, 3, 1024, 2000)).user_data(1);
    ring.prepare(op::ReadProvided(Fd{file.fd()}, 3, 1024, 4500)).user_data(2);
    const auto cs = reap(ring, 2);
    const auto a = find(cs, 1), b = find(cs, 2);
    ASSERT_EQ(a.res, 1024);
    ASSERT_EQ(b.res, 500);
    ASSERT_TRUE(a.buffer_id() && b.buffer_id());
    EXPECT_NE(*a.buffer_id(), *b.buffer_id());
    const auto expect = pattern(5000, 6);
    EXPECT_EQ(std::memcmp(buffers->data(*a.buffer_id(), 1024).data(), expect.data() + 2000, 1024),
              0);
    EXPECT_EQ(std::memcmp(buffers->data(*b.buffer_id(), 500).data(), expect.data() + 4500, 500), 0);
    // Both buffers are out: a third read finds none.
    ring.prepare(op::ReadProvided(Fd{file.fd()}, 3, 1024, 0)).user_data(3);
    EXPECT_EQ(reap_one(ring).res, -ENOBUFS);
    // Give one back and it is used again.
    buffers->recycle(*a.buffer_id());
    ring.prepare(op::ReadProvided(Fd{file.fd()}, 3, 10, 0)).user_data(4);
    const auto c = reap_one(ring);
    ASSERT_EQ(c.res, 10);
    EXPECT_EQ(c.buffer_id(), a.buffer_id());
    EXPECT_EQ(std::memcmp(buffers->data(*c.buffer_id(), 10).data(), expect.data(), 10), 0);
}
