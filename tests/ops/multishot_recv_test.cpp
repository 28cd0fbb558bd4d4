// Multishot recv with a provided buffer ring (6.0): the kernel picks a buffer
// per arrival and names it in the completion; when the ring runs dry the
// request ends with -ENOBUFS; recycling the buffers and re-arming continues
// the stream where it stopped, so the bytes received, in completion order,
// are exactly the bytes sent.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/buffer_ring.hpp"
#include "uringkit/sys/error.hpp"

#include <gtest/gtest.h>

#include <optional>

using namespace uringkit;
using namespace uringkit::testing;

namespace {
constexpr std::uint16_t kGroup = 7;
constexpr unsigned kBufs = 4;
constexpr std::uint32_t kBufSize = 64;

std::optional<BufferRing> make_buffers(Ring& ring) {
    try {
        return BufferRing(ring, kGroup, kBufs, kBufSize);
    } catch (const RingError& e) {
        if (e.code().value() == EINVAL) return std::nullopt;
        throw;
    }
}
}  // namespace

TEST(MultishotRecv, ExhaustionRecycleAndRearmKeepTheStreamIntact) {
    Ring ring(16);
    auto buffers = make_buffers(ring);
    if (!buffers) GTEST_SKIP() << "no provided buffer rings (5.19)";
    TcpPair pair;
    // 10 buffers' worth queued before arming: more than the ring holds.
    const auto sent = pattern(10 * kBufSize, 3);
    ASSERT_EQ(::send(pair.client.get(), sent.data(), sent.size(), 0),
              static_cast<ssize_t>(sent.size()));

    std::vector<std::byte> received;
    int enobufs = 0, arms = 0;
    while (received.size() < sent.size()) {
        ASSERT_LT(arms, 20) << "no progress";
        ring.prepare(op::Recv::provided(Fd{pair.server.get()}, kGroup).multishot()).user_data(1);
        ++arms;
        std::vector<std::uint16_t> used;
        bool ended = false;
        while (!ended) {
            const auto c = reap_one(ring);
            ASSERT_EQ(c.user_data, 1u);
            if (c.res == -EINVAL && arms == 1 && received.empty())
                GTEST_SKIP() << "no multishot recv (6.0)";
            if (c.res == -ENOBUFS) {
                EXPECT_FALSE(c.more()) << "-ENOBUFS ends the multishot request";
                ++enobufs;
                ended = true;
                break;
            }
            ASSERT_GT(c.res, 0) << "unexpected result " << c.res;
            const auto id = c.buffer_id();
            ASSERT_TRUE(id.has_value()) << "a provided-buffer completion names its buffer";
            ASSERT_LT(*id, kBufs);
            ASSERT_LE(static_cast<std::uint32_t>(c.res), kBufSize);
            const auto d = buffers->data(*id, static_cast<std::size_t>(c.res));
            received.insert(received.end(), d.begin(), d.end());
            used.push_back(*id);
            if (received.size() == sent.size()) {
                // All data in; stop the still-armed request.
                if (c.more()) {
                    ring.prepare(op::AsyncCancel(1)).user_data(2);
                    const auto rest = reap(ring, 2);
                    EXPECT_EQ(find(rest, 1).res, -ECANCELED);
                }
                ended = true;
            } else if (!c.more()) {
                ended = true;  // ended for another reason: re-arm
            }
        }
        for (auto id : used) buffers->recycle(id);
    }
    EXPECT_EQ(received, sent) << "bytes lost, duplicated or out of order";
    EXPECT_GE(enobufs, 1) << "4 buffers of 64 bytes cannot hold 640 bytes without running dry";
}

TEST(MultishotRecv, OneShotRecvWithBufferSelect) {
    Ring ring(4);
    auto buffers = make_buffers(ring);
    if (!buffers) GTEST_SKIP() << "no provided buffer rings (5.19)";
    TcpPair pair;
    ASSERT_EQ(::send(pair.client.get(), "provided", 8, 0), 8);
    ring.prepare(op::Recv::provided(Fd{pair.server.get()}, kGroup)).user_data(1);
    const auto c = reap_one(ring);
    ASSERT_EQ(c.res, 8);
    ASSERT_TRUE(c.buffer_id());
    const auto d = buffers->data(*c.buffer_id(), 8);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(d.data()), 8), "provided");
    EXPECT_FALSE(c.more());
}

// A buffer id outside the group (what a forged or stale CQE names) is never
// staged: its ring entry would hand the kernel memory past the group, and the
// next recv would land there and report that id.
TEST(MultishotRecv, RecyclingAnIdOutsideTheGroupStagesNothing) {
    Ring ring(8);
    auto buffers = make_buffers(ring);
    if (!buffers) GTEST_SKIP() << "no provided buffer rings (5.19)";
    TcpPair pair;
    // Take every buffer out of the ring, then give back only ids it does not have.
    for (unsigned i = 0; i < kBufs; ++i) {
        ASSERT_EQ(::send(pair.client.get(), "x", 1, 0), 1);
        ring.prepare(op::Recv::provided(Fd{pair.server.get()}, kGroup)).user_data(i);
        const auto c = reap_one(ring);
        ASSERT_EQ(c.res, 1);
    }
    buffers->recycle(kBufs);
    buffers->recycle(9999);
    ASSERT_EQ(::send(pair.client.get(), "y", 1, 0), 1);
    ring.prepare(op::Recv::provided(Fd{pair.server.get()}, kGroup)).user_data(9);
    const auto c = reap_one(ring);
    EXPECT_EQ(c.res, -ENOBUFS) << "the ring holds no buffer; a recv that got one was given id "
                               << (c.buffer_id() ? *c.buffer_id() : 0);
}

// BufferRing::hold: the buffer a completion names, as a handle that gives it
// back when dropped.  Held, the whole group is out and the next recv gets
// -ENOBUFS; dropped, that recv gets a buffer again.
TEST(MultishotRecv, AHeldBufferGoesBackWhenItsHandleIsDropped) {
    Ring ring(8);
    auto buffers = make_buffers(ring);
    if (!buffers) GTEST_SKIP() << "no provided buffer rings (5.19)";
    TcpPair pair;
    std::vector<ProvidedBuffer> held;
    for (unsigned i = 0; i < kBufs; ++i) {
        ASSERT_EQ(::send(pair.client.get(), &"abcd"[i], 1, 0), 1);
        ring.prepare(op::Recv::provided(Fd{pair.server.get()}, kGroup)).user_data(i);
        const auto c = reap_one(ring);
        ASSERT_EQ(c.res, 1);
        held.push_back(buffers->hold(buffers->take(c)));
        ASSERT_TRUE(held.back());
        EXPECT_EQ(held.back().text(), std::string(1, "abcd"[i]));
    }
    ASSERT_EQ(::send(pair.client.get(), "y", 1, 0), 1);
    ring.prepare(op::Recv::provided(Fd{pair.server.get()}, kGroup)).user_data(8);
    EXPECT_EQ(reap_one(ring).res, -ENOBUFS) << "every buffer is held";
    held.erase(held.begin() + 1);  // buffer 'b' goes back; the others move down the vector
    ring.prepare(op::Recv::provided(Fd{pair.server.get()}, kGroup)).user_data(9);
    const auto c = reap_one(ring);
    ASSERT_EQ(c.res, 1);
    const ProvidedBuffer again = buffers->hold(buffers->take(c));
    EXPECT_EQ(again.text(), "y");
    held.clear();  // three more back, once each (a second give-back would be -EALREADY at take)
}
