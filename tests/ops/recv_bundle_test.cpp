// Recv bundles (6.10): one completion of a multishot recv fills several
// provided buffers, taken in ring order from the one it names.  The ids of
// the others are not in the CQE: BufferRing::take_bundle finds them from
// where it put each buffer in the ring.  Recycled out of order and across the
// ring's wrap, the bytes taken, in completion order, must be exactly the
// bytes sent.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/buffer_ring.hpp"
#include "uringkit/sys/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace uringkit;
using namespace uringkit::testing;

namespace {
constexpr std::uint16_t kGroup = 3;
constexpr unsigned kBufs = 8;
constexpr std::uint32_t kBufSize = 64;

void arm(Ring& ring, int fd) {
    ring.prepare(op::Recv::provided(Fd{fd}, kGroup).multishot().bundle()).user_data(1);
}

TEST(RecvBundle, OneCompletionFillsSeveralBuffersInRingOrder) {
    Ring ring(16);
    if (!ring.has_feature(IORING_FEAT_RECVSEND_BUNDLE))
        GTEST_SKIP() << "no recv bundles (Linux 6.10)";
    BufferRing buffers(ring, kGroup, kBufs, kBufSize);
    TcpPair pair;
    std::mt19937 rng(11);
    std::vector<std::byte> sent, received;
    std::vector<std::uint16_t> held;  // taken, recycled later and out of order
    unsigned bundles = 0, arms = 0, rounds = 0;
    arm(ring, pair.server.get());
    ++arms;
    while (rounds < 200) {
        // 1 to 5 buffers' worth: a bundle as soon as it spans more than one.
        const auto chunk = pattern(1 + rng() % (5 * kBufSize), rounds);
        ASSERT_EQ(::send(pair.client.get(), chunk.data(), chunk.size(), 0),
                  static_cast<ssize_t>(chunk.size()));
        sent.insert(sent.end(), chunk.begin(), chunk.end());
        while (received.size() < sent.size()) {
            const auto c = reap_one(ring);
            ASSERT_EQ(c.user_data, 1u);
            if (c.res == -ENOBUFS) {
                // Everything held goes back, then the request is armed again.
                for (auto id : held) buffers.stage(id);
                buffers.publish();
                held.clear();
                arm(ring, pair.server.get());
                ASSERT_LT(++arms, 400u) << "no progress";
                continue;
            }
            ASSERT_GT(c.res, 0) << "unexpected result " << c.res;
            unsigned pieces = 0;
            const int err = buffers.take_bundle(c, [&](const BufferRing::Delivery& d) {
                ++pieces;
                received.insert(received.end(), d.bytes.begin(), d.bytes.end());
                held.push_back(d.id);
            });
            ASSERT_EQ(err, 0) << errno_code(err).message();
            EXPECT_EQ(pieces, (static_cast<unsigned>(c.res) + kBufSize - 1) / kBufSize);
            if (pieces > 1) ++bundles;
            if (!c.more()) {
                arm(ring, pair.server.get());
                ++arms;
            }
        }
        ASSERT_EQ(received.size(), sent.size());
        // Give back a random part of what is held, in a shuffled order, so
        // the ring's order is not the ids' order.
        std::shuffle(held.begin(), held.end(), rng);
        const std::size_t back = rng() % (held.size() + 1);
        for (std::size_t i = 0; i < back; ++i) buffers.stage(held[i]);
        buffers.publish();
        held.erase(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(back));
        ++rounds;
    }
    EXPECT_EQ(received, sent) << "bytes lost, duplicated or out of order";
    EXPECT_GT(bundles, 20u) << "sends of several buffers' worth should arrive as bundles";
    ring.prepare(op::AsyncCancel(1)).user_data(2);
    (void)reap(ring, 2);
}

TEST(RecvBundle, ABufferTakenTwiceIsRefused) {
    Ring ring(16);
    if (!ring.has_feature(IORING_FEAT_RECVSEND_BUNDLE))
        GTEST_SKIP() << "no recv bundles (Linux 6.10)";
    BufferRing buffers(ring, kGroup, kBufs, kBufSize);
    TcpPair pair;
    const auto sent = pattern(3 * kBufSize, 5);
    ASSERT_EQ(::send(pair.client.get(), sent.data(), sent.size(), 0),
              static_cast<ssize_t>(sent.size()));
    ring.prepare(op::Recv::provided(Fd{pair.server.get()}, kGroup).bundle()).user_data(1);
    const auto c = reap_one(ring);
    ASSERT_EQ(c.res, static_cast<int>(sent.size()));
    unsigned pieces = 0;
    ASSERT_EQ(buffers.take_bundle(c, [&](const BufferRing::Delivery&) { ++pieces; }), 0);
    EXPECT_EQ(pieces, 3u);
    // The same completion again (a stale or duplicated CQE): nothing is handed out twice.
    pieces = 0;
    EXPECT_EQ(buffers.take_bundle(c, [&](const BufferRing::Delivery&) { ++pieces; }), -EALREADY);
    EXPECT_EQ(pieces, 0u);
}

}  // namespace
