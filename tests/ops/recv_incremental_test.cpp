// Incremental buffer consumption (6.12): a provided buffer ring registered
// with IOU_PBUF_RING_INC lets one large buffer take several arrivals.  Each
// completion flagged IORING_CQE_F_BUF_MORE leaves the buffer with the kernel
// and the next one continues after it; BufferRing::take() points each
// delivery at the right offset and hands the buffer over only with the
// completion that ends it.  The bytes taken, in completion order, must be
// exactly the bytes sent, with far fewer buffers used than completions.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/buffer_ring.hpp"
#include "uringkit/sys/error.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <set>

using namespace uringkit;
using namespace uringkit::testing;

namespace {
constexpr std::uint16_t kGroup = 5;
constexpr unsigned kBufs = 4;
constexpr std::uint32_t kBufSize = 4096;

std::optional<BufferRing> incremental_ring(Ring& ring) {
    try {
        return BufferRing(ring, kGroup, kBufs, kBufSize, true);
    } catch (const RingError& e) {
        if (e.code().value() == EINVAL) return std::nullopt;
        throw;
    }
}

TEST(RecvIncremental, ArrivalsShareABufferAtIncreasingOffsets) {
    Ring ring(16);
    auto buffers = incremental_ring(ring);
    if (!buffers) GTEST_SKIP() << "no incremental buffer rings (IOU_PBUF_RING_INC, Linux 6.12)";
    TcpPair pair;
    ring.prepare(op::Recv::provided(Fd{pair.server.get()}, kGroup).multishot()).user_data(1);
    std::mt19937 rng(3);
    std::vector<std::byte> sent, received;
    std::set<std::uint16_t> ids;
    unsigned completions = 0, pieces_kept = 0, arms = 1;
    for (unsigned round = 0; round < 300; ++round) {
        // Small arrivals, waited for one by one, so each is its own completion.
        const auto chunk = pattern(1 + rng() % 300, round);
        ASSERT_EQ(::send(pair.client.get(), chunk.data(), chunk.size(), 0),
                  static_cast<ssize_t>(chunk.size()));
        sent.insert(sent.end(), chunk.begin(), chunk.end());
        while (received.size() < sent.size()) {
            const auto c = reap_one(ring);
            ASSERT_EQ(c.user_data, 1u);
            if (c.res == -ENOBUFS || (c.res > 0 && !c.more())) {
                if (c.res > 0) {
                    const auto d = buffers->take(c);
                    ASSERT_EQ(d.error, 0);
                    received.insert(received.end(), d.bytes.begin(), d.bytes.end());
                    if (d.has_buffer) buffers->recycle(d.id);
                }
                ring.prepare(op::Recv::provided(Fd{pair.server.get()}, kGroup).multishot())
                    .user_data(1);
                ASSERT_LT(++arms, 100u) << "no progress";
                continue;
            }
            ASSERT_GT(c.res, 0) << "unexpected result " << c.res;
            ++completions;
            const auto d = buffers->take(c);
            ASSERT_EQ(d.error, 0) << errno_code(d.error).message();
            ids.insert(d.id);
            received.insert(received.end(), d.bytes.begin(), d.bytes.end());
            EXPECT_EQ(d.more, c.buffer_more());
            EXPECT_EQ(d.has_buffer, !c.buffer_more());
            if (d.more) ++pieces_kept;
            if (d.has_buffer) buffers->recycle(d.id);
        }
    }
    EXPECT_EQ(received, sent) << "bytes lost, duplicated or out of order";
    EXPECT_GT(pieces_kept, completions / 2) << "small arrivals should share buffers";
    EXPECT_LE(ids.size(), kBufs);
    ring.prepare(op::AsyncCancel(1)).user_data(2);
    (void)reap(ring, 2);
}

// Without the flag a buffer is handed over with every completion, as before.
TEST(RecvIncremental, APlainRingHandsOverEveryBuffer) {
    Ring ring(8);
    BufferRing buffers(ring, kGroup, kBufs, kBufSize);
    EXPECT_FALSE(buffers.incremental());
    const Completion c{1, 10, IORING_CQE_F_BUFFER | IORING_CQE_F_BUF_MORE};
    const auto d = buffers.take(c);
    EXPECT_TRUE(d.has_buffer);
    EXPECT_FALSE(d.more);
}

// A forged piece that would run past the buffer's end is refused.
TEST(RecvIncremental, APiecePastTheBufferEndIsRefused) {
    Ring ring(8);
    auto buffers = incremental_ring(ring);
    if (!buffers) GTEST_SKIP() << "no incremental buffer rings (IOU_PBUF_RING_INC, Linux 6.12)";
    const std::uint32_t id1 = 1u << IORING_CQE_BUFFER_SHIFT;
    const auto a =
        buffers->take(Completion{1, 4000, IORING_CQE_F_BUFFER | IORING_CQE_F_BUF_MORE | id1});
    EXPECT_EQ(a.error, 0);
    EXPECT_TRUE(a.more);
    const auto b = buffers->take(Completion{1, 200, IORING_CQE_F_BUFFER | id1});
    EXPECT_EQ(b.error, -EOVERFLOW);
    const auto c = buffers->take(Completion{1, 96, IORING_CQE_F_BUFFER | id1});
    EXPECT_EQ(c.error, 0);
    EXPECT_TRUE(c.has_buffer);
    EXPECT_EQ(c.bytes.data(), buffers->buffer(1).data() + 4000);
}

}  // namespace
