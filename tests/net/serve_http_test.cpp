// `serve --mode http` through every engine, in process: exact response bytes,
// keep-alive, 1,000 pipelined requests, each refusal with its status and a
// close, /stats as JSON, and clients that vanish mid-request or reset.
#include "serve_test_support.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <thread>

using namespace serve_test;
using uringkit::net::EngineKind;

namespace {

class ServeHttp : public PerEngine {
protected:
    static std::string expected_root(const std::string& conn = "") {
        std::string r;
        net::append_response(r, 200, "text/plain", net::make_body(128), conn, false);
        return r;
    }
    // `n` bytes from `s` with every Date value blanked, to compare with
    // expected_root() across a change of second.
    static std::string read_n(Socket& s, std::size_t n) { return blank_dates(s.read_n(n)); }
};

TEST_P(ServeHttp, GetRootExactBytesKeepAlive) {
    TestServer srv(config());
    Socket s(srv.port());
    const std::string req = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    const std::string want = expected_root();
    ASSERT_NE(want.find(net::make_body(128)), std::string::npos);
    for (int i = 0; i < 20; ++i) {
        ASSERT_TRUE(s.send(req));
        ASSERT_EQ(read_n(s, want.size()), blank_dates(want)) << "request " << i;
    }
}

TEST_P(ServeHttp, ThousandPipelinedRequests) {
    TestServer srv(config());
    Socket s(srv.port());
    std::string batch;
    for (int i = 0; i < 1000; ++i)
        batch +=
            i % 2 ? "GET / HTTP/1.1\r\nHost: x\r\n\r\n" : "GET /?i=1 HTTP/1.1\r\nHost: x\r\n\r\n";
    batch += "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    ASSERT_TRUE(s.send(batch));
    bool closed = false;
    const std::string got = blank_dates(s.read_all(&closed));
    std::string want;
    for (int i = 0; i < 1000; ++i) want += expected_root();
    want += expected_root("close");
    ASSERT_EQ(got.size(), want.size());
    EXPECT_TRUE(got == blank_dates(want));
    EXPECT_TRUE(closed) << "Connection: close ends the connection after its response";
}

TEST_P(ServeHttp, RequestsSplitAcrossWrites) {
    TestServer srv(config());
    Socket s(srv.port());
    const std::string req =
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789GET / HTTP/1.1\r\nHost: "
        "x\r\n\r\n";
    for (char c : req) {
        ASSERT_TRUE(s.send(std::string_view(&c, 1)));
        if (c == '\n') ::usleep(1000);  // separate segments, so the server sees the pieces
    }
    const std::string want = expected_root() + expected_root();
    EXPECT_EQ(read_n(s, want.size()), blank_dates(want));
}

TEST_P(ServeHttp, HeadAndHttp10) {
    TestServer srv(config());
    {
        Socket s(srv.port());
        ASSERT_TRUE(s.send("HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
        std::string want;
        net::append_response(want, 200, "text/plain", net::make_body(128), "close", true);
        EXPECT_EQ(blank_dates(s.read_all()), blank_dates(want));
    }
    {
        Socket s(srv.port());
        ASSERT_TRUE(s.send("GET / HTTP/1.0\r\n\r\n"));
        bool closed = false;
        EXPECT_EQ(blank_dates(s.read_all(&closed)), blank_dates(expected_root("close")));
        EXPECT_TRUE(closed);
    }
}

// RFC 9112 3.2.2: the absolute-form is answered as its path ("http://x"
// with no path is "/"); before, every such request got 404.
TEST_P(ServeHttp, AbsoluteFormTargetIsServed) {
    TestServer srv(config());
    Socket s(srv.port());
    ASSERT_TRUE(
        s.send("GET http://x/ HTTP/1.1\r\nHost: x\r\n\r\n"
               "GET http://x HTTP/1.1\r\nHost: x\r\n\r\n"
               "GET HTTP://x:8080/stats HTTP/1.1\r\nHost: x\r\n\r\n"
               "GET http://x/nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
    std::string carry;
    const Response a = read_response(s, carry);
    EXPECT_EQ(a.status, 200);
    EXPECT_EQ(a.body, net::make_body(128));
    const Response b = read_response(s, carry);
    EXPECT_EQ(b.status, 200);
    EXPECT_EQ(b.body, net::make_body(128));
    const Response stats = read_response(s, carry);
    EXPECT_EQ(stats.status, 200);
    EXPECT_EQ(stats.body.compare(0, 1, "{"), 0) << stats.body;
    EXPECT_EQ(read_response(s, carry).status, 404);
}

struct Refusal {
    const char* request;
    int status;
};

TEST_P(ServeHttp, RefusalsAnswerThenClose) {
    TestServer srv(config());
    const Refusal cases[] = {
        {"GARBAGE\x01\x02\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nHost: x\r\nbad header\r\n\r\n", 400},
        {"BREW / HTTP/1.1\r\nHost: x\r\n\r\n", 501},
        {"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
        {"GET / HTTP/1.1\r\n\r\n", 400},                        // no Host (RFC 9112 3.2)
        {"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},  // two
        {"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n100001\r\n", 413},
        {"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n", 413},
        {"GET / HTTP/3.0\r\n\r\n", 505},
    };
    for (const Refusal& c : cases) {
        Socket s(srv.port());
        ASSERT_TRUE(s.send(c.request));
        std::string carry;
        const Response r = read_response(s, carry);
        EXPECT_EQ(r.status, c.status) << c.request;
        EXPECT_NE(r.head.find("Connection: close"), std::string::npos);
        EXPECT_TRUE(s.closed_by_peer()) << c.request;
    }
    // 414: a request line over 4 KiB, refused before it ends.
    {
        Socket s(srv.port());
        ASSERT_TRUE(s.send("GET /" + std::string(5000, 'u')));
        std::string carry;
        const Response r = read_response(s, carry);
        EXPECT_EQ(r.status, 414);
        EXPECT_NE(r.head.find("414 URI Too Long"), std::string::npos) << r.head;
        EXPECT_TRUE(s.closed_by_peer());
    }
    // 431: a head over 8 KiB, refused before it ends.
    Socket s(srv.port());
    ASSERT_TRUE(s.send("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(9000, 'a')));
    std::string carry;
    EXPECT_EQ(read_response(s, carry).status, 431);
    EXPECT_TRUE(s.closed_by_peer());
    // A request after a good one on the same connection, then garbage: the good one is answered
    // first.
    Socket t(srv.port());
    ASSERT_TRUE(t.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n\x01garbage\r\n\r\n"));
    std::string c2;
    EXPECT_EQ(read_response(t, c2).status, 200);
    EXPECT_EQ(read_response(t, c2).status, 400);
    EXPECT_TRUE(t.closed_by_peer());
}

TEST_P(ServeHttp, BodyUnderTheLimitIsReadAndDiscarded) {
    TestServer srv(config());
    Socket s(srv.port());
    const std::string body(300000, 'b');
    ASSERT_TRUE(s.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 300000\r\n\r\n" + body +
                       "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"));
    std::string carry;
    const Response a = read_response(s, carry);
    EXPECT_EQ(a.status, 200);
    EXPECT_EQ(a.body, net::make_body(128));
    EXPECT_EQ(read_response(s, carry).status, 404);
}

TEST_P(ServeHttp, ChunkedBodiesAreReadAndDiscarded) {
    TestServer srv(config());
    Socket s(srv.port());
    // Two chunked POSTs (extensions, a trailer) pipelined with GETs, sent
    // byte by byte so every state of the decoder meets a segment boundary.
    const std::string req =
        "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        "5;ext=1\r\nhello\r\n10\r\n0123456789abcdef\r\n0\r\nTrailer: t\r\n\r\n"
        "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
        "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    for (std::size_t at = 0; at < req.size(); at += 7) {
        ASSERT_TRUE(s.send(std::string_view(req).substr(at, 7)));
        ::usleep(200);
    }
    std::string carry;
    EXPECT_EQ(read_response(s, carry).status, 404) << "POST /a answered once its body ended";
    EXPECT_EQ(read_response(s, carry).status, 404);
    const Response post = read_response(s, carry);
    EXPECT_EQ(post.status, 200);
    EXPECT_EQ(post.body, net::make_body(128));
    EXPECT_EQ(read_response(s, carry).status, 200);
    EXPECT_EQ(srv.server().stats().requests, 4u);
    // A body over --max-body (1 MiB) in chunks under it: 413 once the sum passes.
    Socket big(srv.port());
    std::string chunks = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 4; ++i) chunks += "40000\r\n" + std::string(0x40000, 'c') + "\r\n";
    chunks += "1\r\n";  // a byte over: refused from the size, with nothing left unread
    ASSERT_TRUE(big.send(chunks));
    std::string c2;
    const Response r = read_response(big, c2);
    EXPECT_EQ(r.status, 413);
    EXPECT_NE(r.head.find("Connection: close"), std::string::npos);
}

TEST_P(ServeHttp, ResponsesCarryTheDate) {
    TestServer srv(config());
    Socket s(srv.port());
    const std::time_t before = std::time(nullptr);
    ASSERT_TRUE(
        s.send("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /stats HTTP/1.1\r\nHost: x\r\n\r\n"
               "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"));
    std::string carry;
    for (int i = 0; i < 3; ++i) {
        const Response r = read_response(s, carry);
        const std::time_t after = std::time(nullptr);
        const std::size_t at = r.head.find("\r\nDate: ");
        ASSERT_NE(at, std::string::npos) << r.head;
        std::tm tm{};
        ASSERT_NE(::strptime(r.head.c_str() + at + 8, "%a, %d %b %Y %H:%M:%S GMT", &tm), nullptr)
            << r.head;
        const std::time_t t = ::timegm(&tm);
        EXPECT_GE(t, before) << r.head;
        EXPECT_LE(t, after) << r.head;
    }
}

TEST_P(ServeHttp, StatsIsJson) {
    TestServer srv(config());
    Socket s(srv.port());
    ASSERT_TRUE(
        s.send("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\nGET /stats "
               "HTTP/1.1\r\nHost: x\r\n\r\n"));
    std::string carry;
    ASSERT_EQ(read_response(s, carry).status, 200);
    ASSERT_EQ(read_response(s, carry).status, 200);
    const Response r = read_response(s, carry);
    ASSERT_EQ(r.status, 200);
    EXPECT_NE(r.head.find("application/json"), std::string::npos);
    const auto j = nlohmann::json::parse(r.body);
    EXPECT_EQ(j["engine"], std::string(net::engine_name(GetParam())));
    EXPECT_EQ(j["mode"], "http");
    EXPECT_EQ(j["requests"].get<int>(), 3);
    EXPECT_EQ(j["responses"]["2xx"].get<int>(), 2)
        << "the /stats response is counted after it is rendered";
    EXPECT_GE(j["connections"]["active"].get<int>(), 1);
    EXPECT_GT(j["syscalls"].get<int>(), 0);
}

// The batching wait (--batch-wait) turns on only while many clients each wait
// long for their turn, and every answer stays exact while it is on.
TEST_P(ServeHttp, BatchesWaitsOnlyUnderManyClients) {
    TestServer srv(config());
    const std::string req = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    const std::string want = expected_root();
    {
        // One client in a ping-pong: a batch wait would only add latency.
        Socket s(srv.port());
        for (int i = 0; i < 1500; ++i) {
            ASSERT_TRUE(s.send(req));
            ASSERT_EQ(read_n(s, want.size()), blank_dates(want)) << "request " << i;
        }
        EXPECT_EQ(srv.server().stats().batch_waits, 0u) << "batched for one client";
    }
    // 64 clients, all with a request in flight: each waits for 63 others.
    std::vector<std::unique_ptr<Socket>> clients;
    for (int i = 0; i < 64; ++i) clients.push_back(std::make_unique<Socket>(srv.port()));
    const bool can_batch = GetParam() != EngineKind::Epoll && net::batch_wait_available();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    int rounds = 0;
    while ((rounds < 50 || (can_batch && srv.server().stats().batch_waits == 0)) &&
           std::chrono::steady_clock::now() < deadline) {
        for (auto& c : clients) ASSERT_TRUE(c->send(req));
        for (auto& c : clients)
            ASSERT_EQ(read_n(*c, want.size()), blank_dates(want)) << "round " << rounds;
        ++rounds;
    }
    if (can_batch)
        EXPECT_GT(srv.server().stats().batch_waits, 0u) << rounds << " rounds of 64 clients";
    else
        EXPECT_EQ(srv.server().stats().batch_waits, 0u)
            << "epoll, or a kernel without the batching wait";
}

TEST_P(ServeHttp, VanishingClientsCostOnlyTheirConnection) {
    TestServer srv(config());
    for (int i = 0; i < 50; ++i) {
        {
            Socket s(srv.port());
            ASSERT_TRUE(s.send("GET / HTTP/1.1\r\nHost: hal"));  // mid-request, then FIN
        }
        {
            Socket s(srv.port());
            ASSERT_TRUE(s.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc"));
            s.reset();  // RST mid-body
        }
        {
            Socket s(srv.port());
            ASSERT_TRUE(
                s.send("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n"));
            s.reset();  // RST while responses are on their way
        }
    }
    Socket s(srv.port());
    ASSERT_TRUE(s.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    EXPECT_EQ(read_n(s, expected_root().size()), blank_dates(expected_root()));
    // Every one of them is closed on the server side (active counts only `s`).
    for (int i = 0; i < 200 && srv.server().stats().active > 1; ++i) ::usleep(10000);
    EXPECT_EQ(srv.server().stats().active, 1u);
}

TEST_P(ServeHttp, StopFinishesAndClosesEverything) {
    TestServer srv(config());
    Socket idle(srv.port());
    Socket busy(srv.port());
    ASSERT_TRUE(busy.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    EXPECT_EQ(read_n(busy, expected_root().size()), blank_dates(expected_root()));
    srv.finish();  // stop() + wait(): returns only when every thread is done
    EXPECT_TRUE(idle.closed_by_peer());
    EXPECT_TRUE(busy.closed_by_peer());
    EXPECT_EQ(srv.final_stats().active, 0u);
    EXPECT_EQ(srv.final_stats().requests, 1u);
}

// A stop while answers are backed up in the socket (the client has not read
// them yet): every request the server read is answered whole before the
// close.  24 requests for 256 KiB answers: the server reads them in one go
// (input it never read is CloseAfterAnAnswerIsNotAResetWhenMoreInputArrived's
// matter) and is still sending, 6 MiB being more than the sockets hold, when
// it stops.
TEST_P(ServeHttp, StopFinishesTheAnswersItOwes) {
    constexpr std::size_t kRequests = 24;
    net::ServerConfig cfg = config();
    cfg.body_size = 256 * 1024;
    cfg.grace = std::chrono::seconds(30);  // the answers take longer than 500 ms under TSan
    TestServer srv(cfg);
    Socket s(srv.port());
    const int small = 16384;
    ASSERT_EQ(::setsockopt(s.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small), 0);
    std::string reqs;
    for (std::size_t i = 0; i < kRequests; ++i) reqs += "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    ASSERT_TRUE(s.send(reqs));
    for (int i = 0; i < 200 && srv.server().stats().requests < kRequests; ++i) ::usleep(10000);
    ::usleep(100000);  // the server's send waits for room
    std::thread stop([&] { srv.finish(); });
    bool closed = false;
    const std::string got = s.read_all(&closed);
    stop.join();
    EXPECT_TRUE(closed);
    std::string one;
    net::append_response(one, 200, "text/plain", net::make_body(cfg.body_size), "", false);
    one = blank_dates(one);
    EXPECT_EQ(srv.final_stats().requests, kRequests);
    ASSERT_EQ(got.size(), kRequests * one.size());
    const std::string blanked = blank_dates(got);
    for (std::size_t i = 0; i < kRequests; ++i)
        ASSERT_EQ(blanked.compare(i * one.size(), one.size(), one), 0) << "answer " << i;
}

// A client that sends more after a `Connection: close` request, while the
// answer is still on its way: the close must not reset the connection (a
// socket closed with unread input is reset, and the reset drops what its
// send buffer still holds).  The epoll engine lost the last 2.8 MiB of a
// 4 MiB answer this way.
TEST_P(ServeHttp, CloseAfterAnAnswerIsNotAResetWhenMoreInputArrived) {
    net::ServerConfig cfg = config();
    cfg.body_size = 4 * 1024 * 1024;
    TestServer srv(cfg);
    Socket s(srv.port());
    const int small = 16384;
    ASSERT_EQ(::setsockopt(s.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small), 0);
    ASSERT_TRUE(s.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
    ::usleep(100000);  // the answer fills the sockets; the server waits to send the rest
    std::string more;
    for (int i = 0; i < 50; ++i) more += "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    ASSERT_TRUE(s.send(more));  // arrives after the server stopped reading requests
    ::usleep(100000);
    std::string one;
    net::append_response(one, 200, "text/plain", net::make_body(cfg.body_size), "close", false);
    errno = 0;
    const std::string got = s.read_all();
    EXPECT_NE(errno, ECONNRESET) << "reset after " << got.size() << " of " << one.size()
                                 << " bytes";
    ASSERT_EQ(got.size(), one.size());
    EXPECT_EQ(blank_dates(got), blank_dates(one));
}

INSTANTIATE_TEST_SUITE_P(Engines, ServeHttp, testing::ValuesIn(engines()), engine_param_name);

}  // namespace
