// How operations are spelled and encoded, where the first versions let a
// mistake through:
//  - op::Timeout converted implicitly from a pointer, so a stray
//    `__kernel_timespec*` became a timeout wherever an op was expected;
//  - PollAdd wrote poll32_events as it was, where the kernel reads the two
//    16-bit halves in little-endian order (liburing swaps them with
//    __swahw32 on a big-endian host).
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <type_traits>

using namespace uringkit;
using namespace uringkit::testing;

namespace {

static_assert(!std::is_convertible_v<const __kernel_timespec*, op::Timeout>,
              "a pointer is not a timeout");
static_assert(std::is_constructible_v<op::Timeout, const __kernel_timespec*>);
static_assert(!std::is_convertible_v<const __kernel_timespec*, op::LinkTimeout>);

TEST(OpEncoding, Poll32EventsSwapsHalfwordsOnlyOnBigEndian) {
    constexpr std::uint32_t mask = POLLIN | EPOLLEXCLUSIVE;  // one bit in each half
    EXPECT_EQ(op::poll32_events(mask, std::endian::little), mask);
    EXPECT_EQ(op::poll32_events(mask, std::endian::big), (POLLIN << 16) | (EPOLLEXCLUSIVE >> 16));
    EXPECT_EQ(op::poll32_events(op::poll32_events(mask, std::endian::big), std::endian::big), mask);
}

TEST(OpEncoding, PollAddWritesTheMaskTheKernelReads) {
    io_uring_sqe s{};
    op::PollAdd(Fd{3}, POLLIN | POLLOUT).prepare(s);
    EXPECT_EQ(s.poll32_events, op::poll32_events(POLLIN | POLLOUT));
    // The kernel's answer: a pipe with data is readable, not writable-only.
    Ring ring(4);
    Pipe pipe;
    ASSERT_EQ(::write(pipe.write_end.get(), "a", 1), 1);
    ring.prepare(op::PollAdd(Fd{pipe.read_end.get()}, POLLIN | POLLRDHUP)).user_data(7);
    const auto c = reap_one(ring);
    EXPECT_EQ(c.user_data, 7u);
    EXPECT_EQ(c.res, POLLIN) << "the kernel read a different mask than was asked";
}

}  // namespace
