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
#include "count_allocations.hpp"
#include "uring_test_support.hpp"
#include "uringkit/async/loop.hpp"
#include "uringkit/async/streams.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <new>
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
            c.reset();
        }(in_b, got_b));
        co_await loop.sleep(50ms);
        enobufs_b = in_b.take_enobufs();
        c1.reset();  // a buffer comes back: B re-arms and gets its data
        c2.reset();
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

// Every allocation fails while it lives (operator new is replaced in this
// program: count_allocations.hpp).
struct OutOfMemory {
    OutOfMemory() { g_failing = true; }
    ~OutOfMemory() { g_failing = false; }
    OutOfMemory(const OutOfMemory&) = delete;
    OutOfMemory& operator=(const OutOfMemory&) = delete;
};

// A RecvStream queues chunks its consumer has not taken; the queue grows on
// the completion path, which must not throw (it would end in
// std::terminate).  When it cannot grow, the chunk's buffer goes back and
// the stream ends with -ENOMEM after what it had queued.
TEST(AsyncFaults, ARecvQueueThatCannotGrowEndsTheStreamWithEnomem) {
    if (!kAllocationsCounted) GTEST_SKIP() << "operator new is not replaceable under TSan";
    Ring ring(16);
    BufferRing buffers(ring, 4, 16, 8);  // more buffers than the queue's first 8 places
    async::Loop loop(ring);
    SocketPair sp;
    auto t = [&]() -> async::Task<std::vector<std::string>> {
        async::RecvStream in(loop, Fd{sp.fd[0]}, buffers);
        // Nine 8-byte pieces: nine buffers, nine completions, nobody taking.
        const std::string data =
            "aaaaaaaabbbbbbbbccccccccddddddddeeeeeeeeffffffffgggggggghhhhhhhhiiiiiiii";
        EXPECT_EQ(::send(sp.fd[1], data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
        {
            OutOfMemory oom;
            for (int turns = 0; turns < 100 && !in.ready(); ++turns) co_await loop.nop();
            // The ninth chunk found the queue full and no memory to grow it.
            for (int turns = 0; turns < 100 && in.armed(); ++turns) co_await loop.nop();
        }
        std::vector<std::string> got;
        for (;;) {
            auto c = co_await in.next();
            got.push_back(c.res > 0 ? std::string(c.text()) : std::to_string(c.res));
            if (c.res <= 0) break;
        }
        co_return got;
    };
    const std::vector<std::string> got = loop.block_on(t());
    ASSERT_EQ(got.size(), 9u);
    for (std::size_t i = 0; i < 8; ++i)
        EXPECT_EQ(got[i], std::string(8, static_cast<char>('a' + i))) << "chunk " << i;
    EXPECT_EQ(got[8], std::to_string(-ENOMEM));
    // The eight chunks taken and the one that found no room: every buffer back.
    EXPECT_EQ(loop.buffers_returned(), 9u);
}

// A completion handler that starts a chain needs a slot per SQE; growing
// the slot table there must not throw through the completion path.  The
// chain waits in the loop's queue, and the next turn ends run() with
// std::bad_alloc after draining everything in flight.
TEST(AsyncFaults, NoMemoryForSlotsEndsTheLoopWithBadAllocAfterDraining) {
    if (!kAllocationsCounted) GTEST_SKIP() << "operator new is not replaceable under TSan";
    Ring ring(128);
    async::Loop loop(ring);
    int p[2];
    ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
    // The loop's slot table starts with room for 64 (loop.cpp): 63 reads
    // that never complete and one NOP fill it exactly, so the chain the NOP's
    // handler starts needs the table to grow.
    char bytes[63];
    auto reader = [&](char* b) -> async::Task<void> {
        (void)co_await loop.read(Fd{p[0]}, b, 1, ~0ULL);
    };
    for (char& b : bytes) loop.spawn(reader(&b));
    bool chained = false;
    auto trigger = [&]() -> async::Task<void> {
        co_await loop.nop();
        g_failing = true;
        (void)co_await loop.chain(op::Nop{}, op::Nop{});
        chained = true;
    };
    loop.spawn(trigger());
    bool bad_alloc = false;
    try {
        loop.run();
    } catch (const std::bad_alloc&) {
        bad_alloc = true;
    }
    g_failing = false;
    EXPECT_TRUE(bad_alloc) << "run() should end with std::bad_alloc";
    EXPECT_FALSE(chained) << "the chain never reached the kernel";
    EXPECT_EQ(loop.in_flight(), 0u) << "the loop drained before it rethrew";
    EXPECT_EQ(loop.live_tasks(), 0u);
    ::close(p[0]);
    ::close(p[1]);
}

}  // namespace
