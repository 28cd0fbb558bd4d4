// The open loop (--rate): it never sends more than the schedule holds, it
// keeps up with a rate far below the server's capacity, and its latency is
// measured from each request's intended send time, so a server paused for
// 200 ms (SIGSTOP, then SIGCONT) shows the pause in p99.9.
#include <gtest/gtest.h>

#include "load_test_support.hpp"
#include "net/server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <regex>

using namespace load_test;
using namespace std::chrono_literals;

namespace {

net::ServerConfig server_config() {
    net::ServerConfig c;
    c.port = 0;
    c.engine =
        net::uring_unavailable_reason().empty() ? net::EngineKind::Uring : net::EngineKind::Epoll;
    c.grace = 500ms;
    return c;
}

TEST(LoadRate, SendsNoMoreThanTheScheduleAndKeepsUp) {
    net::Server server(server_config());
    server.start();
    load::LoadConfig c = config_for(server.port(), 1000ms);
    c.connections = 4;
    c.threads = 2;
    c.rate = 2000;
    const load::LoadResult r = load::run_load(c);
    server.stop();
    server.wait();
    EXPECT_EQ(r.total_errors(), 0u) << r.first_error;
    // Each thread's requests are due at its start + i / (its share of the
    // rate): at most rate x duration, plus one per thread for the slot at 0.
    const double scheduled = c.rate * 1.0;
    EXPECT_LE(static_cast<double>(r.sent), scheduled + c.threads);
    // Far below what loopback serves, so nearly every request is sent and
    // answered; the bound is generous for a busy machine or a sanitizer build.
    EXPECT_GE(static_cast<double>(r.requests), 0.5 * scheduled);
    EXPECT_LE(r.requests, r.sent);
}

struct ServeProcess {
    pid_t pid = -1;
    std::uint16_t port = 0;
    ServeProcess() {
        int out[2];
        if (::pipe2(out, O_CLOEXEC) < 0) throw std::runtime_error("pipe");
        pid = ::fork();
        if (pid == 0) {
            ::dup2(out[1], 1);
            ::execl(URINGKIT_CLI, URINGKIT_CLI, "serve", "--port", "0", "--engine", "auto",
                    "--idle-timeout", "0", static_cast<char*>(nullptr));
            ::_exit(127);
        }
        ::close(out[1]);
        std::string text;
        std::smatch m;
        const std::regex listening("listening on 127\\.0\\.0\\.1:([0-9]+)");
        for (int i = 0; i < 100 && !std::regex_search(text, m, listening); ++i) {
            pollfd p{out[0], POLLIN, 0};
            if (::poll(&p, 1, 100) <= 0) continue;
            char buf[512];
            const ssize_t n = ::read(out[0], buf, sizeof buf);
            if (n <= 0) break;
            text.append(buf, static_cast<std::size_t>(n));
        }
        ::close(out[0]);
        if (std::regex_search(text, m, listening))
            port = static_cast<std::uint16_t>(std::stoi(m[1]));
    }
    ~ServeProcess() {
        ::kill(pid, SIGCONT);
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
};

TEST(LoadRate, A200msStallShowsInP999) {
    ServeProcess serve;
    ASSERT_NE(serve.port, 0) << "uringkit serve did not start";
    load::LoadConfig c = config_for(serve.port, 2000ms);
    // 10,000 requests: the slowest 0.1% are 10, more than the 4 requests in
    // flight when the server stops, so p99.9 reflects the stall only if the
    // requests due during it are measured from their intended send time
    // (latency from the actual send would show the stall in 4 samples only).
    c.connections = 4;
    c.rate = 5000;
    load::LoadResult r;
    std::thread runner([&] { r = load::run_load(c); });
    std::this_thread::sleep_for(700ms);
    ::kill(serve.pid, SIGSTOP);
    std::this_thread::sleep_for(200ms);
    ::kill(serve.pid, SIGCONT);
    runner.join();
    EXPECT_EQ(r.total_errors(), 0u) << r.first_error;
    ASSERT_GT(r.requests, 5000u);
    // The requests due during the pause waited for its end: about a tenth of
    // the run's requests, far more than the slowest 0.1% (or 1%).
    EXPECT_GE(r.latency.quantile(0.999), 100e6)
        << "p99.9 " << r.latency.quantile(0.999) / 1e6 << " ms";
    EXPECT_GE(r.latency.quantile(0.99), 50e6) << "p99 " << r.latency.quantile(0.99) / 1e6 << " ms";
    EXPECT_GE(static_cast<double>(r.latency.max()), 150e6);
}

}  // namespace
