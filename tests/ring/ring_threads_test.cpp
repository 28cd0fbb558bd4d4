// A ring handed between threads, and a provided buffer ring whose Ring
// moves or goes first.
// - The registered ring fd (5.18) is an index into the creating thread's
//   table.  On another thread that index names nothing, or another ring of
//   that thread: the ring must enter through its plain fd there, and its
//   destruction there must not unregister the other thread's slot.
// - BufferRing must not keep the address of a Ring that moves (ASan sees
//   the use after free in the destructor otherwise).
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/buffer_ring.hpp"
#include "uringkit/sys/error.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <thread>

using namespace uringkit;
using namespace uringkit::testing;

namespace {

RingOptions registered() {
    RingOptions o;
    o.register_ring_fd = true;
    return o;
}

// NOPs with user_data base..base+n-1 through `ring`: each completes once.
::testing::AssertionResult nops_complete(Ring& ring, std::uint64_t base, unsigned n) {
    for (unsigned i = 0; i < n; ++i)
        if (!ring.prepare(op::Nop{}).user_data(base + i))
            return ::testing::AssertionFailure() << "SQ full";
    std::vector<int> seen(n, 0);
    unsigned got = 0;
    while (got < n) {
        // A bounded wait: entering the wrong ring would otherwise wait for ever.
        const int r = ring.submit_and_wait_for(1, std::chrono::seconds(10));
        if (r < 0) return ::testing::AssertionFailure() << "submit_and_wait_for: " << r;
        ring.for_each_completion([&](const Completion& c) {
            if (c.user_data >= base && c.user_data < base + n && c.res == 0)
                ++seen[c.user_data - base];
            ++got;
        });
    }
    for (unsigned i = 0; i < n; ++i)
        if (seen[i] != 1)
            return ::testing::AssertionFailure() << "user_data " << base + i << " seen " << seen[i];
    return ::testing::AssertionSuccess();
}

TEST(RingThreads, UsedAndDestroyedOnAnotherThreadLeavesThatThreadsRingAlone) {
    auto made = std::make_unique<Ring>(8, registered());
    if (!made->ring_fd_registered()) GTEST_SKIP() << "no registered ring fds (5.18)";
    ASSERT_TRUE(nops_complete(*made, 0, 4));
    std::thread other([&] {
        // This thread's own ring takes slot 0 of this thread's table, the
        // same index the first ring has in its creator's.
        Ring mine(8, registered());
        ASSERT_TRUE(mine.ring_fd_registered());
        // The first ring works here through its plain fd, and does not
        // disturb `mine` (entering slot 0 here would be `mine`).
        EXPECT_TRUE(nops_complete(*made, 100, 4));
        EXPECT_EQ(mine.cq_ready(), 0u) << "the other ring's NOPs landed in this thread's ring";
        EXPECT_FALSE(made->unregister_ring_fd())
            << "another thread's slot cannot be dropped from here";
        // Destroyed here: must not unregister slot 0 of this thread's table.
        made.reset();
        EXPECT_TRUE(nops_complete(mine, 200, 4))
            << "this thread's registered ring was unregistered";
        EXPECT_TRUE(mine.ring_fd_registered());
    });
    other.join();
}

TEST(RingThreads, UnregisteredOnItsThreadThenMovedToAnother) {
    Ring ring(8, registered());
    if (!ring.ring_fd_registered()) GTEST_SKIP() << "no registered ring fds (5.18)";
    EXPECT_TRUE(ring.unregister_ring_fd());
    EXPECT_FALSE(ring.ring_fd_registered());
    std::thread other(
        [moved = std::move(ring)]() mutable { EXPECT_TRUE(nops_complete(moved, 0, 6)); });
    other.join();
}

// The Ring moves to a new object and the old one is freed; the buffer ring
// still serves the moved ring, and its destructor must not touch the freed
// Ring (ASan: heap-use-after-free before the fix).  After it, the group is
// really gone from the ring: registering it again works.
TEST(RingThreads, BufferRingOutlivesAMovedAndFreedRing) {
    auto first = std::make_unique<Ring>(8);
    std::optional<BufferRing> bufs;
    try {
        bufs.emplace(*first, 3, 4, 64);
    } catch (const RingError& e) {
        GTEST_SKIP() << "no provided buffer rings (5.19): " << e.what();
    }
    Ring ring = std::move(*first);
    first.reset();
    TcpPair pair;
    ASSERT_EQ(::send(pair.client.get(), "moved ring", 10, 0), 10);
    ring.prepare(op::Recv::provided(Fd{pair.server.get()}, 3)).user_data(1);
    const Completion c = reap_one(ring);
    ASSERT_EQ(c.res, 10);
    ASSERT_TRUE(c.buffer_id());
    const auto d = bufs->data(*c.buffer_id(), 10);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(d.data()), d.size()), "moved ring");
    bufs.reset();
    EXPECT_NO_THROW(BufferRing(ring, 3, 4, 64))
        << "group 3 still registered after its BufferRing went";
}

}  // namespace
