// What a hostile or careless client can cost the server: nothing beyond its
// own connection.  Idle and trickling clients are closed at the idle timeout,
// --max-conns closes the excess at once, and 20,000 connections leave no
// descriptor behind.
#include "serve_test_support.hpp"
#include "uringkit/sys/sanitizers.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <thread>
#include <vector>

using namespace serve_test;
using uringkit::net::EngineKind;

namespace {

class ServeLimits : public PerEngine {};

TEST_P(ServeLimits, SilentClientClosedAtIdleTimeout) {
    auto c = config();
    c.idle_timeout = std::chrono::milliseconds(200);
    TestServer srv(c);
    Socket quiet(srv.port());
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(quiet.closed_by_peer());  // the socket's own 10 s timeout would say false
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(150));
    EXPECT_GE(srv.server().stats().idle_closed, 1u);
}

TEST_P(ServeLimits, TricklingClientClosedAtIdleTimeout) {
    auto c = config();
    c.idle_timeout = std::chrono::milliseconds(300);
    TestServer srv(c);
    Socket slow(srv.port());
    // One byte every 20 ms never completes a head within the timeout: each
    // byte is activity, but not progress.
    const std::string req = "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(200, 'z');
    bool still_open = true;
    for (std::size_t i = 0; i < req.size() && still_open; ++i) {
        still_open = slow.send(std::string_view(&req[i], 1));
        ::usleep(20000);
        if (srv.server().stats().idle_closed >= 1) break;
    }
    EXPECT_TRUE(slow.closed_by_peer());
    EXPECT_EQ(srv.server().stats().idle_closed, 1u);
    // A client that keeps completing requests is not idle.
    Socket busy(srv.port());
    for (int i = 0; i < 10; ++i) {
        ASSERT_TRUE(busy.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
        std::string carry;
        ASSERT_EQ(read_response(busy, carry).status, 200) << i;
        ::usleep(50000);  // 10 x 50 ms: longer than the timeout in total
    }
}

TEST_P(ServeLimits, MaxConnsClosesTheExcessAtOnce) {
    auto c = config();
    c.max_conns = 4;
    c.idle_timeout = std::chrono::seconds(30);
    TestServer srv(c);
    std::vector<std::unique_ptr<Socket>> held;
    for (int i = 0; i < 4; ++i) {
        held.push_back(std::make_unique<Socket>(srv.port()));
        ASSERT_TRUE(held.back()->send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
        std::string carry;
        ASSERT_EQ(read_response(*held.back(), carry).status, 200);
    }
    for (int i = 0; i < 5; ++i) {
        Socket extra(srv.port());
        extra.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        EXPECT_TRUE(extra.closed_by_peer()) << i;
    }
    EXPECT_EQ(srv.server().stats().rejected, 5u);
    // The held ones still work; after one leaves, a new one gets in.
    ASSERT_TRUE(held[0]->send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    std::string carry;
    EXPECT_EQ(read_response(*held[0], carry).status, 200);
    held.pop_back();
    for (int i = 0; i < 200 && srv.server().stats().active > 3; ++i) ::usleep(5000);
    Socket next(srv.port());
    ASSERT_TRUE(next.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    std::string c2;
    EXPECT_EQ(read_response(next, c2).status, 200);
}

TEST_P(ServeLimits, NoDescriptorGrowthAcrossManyConnections) {
    auto c = config();
    c.idle_timeout = std::chrono::seconds(30);
    TestServer srv(c);
    auto round = [&](int n) {
        for (int i = 0; i < n; ++i) {
            Socket s(srv.port());
            // The server closes first (Connection: close): TIME_WAIT lands on
            // its side, so the client's ephemeral ports are not used up.
            ASSERT_TRUE(s.send(i % 3 == 0 ? "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                               : i % 3 == 1
                                   ? "GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                                   : "garbage\x01\r\n\r\n"));
            bool closed = false;
            const std::string got = s.read_all(&closed);
            ASSERT_TRUE(closed) << i;
            ASSERT_EQ(got.compare(0, 9, "HTTP/1.1 "), 0) << i;
        }
    };
    round(200);  // warm up: pools and buffers reach their size
    for (int i = 0; i < 200 && srv.server().stats().active > 0; ++i) ::usleep(5000);
    const std::size_t before = open_fds();
    // 20,000 here, 100,000 in bench/serve_churn.py; fewer under sanitizers,
    // which slow every connection several times over.
#if URINGKIT_ASAN || URINGKIT_TSAN
    const int n = 4000;
#else
    const int n = GetParam() == EngineKind::UringCoro ? 5000 : 20000;
#endif
    round(n);
    for (int i = 0; i < 400 && srv.server().stats().active > 0; ++i) ::usleep(5000);
    EXPECT_EQ(srv.server().stats().active, 0u);
    EXPECT_EQ(open_fds(), before);
    EXPECT_GE(srv.server().stats().accepted, static_cast<std::uint64_t>(n));
}

// A stop that lands in the same batch of events as the connections it
// closes: those events are stale by the time they are handled.  Acting on one
// closed its connection a second time and the server never finished (the
// epoll engine's count of open connections wrapped below zero).  Racing the
// stop against resets from the clients puts both in one batch within a few
// rounds; a server that does not finish ends the test binary with a message.
TEST_P(ServeLimits, StopRacingResetsFinishesEveryTime) {
    auto c = config();
    c.idle_timeout = std::chrono::seconds(30);
    for (int round = 0; round < 60; ++round) {
        TestServer srv(c);
        std::vector<std::unique_ptr<Socket>> clients;
        for (int i = 0; i < 24; ++i) {
            clients.push_back(std::make_unique<Socket>(srv.port()));
            ASSERT_TRUE(clients.back()->send("GET / HTTP/1.1\r\nHost: half"));
        }
        for (int i = 0; i < 400 && srv.server().stats().active < clients.size(); ++i)
            ::usleep(1000);
        ASSERT_EQ(srv.server().stats().active, clients.size()) << "round " << round;
        srv.server().stop();
        for (auto& s : clients) s->reset();
        auto done = std::async(std::launch::async, [&] { srv.finish(); });
        if (done.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
            std::fprintf(stderr, "round %d: the server did not finish within 20 s of stop()\n",
                         round);
            std::_Exit(1);  // the worker is stuck; its thread cannot be joined
        }
        done.get();
        EXPECT_EQ(srv.final_stats().active, 0u) << "round " << round;
    }
}

// Clients that connect while the server stops: the accept CQEs queued in
// the same batch as the stop, or as the accept's cancellation, carry new
// descriptors.  Each is closed, not dropped, and the close is submitted
// before the engine ends: the process holds as many descriptors after the
// server as before it (counted in /proc/self/fd).  A second thread keeps
// connecting across the stop: without it the race was never hit (45 runs
// passed with the coroutine engine's fix taken out; with it, round 10-27).
TEST_P(ServeLimits, StopWhileClientsConnectLeaksNoDescriptor) {
    auto c = config();
    c.idle_timeout = std::chrono::seconds(30);
    const std::size_t before = open_fds();
    for (int round = 0; round < 40; ++round) {
        std::vector<std::unique_ptr<Socket>> clients;
        TestServer srv(c);
        for (int i = 0; i < 8; ++i) clients.push_back(std::make_unique<Socket>(srv.port()));
        // Another thread keeps connecting (non-blocking, so a full backlog
        // or a closed listener never stalls it) across the stop, so accept
        // completions keep arriving while the engine cancels its accept.
        std::atomic<bool> connecting{true};
        std::vector<int> late;
        const std::uint16_t port = srv.port();
        std::thread hammer([&] {
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_port = htons(port);
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            while (connecting && late.size() < 2000) {
                const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                if (fd < 0) break;
                (void)::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
                late.push_back(fd);
            }
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(round % 4));
        srv.server().stop();
        for (int i = 0; i < 8; ++i) {
            try {
                clients.push_back(
                    std::make_unique<Socket>(srv.port(), std::chrono::milliseconds(200)));
            } catch (const std::exception&) {
                break;  // the listener is already closed
            }
        }
        srv.finish();
        connecting = false;
        hammer.join();
        for (const int fd : late) ::close(fd);
        clients.clear();
        ASSERT_EQ(open_fds(), before) << "round " << round;
    }
}

INSTANTIATE_TEST_SUITE_P(Engines, ServeLimits, testing::ValuesIn(engines()), engine_param_name);

// Many buffers' worth of data arriving at once with a tiny buffer ring:
// multishot recv ends with ENOBUFS again and again; the server re-arms and
// loses neither a byte nor the connection.
TEST(ServeBuffers, EnobufsRearmsNeverDrops) {
    if (!net::uring_unavailable_reason().empty()) GTEST_SKIP() << net::uring_unavailable_reason();
    for (EngineKind e : {EngineKind::Uring, EngineKind::UringCoro}) {
        net::ServerConfig c;
        c.engine = e;
        c.mode = net::Mode::Echo;
        c.buffer_count = 2;
        c.buffer_size = 64;
        TestServer srv(c);
        std::vector<std::unique_ptr<Socket>> socks;
        for (int i = 0; i < 8; ++i) socks.push_back(std::make_unique<Socket>(srv.port()));
        std::string data(64 * 1024, '\0');
        for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + i % 23);
        std::vector<std::thread> writers;
        for (auto& s : socks) writers.emplace_back([&] { s->send(data); });
        for (auto& s : socks) EXPECT_TRUE(s->read_n(data.size()) == data) << net::engine_name(e);
        for (auto& t : writers) t.join();
        EXPECT_GT(srv.server().stats().enobufs, 0u) << net::engine_name(e);
        EXPECT_EQ(srv.server().stats().active, 8u);
    }
}

}  // namespace
