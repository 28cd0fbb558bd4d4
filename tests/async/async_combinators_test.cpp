// Awaiting several things, and ending them early: chains run in order and
// stop at a failure; batch and when_all run together; when_any cancels and
// drains the losers; a stop_token cancels one operation; a deadline reports
// -ETIME, distinct from a cancel's -ECANCELED.
#include "uring_test_support.hpp"
#include "uringkit/async/combinators.hpp"
#include "uringkit/async/loop.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

using namespace uringkit;
using namespace std::chrono_literals;

namespace {

using uringkit::testing::SocketPair;

struct TempFile {
    int fd = -1;
    TempFile() {
        char path[] = "/tmp/uringkit-comb-XXXXXX";
        fd = ::mkstemp(path);
        if (fd < 0) throw std::runtime_error("mkstemp");
        ::unlink(path);
    }
    ~TempFile() { ::close(fd); }
};

TEST(AsyncChain, WriteFsyncReadIsOneSubmissionInOrder) {
    Ring ring(8);
    async::Loop loop(ring);
    TempFile f;
    const std::string data = "written, synced, then read back by the same chain";
    std::string back(data.size(), '\0');
    std::array<async::Result, 3> r{};
    loop.spawn([](async::Loop& l, int fd, const std::string& d, std::string& b,
                  std::array<async::Result, 3>& out) -> async::Task<void> {
        out = co_await l.chain(op::Write(Fd{fd}, d.data(), static_cast<std::uint32_t>(d.size()), 0),
                               op::Fsync(Fd{fd}),
                               op::Read(Fd{fd}, b.data(), static_cast<std::uint32_t>(b.size()), 0));
    }(loop, f.fd, data, back, r));
    // The task is suspended on its chain: all three SQEs wait in the SQ for
    // one io_uring_enter, none went to the kernel alone.
    EXPECT_EQ(ring.sq_pending(), 3u);
    EXPECT_EQ(ring.enter_calls(), 0u);
    loop.run();
    EXPECT_EQ(r[0].res, static_cast<int>(data.size()));
    EXPECT_EQ(r[1].res, 0);
    EXPECT_EQ(r[2].res, static_cast<int>(data.size()));
    EXPECT_EQ(back, data);
}

TEST(AsyncChain, AFailedLinkCancelsTheRest) {
    Ring ring(8);
    async::Loop loop(ring);
    char buf[16];
    auto t = [&]() -> async::Task<std::array<async::Result, 3>> {
        co_return co_await loop.chain(op::Read(Fd{-1}, buf, sizeof buf, 0), op::Nop{}, op::Nop{});
    };
    const auto r = loop.block_on(t());
    EXPECT_EQ(r[0].res, -EBADF);
    EXPECT_EQ(r[1].res, -ECANCELED);
    EXPECT_EQ(r[2].res, -ECANCELED);
}

TEST(AsyncWhenAll, TasksRunTogetherAndGiveTheirValues) {
    Ring ring(16);
    async::Loop loop(ring);
    SocketPair a, b;
    auto receive = [&](int fd) -> async::Task<std::string> {
        char buf[32];
        const async::Result r = co_await loop.recv(Fd{fd}, buf, sizeof buf);
        co_return std::string(buf, static_cast<std::size_t>(r.res > 0 ? r.res : 0));
    };
    // The second task sends what the first waits for: run one after the
    // other they would deadlock.
    auto sender = [&]() -> async::Task<int> {
        co_await loop.send_all(Fd{a.fd[1]}, "to a", 4);
        co_await loop.send_all(Fd{b.fd[1]}, "to b", 4);
        co_return 8;
    };
    auto t = [&]() -> async::Task<std::tuple<std::string, std::string, int>> {
        co_return co_await async::when_all(receive(a.fd[0]), receive(b.fd[0]), sender());
    };
    const auto [x, y, n] = loop.block_on(t());
    EXPECT_EQ(x, "to a");
    EXPECT_EQ(y, "to b");
    EXPECT_EQ(n, 8);
}

TEST(AsyncWhenAll, AnExceptionComesAfterEveryTaskFinished) {
    Ring ring(16);
    async::Loop loop(ring);
    bool slow_finished = false;
    auto slow = [&]() -> async::Task<int> {
        co_await loop.sleep(5ms);
        slow_finished = true;
        co_return 1;
    };
    auto bad = [&]() -> async::Task<int> {
        co_await loop.nop();
        throw std::runtime_error("bad");
    };
    auto t = [&]() -> async::Task<int> {
        auto [u, v] = co_await async::when_all(slow(), bad());
        co_return u + v;
    };
    EXPECT_THROW(loop.block_on(t()), std::runtime_error);
    EXPECT_TRUE(slow_finished);
    EXPECT_EQ(loop.in_flight(), 0u);
}

TEST(AsyncWhenAny, TheLoserIsCancelledAndDrained) {
    Ring ring(16);
    async::Loop loop(ring);
    SocketPair sp;
    char buf[16];
    __kernel_timespec ts{0, 10'000'000};
    auto t = [&]() -> async::Task<async::AnyResult<2>> {
        co_return co_await async::when_any(loop, op::Recv(Fd{sp.fd[0]}, buf, sizeof buf),
                                           op::Timeout(&ts));
    };
    const auto r = loop.block_on(t());
    EXPECT_EQ(r.index, 1u) << "nothing was sent: the timeout comes first";
    EXPECT_EQ(r.first().res, -ETIME);
    EXPECT_EQ(r.results[0].res, -ECANCELED);
    EXPECT_EQ(loop.in_flight(), 0u) << "resumed before the loser's completion";
    ::send(sp.fd[1], "kept", 4, 0);
    char got[8] = {};
    EXPECT_EQ(::recv(sp.fd[0], got, sizeof got, MSG_DONTWAIT), 4)
        << "the cancelled recv took the bytes";
    EXPECT_EQ(std::string(got, 4), "kept");

    // Data waiting: the recv wins and the timeout is removed.
    ::send(sp.fd[1], "now", 3, 0);
    __kernel_timespec long_ts{10, 0};
    auto u = [&]() -> async::Task<async::AnyResult<2>> {
        co_return co_await async::when_any(loop, op::Recv(Fd{sp.fd[0]}, buf, sizeof buf),
                                           op::Timeout(&long_ts));
    };
    const auto s = loop.block_on(u());
    EXPECT_EQ(s.index, 0u);
    EXPECT_EQ(s.first().res, 3);
    EXPECT_EQ(std::string(buf, 3), "now");
    EXPECT_EQ(s.results[1].res, -ECANCELED);
}

TEST(AsyncCancel, AStopTokenCancelsOneOperationOnly) {
    Ring ring(16);
    async::Loop loop(ring);
    SocketPair a, b;
    std::stop_source stop;
    async::Result first{1, 0}, second{1, 0};
    loop.spawn(
        [](async::Loop& l, int fd, std::stop_token t, async::Result& out) -> async::Task<void> {
            char buf[8];
            out = co_await l.submit(op::Recv(Fd{fd}, buf, sizeof buf), std::move(t));
        }(loop, a.fd[0], stop.get_token(), first));
    loop.spawn([](async::Loop& l, int fd, async::Result& out) -> async::Task<void> {
        char buf[8];
        out = co_await l.recv(Fd{fd}, buf, sizeof buf);  // same kind, other socket: untouched
    }(loop, b.fd[0], second));
    loop.block_on([&]() -> async::Task<void> {
        co_await loop.nop();
        stop.request_stop();
        co_await loop.nop();
        co_await loop.send_all(Fd{b.fd[1]}, "b", 1);
    }());
    loop.run();
    EXPECT_TRUE(first.cancelled()) << first.res;
    EXPECT_FALSE(first.timed_out());
    EXPECT_EQ(second.res, 1);
    // Already stopped: completes at once, without an SQE.
    const auto r = loop.block_on([&]() -> async::Task<async::Result> {
        char buf[8];
        co_return co_await loop.submit(op::Recv(Fd{a.fd[0]}, buf, sizeof buf), stop.get_token());
    }());
    EXPECT_TRUE(r.cancelled());
    EXPECT_EQ(loop.in_flight(), 0u);
}

TEST(AsyncCancel, ADeadlineIsNotACancel) {
    Ring ring(16);
    async::Loop loop(ring);
    SocketPair sp;
    auto t = [&]() -> async::Task<std::array<async::Result, 2>> {
        char buf[8];
        const async::Result late = co_await loop.with_deadline(
            op::Recv(Fd{sp.fd[0]}, buf, sizeof buf), std::chrono::steady_clock::now() + 10ms);
        ::send(sp.fd[1], "x", 1, 0);
        const async::Result on_time =
            co_await loop.with_timeout(op::Recv(Fd{sp.fd[0]}, buf, sizeof buf), 10s);
        co_return std::array<async::Result, 2>{late, on_time};
    };
    const auto r = loop.block_on(t());
    EXPECT_TRUE(r[0].timed_out()) << r[0].res;
    EXPECT_FALSE(r[0].cancelled());
    EXPECT_EQ(r[1].res, 1);
}

}  // namespace
