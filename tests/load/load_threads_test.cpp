// Connections are spread over the threads evenly (thread t gets connection
// i when i % threads == t), every connection carries requests, and what the
// threads count adds up to the whole.
#include <gtest/gtest.h>

#include "load_test_support.hpp"
#include "net/server.hpp"

#include <numeric>

using namespace load_test;
using namespace std::chrono_literals;

namespace {

TEST(LoadThreads, ConnectionsOfThread) {
    EXPECT_EQ(load::connections_of_thread(10, 3, 0), 4u);
    EXPECT_EQ(load::connections_of_thread(10, 3, 1), 3u);
    EXPECT_EQ(load::connections_of_thread(10, 3, 2), 3u);
    unsigned total = 0;
    for (unsigned t = 0; t < 7; ++t) total += load::connections_of_thread(100, 7, t);
    EXPECT_EQ(total, 100u);
}

class LoadThreadsModes : public testing::TestWithParam<load::Mode> {};

TEST_P(LoadThreadsModes, EveryConnectionOfEveryThreadCarriesRequests) {
    net::ServerConfig sc;
    sc.port = 0;
    sc.mode = GetParam() == load::Mode::Http ? net::Mode::Http : net::Mode::Echo;
    sc.engine =
        net::uring_unavailable_reason().empty() ? net::EngineKind::Uring : net::EngineKind::Epoll;
    sc.threads = 2;
    sc.grace = 500ms;
    net::Server server(sc);
    server.start();
    load::LoadConfig c = config_for(server.port(), 400ms, GetParam());
    c.connections = 10;
    c.threads = 3;
    c.pipeline = 2;
    const load::LoadResult r = load::run_load(c);
    server.stop();
    server.wait();
    EXPECT_EQ(r.total_errors(), 0u) << r.first_error;
    EXPECT_EQ(r.reconnects, 0u);
    EXPECT_EQ(server.stats().accepted, 10u);
    ASSERT_EQ(r.threads.size(), 3u);
    EXPECT_EQ(r.threads[0].connections, 4u);
    EXPECT_EQ(r.threads[1].connections, 3u);
    EXPECT_EQ(r.threads[2].connections, 3u);
    ASSERT_EQ(r.per_connection.size(), 10u);
    for (std::size_t i = 0; i < r.per_connection.size(); ++i)
        EXPECT_GT(r.per_connection[i], 0u) << "connection " << i;
    std::uint64_t by_thread = 0;
    for (const load::ThreadResult& t : r.threads) by_thread += t.requests;
    EXPECT_EQ(by_thread, r.requests);
    EXPECT_EQ(std::accumulate(r.per_connection.begin(), r.per_connection.end(), std::uint64_t{0}),
              r.requests);
    EXPECT_EQ(r.latency.count(), r.requests);
    EXPECT_GT(r.syscalls, 0u);
}

INSTANTIATE_TEST_SUITE_P(Modes, LoadThreadsModes,
                         testing::Values(load::Mode::Http, load::Mode::Echo),
                         [](const testing::TestParamInfo<load::Mode>& p) {
                             return p.param == load::Mode::Http ? "http" : "echo";
                         });

}  // namespace
