// The coroutine layer's lifetime rules, one test per hazard the first loop
// had (each crashed or made ASan report a use after free; the ASan build takes
// frames from the heap, so a freed frame is seen):
//  - a multishot op or a two-completion op (send_zc) awaited through submit()
//    delivered its later completions to an awaiter that was gone;
//  - a RecvStream destroyed without stop() left its multishot recv armed;
//  - block_on() rethrowing a spawned task's exception destroyed its own task
//    while it was suspended on an SQE;
//  - every non-zero user_data was taken as the loop's own pointer;
//  - a chain could not be built from one coroutine (submit(op, IOSQE_IO_LINK)
//    linked another task's SQE);
//  - a coroutine destroyed with a read_fixed in flight must not hand its
//    registered buffer to the next taker while the kernel can still write it.
#include "uring_test_support.hpp"
#include "uringkit/async/fixed_buffers.hpp"
#include "uringkit/async/loop.hpp"
#include "uringkit/async/streams.hpp"
#include "uringkit/ops/control.hpp"
#include "uringkit/ops/net.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

using namespace uringkit;
using namespace std::chrono_literals;

namespace {

using uringkit::testing::SocketPair;

void send_text(int fd, const std::string& s) {
    ASSERT_EQ(::send(fd, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
}

// What is waiting on `fd` now, read without blocking.
std::string pending_bytes(int fd) {
    char buf[256];
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// Turns of the loop until it holds nothing in flight (bounded: a drain that
// never ends fails the test instead of hanging it).
void settle(async::Loop& loop) {
    for (int i = 0; i < 100 && loop.in_flight() > 0; ++i)
        loop.block_on([](async::Loop& l) -> async::Task<void> { co_await l.nop(); }(loop));
    EXPECT_EQ(loop.in_flight(), 0u);
}

TEST(AsyncLifetime, SubmitRefusesAMultishotSqe) {
    Ring ring(16);
    BufferRing buffers(ring, 5, 4, 64);
    async::Loop loop(ring);
    SocketPair sp;
    send_text(sp.fd[1], "first");
    auto t = [&]() -> async::Task<async::Result> {
        co_return co_await loop.submit(op::Recv::provided(Fd{sp.fd[0]}, 5).multishot());
    };
    const async::Result r = loop.block_on(t());
    EXPECT_EQ(r.res, -EINVAL) << "a multishot SQE belongs in a stream";
    // Had it been armed, this would complete into the awaiter that is gone.
    send_text(sp.fd[1], "second");
    settle(loop);
    EXPECT_EQ(pending_bytes(sp.fd[0]), "firstsecond") << "the refused recv took data";
}

TEST(AsyncLifetime, SendZcResumesAfterItsNotification) {
    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(listener, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::listen(listener, 1), 0);
    ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    const int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    const int server = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    ASSERT_GE(server, 0);

    Ring ring(16);
    async::Loop loop(ring);
    std::string data(32768, '\0');
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 13 + 7);
    std::size_t in_flight_at_resume = 99;
    auto t = [&]() -> async::Task<async::Result> {
        const async::Result r = co_await loop.submit(
            op::SendZc(Fd{client}, data.data(), static_cast<std::uint32_t>(data.size())));
        in_flight_at_resume = loop.in_flight();
        co_return r;
    };
    const async::Result r = loop.block_on(t());
    if (r.res == -EOPNOTSUPP || r.res == -EINVAL) REQUIRE_OP(ring, op::SendZc::code);
    ASSERT_EQ(r.res, static_cast<int>(data.size()));
    EXPECT_EQ(in_flight_at_resume, 0u) << "resumed before the notification completion";
    settle(loop);
    std::string got;
    char buf[8192];
    while (got.size() < data.size()) {
        const ssize_t n = ::recv(server, buf, sizeof buf, 0);
        ASSERT_GT(n, 0);
        got.append(buf, static_cast<std::size_t>(n));
    }
    EXPECT_TRUE(got == data);
    ::close(server);
    ::close(client);
    ::close(listener);
}

TEST(AsyncLifetime, RecvStreamDestroyedWhileArmedIsDrainedByTheLoop) {
    Ring ring(16);
    BufferRing buffers(ring, 2, 1, 64);  // one buffer: it must come back
    async::Loop loop(ring);
    SocketPair sp;
    auto t = [&]() -> async::Task<std::string> {
        async::RecvStream in(loop, Fd{sp.fd[0]}, buffers);
        send_text(sp.fd[1], "one");
        auto c = co_await in.next();
        std::string s(c.text());
        c.reset();
        // Data arriving before the loop submits the cancel lands in the
        // abandoned stream's buffer: the loop must give it back.
        send_text(sp.fd[1], "lost");
        co_return s;  // destroyed armed, without stop()
    };
    EXPECT_EQ(loop.block_on(t()), "one");
    settle(loop);
    send_text(sp.fd[1], "two");
    auto again = [&]() -> async::Task<std::string> {
        async::RecvStream in(loop, Fd{sp.fd[0]}, buffers);
        std::string s;
        while (s.find("two") == std::string::npos) {
            auto c = co_await in.next();
            if (c.res <= 0) break;
            s.append(c.text());
            c.reset();
        }
        co_await in.stop();
        co_return s;
    };
    const std::string s = loop.block_on(again());
    EXPECT_TRUE(s == "two" || s == "losttwo") << s;  // "lost" may or may not have been taken
    settle(loop);
}

// A completion the kernel never sends, forged with MSG_RING (as another
// thread's ring could): data in buffer 9999 of a 2-buffer group.  The stream
// must end with an error, not hand out a span outside the group.
TEST(AsyncLifetime, AForgedRecvCompletionEndsTheStreamInsteadOfPointingOutsideTheGroup) {
    Ring ring(64);
    {  // IORING_MSG_RING_FLAGS_PASS is 6.3
        ring.prepare(op::MsgRing(ring.fd(), 0, 1).pass_flags(0)).user_data(2);
        // One completion where the kernel refuses the flag, two where it
        // posts the message: wait for the sender's, then for the message.
        int sender = 1;
        bool posted = false;
        for (int i = 0; i < 4 && (sender == 1 || (sender == 0 && !posted)); ++i) {
            ASSERT_GE(ring.submit_and_wait(1), 0);
            ring.for_each_completion([&](const Completion& c) {
                if (c.user_data == 2) sender = c.res;
                if (c.user_data == 1) posted = true;
            });
        }
        if (sender == -EINVAL) GTEST_SKIP() << "IORING_MSG_RING_FLAGS_PASS needs Linux 6.3";
        ASSERT_EQ(sender, 0);
        ASSERT_TRUE(posted);
    }
    BufferRing buffers(ring, 3, 2, 64);
    async::Loop loop(ring);
    SocketPair sp;
    auto t = [&]() -> async::Task<std::vector<async::RecvStream::Chunk>> {
        async::RecvStream in(loop, Fd{sp.fd[0]}, buffers);
        send_text(sp.fd[1], "real");
        std::vector<async::RecvStream::Chunk> got;
        got.push_back(co_await in.next());  // held past the task: goes back with `got`
        // The stream's recv is armed in one of the loop's first slots: forge
        // a completion for each (the others are not live, so only routed).
        for (std::uint64_t gen = 0; gen < 4; ++gen)
            for (std::uint64_t slot = 0; slot < 4; ++slot)
                ring.prepare(op::MsgRing(ring.fd(), 100, 0x554bULL << 48 | gen << 32 | slot)
                                 .pass_flags(IORING_CQE_F_BUFFER |
                                             9999u << IORING_CQE_BUFFER_SHIFT | IORING_CQE_F_MORE))
                    .user_data(7);
        got.push_back(co_await in.next());
        co_await in.stop();
        co_return got;
    };
    const std::vector<async::RecvStream::Chunk> got = loop.block_on(t());
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].text(), "real");
    EXPECT_EQ(got[1].res, -ERANGE) << "a buffer id outside the group ends the stream";
    EXPECT_TRUE(got[1].bytes().empty());
    settle(loop);
}

TEST(AsyncLifetime, BlockOnDrainsItsTaskBeforeRethrowing) {
    Ring ring(16);
    async::Loop loop(ring);
    SocketPair sp;
    loop.spawn([](async::Loop& l) -> async::Task<void> {
        co_await l.nop();
        throw std::logic_error("from a spawned task");
    }(loop));
    std::string got = "untouched";
    auto blocked = [&]() -> async::Task<void> {
        char buf[64];  // the recv writes into this frame
        const async::Result r = co_await loop.recv(Fd{sp.fd[0]}, buf, sizeof buf);
        got.assign(buf, static_cast<std::size_t>(r.res > 0 ? r.res : 0));
    };
    EXPECT_THROW(loop.block_on(blocked()), std::logic_error);
    EXPECT_EQ(loop.in_flight(), 0u) << "the blocked task's recv is still in the kernel";
    EXPECT_EQ(loop.live_tasks(), 0u);
    EXPECT_EQ(got, "untouched") << "the destroyed task was resumed";
    // The cancelled recv is gone: the bytes stay in the socket.
    send_text(sp.fd[1], "late");
    settle(loop);
    EXPECT_EQ(pending_bytes(sp.fd[0]), "late");
}

TEST(AsyncLifetime, LoopDestructorDrainsSpawnedTasks) {
    Ring ring(16);
    SocketPair sp;
    int resumed = 0;
    {
        async::Loop loop(ring);
        for (int i = 0; i < 3; ++i)
            loop.spawn([](async::Loop& l, int fd, int& out) -> async::Task<void> {
                char buf[16];
                co_await l.recv(Fd{fd}, buf, sizeof buf);
                ++out;
            }(loop, sp.fd[0], resumed));
        EXPECT_EQ(loop.live_tasks(), 3u);
    }  // three recvs in flight: cancelled, drained, frames destroyed
    EXPECT_EQ(resumed, 0);
    send_text(sp.fd[1], "after");
    EXPECT_EQ(pending_bytes(sp.fd[0]), "after");
}

struct Seen {
    std::vector<std::uint64_t> user_data;
    static void record(void* self, const Completion& c) noexcept {
        static_cast<Seen*>(self)->user_data.push_back(c.user_data);
    }
};

TEST(AsyncLifetime, ForeignCompletionsAreRoutedNeverDereferenced) {
    Ring ring(16);
    async::Loop loop(ring);
    Seen seen;
    loop.route_foreign(&Seen::record, &seen);
    // A plain value, a value with the loop's tag but no such slot, and one
    // naming a real slot with a stale generation.
    const std::uint64_t tagged_bogus = 0x554bULL << 48 | 12345;
    const std::uint64_t stale = 0x554bULL << 48 | 7ULL << 32 | 0;
    ring.prepare(op::Nop{}).user_data(42);
    ring.prepare(op::Nop{}).user_data(tagged_bogus);
    ring.prepare(op::Nop{}).user_data(stale);
    const async::Result r = loop.block_on(
        [](async::Loop& l) -> async::Task<async::Result> { co_return co_await l.nop(); }(loop));
    EXPECT_EQ(r.res, 0);
    settle(loop);
    std::sort(seen.user_data.begin(), seen.user_data.end());
    std::vector<std::uint64_t> want{42, stale, tagged_bogus};
    std::sort(want.begin(), want.end());
    EXPECT_EQ(seen.user_data, want) << "each foreign completion routed exactly once";
    EXPECT_EQ(loop.foreign_completions(), 3u);
}

// submit() takes no SQE flags: a link there would chain the next SQE of
// whichever task prepares it next.
template <class L>
constexpr bool submit_takes_flags = requires(L& l) {
    l.submit(op::Nop{}, std::uint8_t{IOSQE_IO_LINK});
};
static_assert(!submit_takes_flags<async::Loop>);

TEST(AsyncLifetime, AChainLinksOnlyItsOwnSqes) {
    Ring ring(16);
    async::Loop loop(ring);
    SocketPair sp;
    std::vector<std::string> order;
    loop.spawn([](async::Loop& l, int fd, std::vector<std::string>& out) -> async::Task<void> {
        char buf[16];
        const auto r = co_await l.chain(op::Recv(Fd{fd}, buf, sizeof buf), op::Nop{});
        out.push_back("chain " +
                      std::string(buf, static_cast<std::size_t>(r[0].res > 0 ? r[0].res : 0)) +
                      " " + std::to_string(r[1].res));
    }(loop, sp.fd[0], order));
    // This nop is prepared right after the chain; it must not wait for the
    // chain's recv (which waits for the data this task sends).
    loop.spawn([](async::Loop& l, int fd, std::vector<std::string>& out) -> async::Task<void> {
        co_await l.nop();
        out.push_back("nop");
        co_await l.send_all(Fd{fd}, "hi", 2);
    }(loop, sp.fd[1], order));
    loop.run();
    EXPECT_EQ(order, (std::vector<std::string>{"nop", "chain hi 0"}));
}

TEST(AsyncLifetime, AFixedBufferStaysLentUntilItsReadsFinalCompletion) {
    Ring ring(16);
    async::Loop loop(ring);
    async::FixedBufferPool& pool =
        loop.register_fixed_buffers(1, 4096);  // one buffer: the next taker gets the same
    int p[2];
    ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
    // A reader suspended on a read_fixed of an empty pipe, its SQE in the
    // kernel, then destroyed.  Its buffer must not go back with the frame.
    async::Task<void> reader = [](async::Loop& l, async::FixedBufferPool& pl,
                                  int fd) -> async::Task<void> {
        async::FixedBuffer b = co_await pl.take();
        auto [r, back] = co_await l.read_fixed(Fd{fd}, std::move(b), ~0ULL);
        (void)r;
    }(loop, pool, p[0]);
    reader.get().resume();
    ASSERT_EQ(loop.in_flight(), 1u);
    ASSERT_GE(ring.submit(), 0);   // the read is armed on the pipe
    reader = async::Task<void>();  // destroyed with the read in flight
    EXPECT_EQ(pool.available(), 0u) << "the buffer went back while the kernel holds it";

    // The next taker fills the buffer, then data reaches the pipe.  Had the
    // buffer gone back with the frame, the abandoned read (its cancel not
    // submitted yet) would copy "AAAA" over "BBBB".
    const std::string mine(4096, 'B');
    auto taker = [&]() -> async::Task<std::string> {
        async::FixedBuffer b = co_await pool.take();
        std::memcpy(b.data(), mine.data(), mine.size());
        b.resize(mine.size());
        EXPECT_EQ(::write(p[1], "AAAA", 4), 4);
        co_await loop.nop();  // a turn: whatever the kernel still had runs now
        co_return std::string(reinterpret_cast<const char*>(b.data()), b.size());
    };
    EXPECT_TRUE(loop.block_on(taker()) == mine)
        << "the abandoned read wrote into the next taker's buffer";
    settle(loop);
    EXPECT_EQ(pool.available(), 1u);
    ASSERT_EQ(::fcntl(p[0], F_SETFL, O_NONBLOCK),
              0);  // a consumed pipe fails the test instead of hanging it
    char left[8] = {};
    EXPECT_EQ(::read(p[0], left, sizeof left), 4) << "the cancelled read took the pipe's bytes";
    EXPECT_EQ(std::string(left, 4), "AAAA");
    ::close(p[0]);
    ::close(p[1]);
}

}  // namespace
