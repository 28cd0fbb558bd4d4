// SendStream (a socket's output, one send in flight) and RecvStream::cancel,
// data-checked against the kernel:
//  - responses flushed while a send is in flight leave in order, every byte,
//    through the short sends a small socket buffer makes;
//  - a stream destroyed with a send in flight hands its bytes to the loop:
//    the kernel goes on reading them after the destructor, so freeing them
//    there would send freed memory (the ASan build fills freed memory, the
//    plain build reuses it: either way the peer would see other bytes);
//  - below(n) resumes a writer once the backlog is under n, the rest still
//    being sent;
//  - a loop that drains starts no new send (it would wait for it forever);
//  - a failed send is the stream's error, drained() reports it, and what
//    gathers after it is dropped;
//  - cancel() from another task ends a RecvStream after the chunks already
//    queued, and nothing is re-armed;
//  - pause() leaves no recv armed (what arrives stays in the socket) and
//    keeps the queued chunks; next() yields them, then receives again;
//  - a Chunk owns its provided buffer: dropped (or moved from and dropped,
//    or reset()) it goes back once, and a stream waiting on a dry ring
//    re-arms; a loop destroyed while a chunk is still held stops the program
//    with a message instead of leaving the chunk a dangling loop.
#include "uring_test_support.hpp"
#include "uringkit/async/loop.hpp"
#include "uringkit/async/streams.hpp"
#include "uringkit/sys/sanitizers.hpp"

#include <gtest/gtest.h>

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#if URINGKIT_ASAN
// Freed memory is filled, so bytes the kernel reads after a free are visibly wrong.
extern "C" const char* __asan_default_options() {
    return "max_free_fill_size=1048576:free_fill_byte=90";
}
#endif

using namespace uringkit;

namespace {

using uringkit::testing::SocketPair;

std::string pattern(std::size_t n, unsigned seed) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i)
        s[i] = static_cast<char>('a' + (i * 31 + seed + i / 251) % 26);
    return s;
}

void small_send_buffer(int fd) {
    const int size = 4096;  // the kernel doubles it; far less than one response
    ASSERT_EQ(::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size), 0);
}

// Reads with the loop until `want` bytes arrived or the peer ends.
async::Task<std::string> read_all(async::Loop& loop, int fd, std::size_t want) {
    std::string got;
    std::vector<char> buf(3000);
    while (got.size() < want) {
        const async::Result r =
            co_await loop.recv(Fd{fd}, buf.data(), static_cast<std::uint32_t>(buf.size()));
        if (r.res <= 0) break;
        got.append(buf.data(), static_cast<std::size_t>(r.res));
    }
    co_return got;
}

TEST(AsyncSendStream, ResponsesLeaveInOrderThroughShortSends) {
    Ring ring(64);
    async::Loop loop(ring);
    SocketPair sp;
    small_send_buffer(sp.fd[1]);
    std::string expected;
    std::string got;
    std::uint64_t sent = 0;
    std::int32_t drained = 1;
    for (unsigned i = 0; i < 200; ++i) expected += pattern(100 + (i * 977) % 20000, i);
    loop.spawn([](async::Loop& l, int fd, std::size_t want, std::string& out) -> async::Task<void> {
        out = co_await read_all(l, fd, want);
    }(loop, sp.fd[0], expected.size(), got));
    auto writer = [&]() -> async::Task<void> {
        async::SendStream out(loop, Fd{sp.fd[1]});
        for (unsigned i = 0; i < 200; ++i) {
            out.buffer() += pattern(100 + (i * 977) % 20000, i);
            out.flush();                          // at once, or after the send in flight
            if (i % 7 == 0) co_await loop.nop();  // let sends complete between writes
        }
        EXPECT_GT(out.backlog(), 0u);
        drained = (co_await out.drained()).res;
        EXPECT_EQ(out.backlog(), 0u);
        EXPECT_FALSE(out.busy());
        sent = out.take_sent();
    };
    loop.block_on(writer());
    loop.run();
    EXPECT_EQ(drained, 0);
    EXPECT_EQ(sent, expected.size());
    ASSERT_EQ(got.size(), expected.size());
    EXPECT_TRUE(got == expected);
    EXPECT_EQ(loop.in_flight(), 0u);
}

TEST(AsyncSendStream, BelowResumesWhenTheBacklogShrinksWhileStillSending) {
    Ring ring(64);
    async::Loop loop(ring);
    SocketPair sp;
    small_send_buffer(sp.fd[1]);
    const std::string data = pattern(1 << 20, 3);
    std::string got;
    loop.spawn([](async::Loop& l, int fd, std::size_t want, std::string& out) -> async::Task<void> {
        out = co_await read_all(l, fd, want);
    }(loop, sp.fd[0], data.size(), got));
    std::size_t backlog_at_wake = 0;
    bool busy_at_wake = false;
    auto writer = [&]() -> async::Task<void> {
        async::SendStream out(loop, Fd{sp.fd[1]});
        out.buffer() = data;
        out.flush();
        EXPECT_EQ((co_await out.below(65536)).res, 0);
        backlog_at_wake = out.backlog();
        busy_at_wake = out.busy();
        EXPECT_EQ((co_await out.drained()).res, 0);
    };
    loop.block_on(writer());
    loop.run();
    EXPECT_LT(backlog_at_wake, 65536u);
    EXPECT_TRUE(busy_at_wake) << "woken by the backlog, not by the end";
    EXPECT_TRUE(got == data);
}

// Output gathered but not flushed: below() and drained() flush it first, so a
// wait always has a send that can end it.
TEST(AsyncSendStream, WaitingFlushesWhatGathered) {
    Ring ring(64);
    async::Loop loop(ring);
    SocketPair sp;
    small_send_buffer(sp.fd[1]);
    const std::string data = pattern(200 * 1024, 5);
    std::string got;
    loop.spawn([](async::Loop& l, int fd, std::size_t want, std::string& out) -> async::Task<void> {
        out = co_await read_all(l, fd, want);
    }(loop, sp.fd[0], data.size(), got));
    auto writer = [&]() -> async::Task<void> {
        async::SendStream out(loop, Fd{sp.fd[1]});
        out.buffer() = data.substr(0, 100 * 1024);
        EXPECT_EQ((co_await out.below(4096)).res, 0);  // no flush() before it
        out.buffer() += data.substr(100 * 1024);
        EXPECT_EQ((co_await out.drained()).res, 0);
        EXPECT_EQ(out.backlog(), 0u);
    };
    loop.block_on(writer());
    loop.run();
    EXPECT_TRUE(got == data);
}

TEST(AsyncSendStream, DestroyedWithASendInFlightLeavesItsBytesToTheLoop) {
    Ring ring(64);
    async::Loop loop(ring);
    SocketPair sp;
    small_send_buffer(sp.fd[1]);
    // Under the heap's mmap threshold, so a premature free would be reused.
    const std::string response = pattern(64 * 1024, 7);
    auto writer = [&]() -> async::Task<void> {
        async::SendStream out(loop, Fd{sp.fd[1]});
        out.buffer() = response;
        out.flush();
        co_await loop.nop();  // the send reached the kernel, filled the socket and waits for room
        EXPECT_TRUE(out.busy());
        EXPECT_GT(out.backlog(), 0u);
    };  // destroyed with the rest of the send in flight
    loop.block_on(writer());
    // Whatever took the freed block would be what the kernel sends next.
    std::vector<std::unique_ptr<std::string>> reuse;
    for (int i = 0; i < 8; ++i)
        reuse.push_back(std::make_unique<std::string>(response.size(), 'Z'));
    // Reading makes room: the send goes on from the stream's bytes while its
    // cancel waits in the SQ.
    std::string got;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::recv(sp.fd[0], buf, sizeof buf, MSG_DONTWAIT);
        if (n <= 0) {
            if (loop.in_flight() == 0) break;
            loop.run_once();  // submits the cancel; the send ends
            continue;
        }
        got.append(buf, static_cast<std::size_t>(n));
    }
    ASSERT_GT(got.size(), 0u);
    ASSERT_LE(got.size(), response.size());
    EXPECT_TRUE(got == response.substr(0, got.size()))
        << "bytes sent after the stream was destroyed are not its own";
    EXPECT_EQ(loop.in_flight(), 0u);
}

// ~Loop() cancels what is in flight, then waits for each final completion.
// A short send whose completion it reaps there must not start the rest: the
// cancel is spent, the peer never reads, and the drain would wait forever.
// Run in a child, so a hang is a failure instead of a stuck test.
TEST(AsyncSendStream, ALoopThatDrainsStartsNoNewSend) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        {
            Ring ring(64);
            SocketPair sp;
            SocketPair idle;  // a recv that never completes keeps the task suspended
            const int size = 4096;
            ::setsockopt(sp.fd[1], SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
            async::Loop loop(ring);
            loop.spawn([](async::Loop& l, int fd, int quiet) -> async::Task<void> {
                async::SendStream out(l, Fd{fd});
                out.buffer() = std::string(256 * 1024, 'x');
                out.flush();  // in the SQ; the drain submits it, and it comes back short
                char c;
                co_await l.recv(Fd{quiet}, &c, 1);
            }(loop, sp.fd[1], idle.fd[0]));
        }  // ~Loop()
        ::_exit(0);
    }
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 100 && done == 0; ++i) {
        done = ::waitpid(child, &status, WNOHANG);
        if (done == 0) ::usleep(100000);
    }
    if (done == 0) {
        ::kill(child, SIGKILL);
        ::waitpid(child, &status, 0);
        FAIL() << "the loop's drain did not end within 10 s";
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(AsyncSendStream, AFailedSendIsItsErrorAndDropsTheRest) {
    Ring ring(16);
    async::Loop loop(ring);
    SocketPair sp;
    ::close(sp.fd[0]);
    sp.fd[0] = -1;
    auto writer = [&]() -> async::Task<void> {
        async::SendStream out(loop, Fd{sp.fd[1]});
        out.buffer() += "nobody reads this";
        out.flush();
        const async::Result r = co_await out.drained();
        EXPECT_EQ(r.res, -EPIPE);  // MSG_NOSIGNAL: an error, not SIGPIPE
        EXPECT_EQ(out.error(), -EPIPE);
        out.buffer() += "after the error";
        out.flush();
        EXPECT_FALSE(out.busy());
        EXPECT_EQ(out.backlog(), 0u);  // dropped, never sent
        EXPECT_EQ(out.take_sent(), 0u);
    };
    loop.block_on(writer());
    EXPECT_EQ(loop.in_flight(), 0u);
}

TEST(AsyncRecvStreamCancel, YieldsWhatIsQueuedThenEcanceledWithoutRearming) {
    Ring ring(32);
    BufferRing buffers(ring, 1, 8, 16);  // 16-byte buffers: one send is several chunks
    async::Loop loop(ring);
    SocketPair sp;
    async::RecvStream* stream = nullptr;
    std::string got;
    std::int32_t last = 1;
    auto reader = [&]() -> async::Task<void> {
        async::RecvStream in(loop, Fd{sp.fd[0]}, buffers);
        stream = &in;
        const std::string first = "0123456789abcdef0123456789abcdef";  // two buffers
        EXPECT_EQ(::send(sp.fd[1], first.data(), first.size(), 0),
                  static_cast<ssize_t>(first.size()));
        co_await loop.nop();  // both chunks arrive and queue while this task is elsewhere
        co_await loop.nop();
        in.cancel();
        for (;;) {
            auto c = co_await in.next();
            if (c.res <= 0) {
                last = c.res;
                break;
            }
            got.append(c.text());
            c.reset();
        }
        EXPECT_FALSE(in.armed());
        co_await in.stop();
        stream = nullptr;
    };
    loop.block_on(reader());
    EXPECT_EQ(got, "0123456789abcdef0123456789abcdef");
    EXPECT_EQ(last, -ECANCELED);
    // Nothing was re-armed: data sent now stays in the socket.
    ASSERT_EQ(::send(sp.fd[1], "late", 4, 0), 4);
    for (int i = 0; i < 3; ++i)
        loop.block_on([](async::Loop& l) -> async::Task<void> { co_await l.nop(); }(loop));
    char buf[8];
    EXPECT_EQ(::recv(sp.fd[0], buf, sizeof buf, MSG_DONTWAIT), 4);
    EXPECT_EQ(loop.in_flight(), 0u);
    EXPECT_EQ(stream, nullptr);
}

TEST(AsyncRecvStreamCancel, FromAnotherTaskWakesAWaitingConsumer) {
    Ring ring(16);
    BufferRing buffers(ring, 1, 4, 64);
    async::Loop loop(ring);
    SocketPair sp;
    async::RecvStream* stream = nullptr;
    std::int32_t res = 1;
    // Parameters, not captures: the lambda is gone once spawn() returns.
    loop.spawn([](async::Loop& l, int fd, BufferRing& b, async::RecvStream*& s,
                  std::int32_t& r) -> async::Task<void> {
        async::RecvStream in(l, Fd{fd}, b);
        s = &in;
        r = (co_await in.next()).res;  // nothing is sent: only the cancel ends this
        s = nullptr;
        co_await in.stop();
    }(loop, sp.fd[0], buffers, stream, res));
    ASSERT_NE(stream, nullptr);
    loop.block_on([&]() -> async::Task<void> {
        co_await loop.nop();
        stream->cancel();
    }());
    loop.run();
    EXPECT_EQ(res, -ECANCELED);
    EXPECT_EQ(stream, nullptr);
    EXPECT_EQ(loop.in_flight(), 0u);
}

TEST(AsyncRecvStreamPause, KeepsWhatIsQueuedTakesNothingMoreThenReceivesOnNext) {
    Ring ring(32);
    BufferRing buffers(ring, 1, 8, 16);
    async::Loop loop(ring);
    SocketPair sp;
    std::string got;
    int unread_while_paused = -1;
    auto reader = [&]() -> async::Task<void> {
        async::RecvStream in(loop, Fd{sp.fd[0]}, buffers);
        const std::string first = "0123456789abcdef0123456789abcdef";  // two buffers
        EXPECT_EQ(::send(sp.fd[1], first.data(), first.size(), 0),
                  static_cast<ssize_t>(first.size()));
        co_await loop.nop();
        co_await loop.nop();
        co_await in.pause();
        EXPECT_FALSE(in.armed());
        EXPECT_TRUE(in.queued());
        // Paused: what arrives now stays in the socket.
        EXPECT_EQ(::send(sp.fd[1], "late!", 5, 0), 5);
        for (int i = 0; i < 3; ++i) co_await loop.nop();
        EXPECT_EQ(::ioctl(sp.fd[0], FIONREAD, &unread_while_paused), 0);
        while (got.size() < first.size() + 5) {
            auto c = co_await in.next();
            if (c.res <= 0) break;
            got.append(c.text());
            c.reset();
        }
        co_await in.stop();
    };
    loop.block_on(reader());
    EXPECT_EQ(unread_while_paused, 5);
    EXPECT_EQ(got, "0123456789abcdef0123456789abcdeflate!");
    EXPECT_EQ(loop.in_flight(), 0u);
}

// One buffer in the ring: the second message can only arrive once the first
// chunk's buffer is back, and nothing but dropping the chunk gives it back.
TEST(AsyncRecvStreamChunk, ADroppedChunkGivesItsBufferBackOnce) {
    Ring ring(16);
    BufferRing buffers(ring, 5, 1, 64);
    async::Loop loop(ring);
    SocketPair sp;
    auto t = [&]() -> async::Task<std::string> {
        async::RecvStream in(loop, Fd{sp.fd[0]}, buffers);
        std::string got;
        const char* words[] = {"one", "two", "three"};
        for (const char* w : words) {
            EXPECT_EQ(::send(sp.fd[1], w, std::strlen(w), 0), static_cast<ssize_t>(std::strlen(w)));
            async::RecvStream::Chunk c = co_await in.next();
            if (c.res <= 0) break;
            // Moved twice: only the last holder gives the buffer back.
            async::RecvStream::Chunk moved = std::move(c);
            EXPECT_FALSE(c);
            async::RecvStream::Chunk last;
            last = std::move(moved);
            got += last.text();
            got += ' ';
        }  // `last` goes here, each time: the ring has its one buffer again
        co_await in.stop();
        co_return got;
    };
    EXPECT_EQ(loop.block_on(t()), "one two three ");
    EXPECT_EQ(loop.buffers_returned(), 3u) << "each buffer back exactly once";
}

TEST(AsyncRecvStreamChunkDeathTest, ALoopDestroyedWhileAChunkIsHeldStopsWithAMessage) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            Ring ring(16);
            BufferRing buffers(ring, 6, 2, 64);
            auto loop = std::make_unique<async::Loop>(ring);
            SocketPair sp;
            (void)::send(sp.fd[1], "held", 4, 0);
            auto t = [&]() -> async::Task<async::RecvStream::Chunk> {
                async::RecvStream in(*loop, Fd{sp.fd[0]}, buffers);
                co_return co_await in.next();
            };
            async::RecvStream::Chunk kept = loop->block_on(t());
            loop.reset();  // `kept` would give its buffer back through a freed loop
        },
        "async::Loop destroyed while 1 provided buffer\\(s\\) from its streams are still held");
}

}  // namespace
