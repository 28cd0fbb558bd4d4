// async_cancel: by user_data, by file (all matches), and any; the cancelled
// request posts its own -ECANCELED completion, and its buffer must live until
// then.  A cancelled read consumes no data.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"

#include <poll.h>

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

using namespace uringkit;
using namespace uringkit::testing;

TEST(Cancel, ByUserDataCancelsAPendingRead) {
    Ring ring(4);
    Pipe pipe;
    // Heap memory the kernel owns until the read's own completion arrives.
    auto buf = std::make_unique<char[]>(32);
    std::memset(buf.get(), 'x', 32);
    ring.prepare(op::Read(Fd{pipe.read_end.get()}, buf.get(), 32, 0)).user_data(1);
    ASSERT_EQ(ring.submit(), 1);
    ring.prepare(op::AsyncCancel(1)).user_data(2);
    const auto cs = reap(ring, 2);
    EXPECT_EQ(find(cs, 1).res, -ECANCELED);
    EXPECT_EQ(find(cs, 2).res, 0);
    // Only now may the buffer go; the cancelled read never touched it.
    EXPECT_EQ(buf[0], 'x');
    buf.reset();
    // And the data written afterwards is still in the pipe for a new read.
    ASSERT_EQ(::write(pipe.write_end.get(), "hello", 5), 5);
    char again[8];
    ring.prepare(op::Read(Fd{pipe.read_end.get()}, again, 8, 0)).user_data(3);
    EXPECT_EQ(reap_one(ring).res, 5);
    EXPECT_EQ(std::memcmp(again, "hello", 5), 0);
}

TEST(Cancel, UnknownUserDataIsEnoent) {
    Ring ring(4);
    ring.prepare(op::AsyncCancel(12345)).user_data(1);
    EXPECT_EQ(reap_one(ring).res, -ENOENT);
}

TEST(Cancel, ByFileCancelsEveryRequestOnIt) {
    Ring ring(8);
    Pipe p1, p2;
    char a[8], b[8], c[8];
    ring.prepare(op::Read(Fd{p1.read_end.get()}, a, 8, 0)).user_data(1);
    ring.prepare(op::Read(Fd{p1.read_end.get()}, b, 8, 0)).user_data(2);
    ring.prepare(op::Read(Fd{p2.read_end.get()}, c, 8, 0)).user_data(3);
    ASSERT_EQ(ring.submit(), 3);
    ring.prepare(op::AsyncCancel::file(Fd{p1.read_end.get()}).all()).user_data(10);
    auto cs = reap(ring, 3);
    const auto cancel = find(cs, 10);
    if (cancel.res == -EINVAL) GTEST_SKIP() << "no IORING_ASYNC_CANCEL_FD/ALL (5.19)";
    EXPECT_EQ(cancel.res, 2) << "with ALL the result is the number cancelled";
    EXPECT_EQ(find(cs, 1).res, -ECANCELED);
    EXPECT_EQ(find(cs, 2).res, -ECANCELED);
    // The read on the other pipe is untouched: it completes with its data.
    ASSERT_EQ(::write(p2.write_end.get(), "z", 1), 1);
    const auto last = reap_one(ring);
    EXPECT_EQ(last.user_data, 3u);
    EXPECT_EQ(last.res, 1);
    EXPECT_EQ(c[0], 'z');
}

TEST(Cancel, AnyAllCancelsEverything) {
    Ring ring(8);
    Pipe p1, p2;
    char a[8], b[8];
    ring.prepare(op::Read(Fd{p1.read_end.get()}, a, 8, 0)).user_data(1);
    ring.prepare(op::PollAdd(Fd{p2.read_end.get()}, POLLIN)).user_data(2);
    ring.prepare(op::Read(Fd{p2.read_end.get()}, b, 8, 0)).user_data(3);
    ASSERT_EQ(ring.submit(), 3);
    ring.prepare(op::AsyncCancel::any().all()).user_data(10);
    const auto cs = reap(ring, 4);
    const auto cancel = find(cs, 10);
    if (cancel.res == -EINVAL) GTEST_SKIP() << "no IORING_ASYNC_CANCEL_ANY (5.19)";
    EXPECT_EQ(cancel.res, 3);
    EXPECT_EQ(find(cs, 1).res, -ECANCELED);
    EXPECT_EQ(find(cs, 2).res, -ECANCELED);
    EXPECT_EQ(find(cs, 3).res, -ECANCELED);
}

TEST(Cancel, CompletedRequestCannotBeCancelled) {
    Ring ring(4);
    ring.prepare(op::Nop{}).user_data(1);
    ASSERT_EQ(reap_one(ring).res, 0);
    ring.prepare(op::AsyncCancel(1)).user_data(2);
    EXPECT_EQ(reap_one(ring).res, -ENOENT);
}
