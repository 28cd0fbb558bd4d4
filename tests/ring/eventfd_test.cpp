// An eventfd registered with the ring is signalled for each posted completion,
// so a poll/epoll loop can wait on it; unregistering stops that.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/sys/error.hpp"

#include <sys/eventfd.h>

#include <gtest/gtest.h>

using namespace uringkit;
using namespace uringkit::testing;

TEST(Eventfd, SignalledPerCompletionUntilUnregistered) {
    Ring ring(8);
    UniqueFd efd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    ASSERT_GE(efd.get(), 0);
    ring.register_eventfd(efd.get());

    eventfd_t v = 0;
    EXPECT_EQ(::eventfd_read(efd.get(), &v), -1) << "signalled before anything completed";
    for (unsigned i = 0; i < 3; ++i) ring.prepare(op::Nop{}).user_data(i);
    const auto cs = reap(ring, 3);
    ASSERT_EQ(cs.size(), 3u);
    ASSERT_EQ(::eventfd_read(efd.get(), &v), 0);
    EXPECT_GE(v, 1u);
    EXPECT_LE(v, 3u);

    ring.unregister_eventfd();
    ring.prepare(op::Nop{}).user_data(9);
    reap(ring, 1);
    EXPECT_EQ(::eventfd_read(efd.get(), &v), -1) << "signalled after unregister";
    EXPECT_EQ(errno, EAGAIN);
}

TEST(Eventfd, SecondRegistrationIsBusy) {
    Ring ring(4);
    UniqueFd a(::eventfd(0, EFD_CLOEXEC)), b(::eventfd(0, EFD_CLOEXEC));
    ring.register_eventfd(a.get());
    EXPECT_THROW(ring.register_eventfd(b.get()), RingError);
}
