// ring/hand_loop.hpp: the pieces every hand-written ring loop shares (load's
// workers, serve's uring engine, the async Loop): which io_uring_enter
// results are transient, tagged user_data, and an SQE supply that fails
// clearly without throwing from a completion handler.
#include "uringkit/ring/hand_loop.hpp"
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <set>

using namespace uringkit;
using namespace uringkit::testing;

namespace {

TEST(HandLoop, EnterResultsAreClassifiedOnce) {
    EXPECT_EQ(classify_enter(0), EnterResult::ok);
    EXPECT_EQ(classify_enter(5), EnterResult::ok);
    for (int e : {EINTR, EAGAIN, EBUSY}) {
        EXPECT_EQ(classify_enter(-e), EnterResult::transient) << e;
        EXPECT_TRUE(enter_continues(-e)) << e;
    }
    EXPECT_EQ(classify_enter(-ETIME), EnterResult::timed_out);
    EXPECT_TRUE(enter_continues(-ETIME)) << "a timed wait that ended is not an error";
    EXPECT_EQ(classify_enter(-EBADR), EnterResult::dropped);
    EXPECT_FALSE(enter_continues(-EBADR)) << "dropped completions are never transient";
    for (int e : {EBADF, EOPNOTSUPP, EEXIST, EPERM, EINVAL}) {
        EXPECT_EQ(classify_enter(-e), EnterResult::failed) << e;
        EXPECT_FALSE(enter_continues(-e)) << e;
    }
    EXPECT_NO_THROW(check_enter(-EINTR));
    try {
        check_enter(-EBADR);
        ADD_FAILURE() << "-EBADR did not throw";
    } catch (const RingError& e) {
        EXPECT_EQ(e.code().value(), EBADR);
        EXPECT_STREQ(e.call(), "io_uring_enter");
    }
}

struct alignas(8) Conn {
    int id;
};

TEST(HandLoop, TaggedUserDataCarriesTheObjectAndTheTag) {
    Conn conns[4]{{0}, {1}, {2}, {3}};
    using Ud = TaggedUserData<Conn>;
    std::set<std::uint64_t> seen;
    for (Conn& c : conns)
        for (std::uint64_t tag = 0; tag < 8; ++tag) {
            const std::uint64_t ud = Ud::make(&c, tag);
            EXPECT_TRUE(seen.insert(ud).second) << "two (object, tag) pairs share a user_data";
            EXPECT_EQ(Ud::object(ud), &c);
            EXPECT_EQ(Ud::tag(ud), tag);
        }
    // Through the kernel and back.
    Ring ring(4);
    ring.prepare(op::Nop{}).user_data(Ud::make(&conns[2], 5));
    const Completion c = reap_one(ring);
    EXPECT_EQ(Ud::object(c.user_data)->id, 2);
    EXPECT_EQ(Ud::tag(c.user_data), 5u);
}

TEST(HandLoop, SqeSupplyMakesRoomWhenTheSqIsFull) {
    Ring ring(2);
    SqeSupply supply(ring);
    for (std::uint64_t i = 1; i <= 5; ++i) supply.prepare(op::Nop{}).user_data(i);
    EXPECT_EQ(supply.error(), 0);
    EXPECT_NO_THROW(supply.check());
    const auto cs = reap(ring, 5);
    std::set<std::uint64_t> uds;
    for (const Completion& c : cs) uds.insert(c.user_data);
    EXPECT_EQ(uds, (std::set<std::uint64_t>{1, 2, 3, 4, 5})) << "each SQE completed once";
}

// A ring that cannot submit: /dev/null on its descriptor number (the
// mappings stay valid; io_uring_enter fails with EOPNOTSUPP).
TEST(HandLoop, SqeSupplyFailsClearlyWithoutThrowingAndLosesNothing) {
    Ring ring(2);
    SqeSupply supply(ring);
    supply.prepare(op::Nop{}).user_data(1);
    supply.prepare(op::Nop{}).user_data(2);
    const int fd = ring.fd();
    const int saved = ::dup(fd);
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    ASSERT_GE(::dup2(null, fd), 0);
    ::close(null);
    // From a completion handler this must not throw: a scratch SQE.
    Sqe scratch = supply.prepare(op::Nop{});
    ASSERT_TRUE(scratch);
    scratch.user_data(3);
    supply.prepare(op::Nop{}).user_data(4);
    EXPECT_EQ(supply.error(), -EOPNOTSUPP);
    try {
        supply.check();
        ADD_FAILURE() << "check() did not report the failed submit";
    } catch (const RingError& e) {
        EXPECT_EQ(e.code().value(), EOPNOTSUPP);
        EXPECT_NE(std::string(e.what()).find("io_uring_enter"), std::string::npos) << e.what();
    }
    ::dup2(saved, fd);
    ::close(saved);
    EXPECT_EQ(ring.sq_pending(), 2u) << "the prepared SQEs stayed in the SQ";
    const auto cs = reap(ring, 2);
    std::set<std::uint64_t> uds;
    for (const Completion& c : cs) uds.insert(c.user_data);
    EXPECT_EQ(uds, (std::set<std::uint64_t>{1, 2})) << "the scratch SQEs reached the kernel";
    EXPECT_EQ(ring.cq_ready(), 0u);
}

// A handler's own failure (a completion naming no valid buffer): recorded,
// the first one wins, and check() says it without io_uring advice.
TEST(HandLoop, AHandlersFailureIsReportedAfterTheBatchAsASystemError) {
    Ring ring(2);
    SqeSupply supply(ring);
    supply.fail(-EINVAL, "a recv completion that does not fit its buffer group");
    supply.fail(-EIO, "a later failure");
    EXPECT_EQ(supply.error(), -EINVAL);
    EXPECT_FALSE(supply.reserve(1)) << "a failed supply hands out nothing more";
    try {
        supply.check();
        ADD_FAILURE() << "check() did not report the failure";
    } catch (const RingError& e) {
        ADD_FAILURE() << "not an io_uring call, yet a RingError: " << e.what();
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code().value(), EINVAL);
        EXPECT_NE(std::string(e.what()).find("buffer group"), std::string::npos) << e.what();
    }
    EXPECT_EQ(ring.sq_pending(), 0u);
}

}  // namespace
