// The coroutine layer when the ring pushes back:
//  - a RecvStream whose pool runs dry waits for a buffer to come back instead
//    of re-arming at once (which failed again with -ENOBUFS, a 100% CPU spin);
//  - nothing on the completion path throws: with the SQ full and the ring
//    unable to submit, the first loop threw from a noexcept path
//    (std::terminate); now the SQE waits and run()/block_on() report the error;
//  - a linked timeout is never submitted without its head: a chain is placed
//    whole or waits whole;
//  - a submit that fails once while making room in the SQ loses nothing.
// The ring is made unable to submit by putting /dev/null on its descriptor
// number (the mappings stay valid; io_uring_enter fails with EOPNOTSUPP).
#include "uring_test_support.hpp"
#include "uringkit/async/loop.hpp"
#include "uringkit/async/streams.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <system_error>

using namespace uringkit;
using namespace std::chrono_literals;

namespace {

using uringkit::testing::SocketPair;

// Makes io_uring_enter on `ring` fail until restored.
class BrokenEnter {
public:
    explicit BrokenEnter(const Ring& ring) : fd_(ring.fd()), saved_(::dup(ring.fd())) {
        const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
        ::dup2(null, fd_);
        ::close(null);
    }
    ~BrokenEnter() { restore(); }
    void restore() {
        if (saved_ < 0) return;
        ::dup2(saved_, fd_);
        ::close(saved_);
        saved_ = -1;
    }

private:
    int fd_;
    int saved_;
};

TEST(AsyncFaults, EnobufsWaitsForABufferInsteadOfSpinning) {
    Ring ring(32);
    BufferRing pool(ring, 9, 2, 4);  // two 4-byte buffers shared by two streams
    async::Loop loop(ring);
    SocketPair a, b;
    std::string got_b;
    std::uint32_t enobufs_b = 0;
    auto t = [&]() -> async::Task<void> {
        async::RecvStream in_a(loop, Fd{a.fd[0]}, pool);
        ::send(a.fd[1], "AAAAAAAA", 8, 0);
        auto c1 = co_await in_a.next();  // A holds both buffers
        auto c2 = co_await in_a.next();
        async::RecvStream in_b(loop, Fd{b.fd[0]}, pool);
        ::send(b.fd[1], "bbb", 3, 0);
        // B's consumer waits while the pool is dry, for as long as this sleep.
        loop.spawn([](async::RecvStream& in, std::string& out) -> async::Task<void> {
            auto c = co_await in.next();
            out.assign(c.text());
            in.recycle(c);
        }(in_b, got_b));
        co_await loop.sleep(50ms);
        enobufs_b = in_b.take_enobufs();
        in_a.recycle(c1);  // a buffer comes back: B re-arms and gets its data
        in_a.recycle(c2);
        while (got_b.empty()) co_await loop.nop();
        co_await in_b.stop();
        co_await in_a.stop();
    };
    loop.block_on(t());
    EXPECT_EQ(got_b, "bbb");
    EXPECT_LE(enobufs_b, 2u) << "the stream re-armed into an empty pool over and over";
}

TEST(AsyncFaults, AStreamArmedWithTheSqFullAndNoSubmitDoesNotTerminate) {
    EXPECT_EXIT(
        {
            Ring ring(2);
            BufferRing pool(ring, 4, 1, 4);
            async::Loop loop(ring);
            SocketPair sp;
            auto t = [&]() -> async::Task<void> {
                async::RecvStream in(loop, Fd{sp.fd[0]}, pool);
                ::send(sp.fd[1], "xxxxyyyy", 8,
                       0);  // a chunk, then -ENOBUFS: the stream ends and wants a re-arm
                co_await loop.nop();
                auto c = co_await in.next();
                (void)c;  // kept: the pool stays dry
                ring.prepare(op::Nop{}).user_data(7);
                ring.prepare(op::Nop{}).user_data(8);  // the SQ is full
                BrokenEnter broken(ring);
                (void)co_await in.next();  // re-arms from a noexcept path
            };
            try {
                loop.block_on(t());
            } catch (const std::system_error& e) {
                _exit(std::string(e.what()).find("io_uring_enter") != std::string::npos ? 0 : 2);
            }
            _exit(3);
        },
        ::testing::ExitedWithCode(0), "");
}

// Issuing into a full SQ submits what is prepared to make room, and the
// loop does not act on that submit's result: a failed io_uring_enter takes
// no SQE, so nothing may be lost when it fails once (here the ring's fd is
// broken only while the operations are issued).  Every NOP completes, once.
TEST(AsyncFaults, ASubmitFailingWhileMakingRoomLosesNothing) {
    Ring ring(4);
    async::Loop loop(ring);
    int done = 0;
    auto t = [&]() -> async::Task<void> {
        const async::Result r = co_await loop.nop();
        EXPECT_EQ(r.res, 0);
        ++done;
    };
    {
        BrokenEnter broken(ring);
        for (int i = 0; i < 6; ++i)
            loop.spawn(t());  // the fifth finds the SQ full: its submit fails
        EXPECT_EQ(ring.sq_pending(), 4u);
    }
    loop.run();
    EXPECT_EQ(done, 6);
}

TEST(AsyncFaults, ALinkTimeoutNeverGoesWithoutItsHead) {
    Ring ring(2);
    async::Loop loop(ring);
    SocketPair sp;
    async::Result r{1, 0};
    {
        BrokenEnter broken(ring);
        ring.prepare(op::Nop{}).user_data(7);  // one SQE left: the pair does not fit
        loop.spawn([](async::Loop& l, int fd, async::Result& out) -> async::Task<void> {
            char buf[8];
            out = co_await l.with_timeout(op::Recv(Fd{fd}, buf, sizeof buf), 20ms);
        }(loop, sp.fd[0], r));
        EXPECT_EQ(ring.sq_pending(), 1u) << "the chain's head went into the SQ without its timeout";
    }
    loop.run();
    EXPECT_TRUE(r.timed_out()) << r.res;
    EXPECT_EQ(loop.foreign_completions(), 1u);
}

TEST(AsyncFaults, AChainLongerThanTheSqIsRefused) {
    Ring ring(2);
    async::Loop loop(ring);
    auto t = [&]() -> async::Task<std::array<async::Result, 3>> {
        co_return co_await loop.chain(op::Nop{}, op::Nop{}, op::Nop{});
    };
    const auto r = loop.block_on(t());
    for (const auto& x : r) EXPECT_EQ(x.res, -EINVAL);
    EXPECT_EQ(loop.in_flight(), 0u);
}

}  // namespace
