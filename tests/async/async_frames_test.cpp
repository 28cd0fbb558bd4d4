// Task frames come from a per-thread pool: once warm, awaiting nested tasks
// and Loop::send_all (a Task per call) allocates nothing; frames of every size
// class are reused without mixing up their contents; a frame freed on another
// thread is safe.  Built with ASan or TSan the pool steps aside (frames come
// from the heap so the sanitizer still sees each one) and the no-allocation
// checks are skipped.
#include "uringkit/async/loop.hpp"

#include "count_allocations.hpp"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <string>
#include <thread>

using namespace uringkit;

namespace {

constexpr bool kPooled = async::detail::kFramesPooled;

async::Task<int> leaf(int v) {
    co_return v + 1;
}
async::Task<int> middle(int v) {
    co_return co_await leaf(v) * 2;
}

// A frame with `N` bytes of locals that must survive a suspension.
template <std::size_t N>
async::Task<long> big_frame(async::Loop& loop, int seed) {
    std::array<unsigned char, N> scratch;
    for (std::size_t i = 0; i < N; ++i)
        scratch[i] = static_cast<unsigned char>(seed + static_cast<int>(i));
    co_await loop.nop();  // suspend: the frame lives in the pool's memory meanwhile
    long sum = 0;
    for (std::size_t i = 0; i < N; ++i)
        sum += scratch[i] == static_cast<unsigned char>(seed + static_cast<int>(i));
    co_return sum;
}

TEST(AsyncFrames, WarmNestedTasksAllocateNothing) {
    Ring ring(8);
    async::Loop loop(ring);
    auto body = [&](int rounds) -> async::Task<long> {
        long total = 0;
        for (int i = 0; i < rounds; ++i) total += co_await middle(i);
        co_return total;
    };
    EXPECT_EQ(loop.block_on(body(10)), 110);  // warm the pool
    if (!kPooled) GTEST_SKIP() << "built with a sanitizer: frames come from the heap on purpose";
    auto outer = body(10000);  // made before counting: only the nested tasks count
    g_allocations = 0;
    g_counting = true;
    const long total = loop.block_on(std::move(outer));
    g_counting = false;
    EXPECT_EQ(total, 10000L * 9999 + 2 * 10000);
    EXPECT_EQ(g_allocations.load(), 0u) << "nested Task frames came from the heap";
}

TEST(AsyncFrames, WarmSendAllAllocatesNothing) {
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    Ring ring(8);
    async::Loop loop(ring);
    const std::string msg(200, 'x');
    std::string got;
    auto ping = [&](int rounds) -> async::Task<int> {
        char buf[256];
        for (int i = 0; i < rounds; ++i) {
            if ((co_await loop.send_all(Fd{sv[0]}, msg.data(), msg.size())).res !=
                static_cast<int>(msg.size()))
                co_return -1;
            const ssize_t n =
                ::recv(sv[1], buf, sizeof buf, 0);  // the send completed: the bytes are there
            if (n != static_cast<ssize_t>(msg.size())) co_return -2;
            got.assign(buf, static_cast<std::size_t>(n));
        }
        co_return rounds;
    };
    EXPECT_EQ(loop.block_on(ping(3)), 3);
    if (kPooled) {
        auto run = ping(2000);
        g_allocations = 0;
        g_counting = true;
        const int r = loop.block_on(std::move(run));
        g_counting = false;
        EXPECT_EQ(r, 2000);
        EXPECT_EQ(g_allocations.load(), 0u) << "send_all allocated per call";
    }
    EXPECT_EQ(got, msg);
    ::close(sv[0]);
    ::close(sv[1]);
}

TEST(AsyncFrames, ReusedFramesKeepTheirOwnContents) {
    Ring ring(64);
    async::Loop loop(ring);
    // Many frames of several size classes alive at once, then all reused.
    for (int round = 0; round < 3; ++round) {
        std::vector<long> results(60, -1);
        for (int i = 0; i < 60; ++i) {
            loop.spawn([](async::Loop& l, long& out, int seed) -> async::Task<void> {
                switch (seed % 3) {
                    case 0:
                        out = co_await big_frame<40>(l, seed) - 40;
                        break;
                    case 1:
                        out = co_await big_frame<700>(l, seed) - 700;
                        break;
                    default:
                        out = co_await big_frame<1900>(l, seed) - 1900;
                        break;
                }
            }(loop, results[static_cast<std::size_t>(i)], i + round * 7));
        }
        loop.run();
        for (long r : results) EXPECT_EQ(r, 0) << "a frame's locals changed while it was suspended";
    }
}

TEST(AsyncFrames, AFrameFreedOnAnotherThreadIsSafe) {
    Ring ring(8);
    async::Loop loop(ring);
    auto t = middle(20);  // allocated here, never started
    std::thread([task = std::move(t)]() mutable { task = {}; }).join();  // freed there
    EXPECT_EQ(loop.block_on(middle(20)), 42);
}

}  // namespace
