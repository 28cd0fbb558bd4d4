// Responses that are wrong are counted as errors of their kind, never
// dropped: a wrong Content-Length (bad response), a close in the middle of a
// response (closed), a reset (reset), silence (timeout), echoed bytes that
// differ (bad response); and responses that are right but unusual (chunked,
// not 2xx, pipelined) are counted as responses.
#include <gtest/gtest.h>

#include "load_test_support.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <array>
#include <atomic>

using namespace load_test;
using namespace std::chrono_literals;
using uringkit::load::ErrorKind;

namespace {

std::uint64_t errors_of(const load::LoadResult& r, ErrorKind k) {
    return r.errors[static_cast<int>(k)];
}

// Answers every request with `response`, pipelined requests included.
ScriptedServer::Handler answer_each(std::string response) {
    return [response](int fd, const std::atomic<bool>& stop) {
        std::string carry;
        while (next_request(fd, carry, stop))
            if (!send_all(fd, response)) return;
    };
}

TEST(LoadValidation, WrongContentLengthIsABadResponse) {
    // Says 5 bytes, sends 11: the 6 left over are not a status line.
    ScriptedServer server(answer_each("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello world"));
    const load::LoadResult r = load::run_load(config_for(server.port(), 300ms));
    EXPECT_GE(errors_of(r, ErrorKind::BadResponse), 1u);
    EXPECT_EQ(r.total_errors(), errors_of(r, ErrorKind::BadResponse));
    EXPECT_NE(r.first_error.find("not an HTTP response"), std::string::npos) << r.first_error;
    // Each connection opened again gets one good response before the bad bytes.
    EXPECT_GE(r.reconnects + 1, errors_of(r, ErrorKind::BadResponse));
}

TEST(LoadValidation, CloseMidResponseIsClosed) {
    ScriptedServer server([](int fd, const std::atomic<bool>& stop) {
        std::string carry;
        if (next_request(fd, carry, stop))
            send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b");
        // returning closes the connection 90 bytes short
    });
    const load::LoadResult r = load::run_load(config_for(server.port(), 300ms));
    EXPECT_GE(errors_of(r, ErrorKind::Closed), 1u);
    EXPECT_EQ(r.total_errors(), errors_of(r, ErrorKind::Closed));
    EXPECT_EQ(r.requests, 0u);
    EXPECT_NE(r.first_error.find("middle of a response"), std::string::npos) << r.first_error;
}

TEST(LoadValidation, ResetIsReset) {
    ScriptedServer server([](int fd, const std::atomic<bool>& stop) {
        std::string carry;
        if (!next_request(fd, carry, stop)) return;
        linger l{1, 0};  // close with RST instead of FIN
        ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    });
    const load::LoadResult r = load::run_load(config_for(server.port(), 300ms));
    EXPECT_GE(errors_of(r, ErrorKind::Reset), 1u);
    EXPECT_EQ(r.total_errors(), errors_of(r, ErrorKind::Reset));
    EXPECT_EQ(r.requests, 0u);
}

TEST(LoadValidation, SilenceIsATimeout) {
    ScriptedServer server([](int fd, const std::atomic<bool>& stop) {
        std::string carry;
        if (next_request(fd, carry, stop))
            read_until(fd, carry, stop,
                       [](const std::string&) { return false; });  // until EOF or the end
    });
    load::LoadConfig c = config_for(server.port(), 600ms);
    c.timeout = 100ms;
    const load::LoadResult r = load::run_load(c);
    EXPECT_GE(errors_of(r, ErrorKind::Timeout), 2u);
    EXPECT_EQ(r.total_errors(), errors_of(r, ErrorKind::Timeout));
    EXPECT_EQ(r.requests, 0u);
}

TEST(LoadValidation, ChunkedAndNot2xxAreResponses) {
    ScriptedServer server(
        answer_each("HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n"));
    load::LoadConfig c = config_for(server.port(), 300ms);
    c.pipeline = 4;
    const load::LoadResult r = load::run_load(c);
    EXPECT_EQ(r.total_errors(), 0u) << r.first_error;
    EXPECT_GT(r.requests, 0u);
    EXPECT_EQ(r.non_2xx, r.requests);
    EXPECT_EQ(r.latency.count(), r.requests);
    // Pipelined: every write carries 4 requests, and every one was answered
    // (the last write's responses may fall after the end).
    EXPECT_EQ(r.sent % 4, 0u);
    EXPECT_LE(r.requests, r.sent);
    EXPECT_GE(r.requests + 4, r.sent);
}

TEST(LoadValidation, ConnectionCloseBetweenResponsesIsNoError) {
    ScriptedServer server([](int fd, const std::atomic<bool>& stop) {
        std::string carry;
        if (next_request(fd, carry, stop))
            send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
    });
    const load::LoadResult r = load::run_load(config_for(server.port(), 300ms));
    EXPECT_EQ(r.total_errors(), 0u) << r.first_error;
    EXPECT_GT(r.requests, 0u);
    EXPECT_GE(r.reconnects + 1, r.requests);
}

TEST(LoadValidation, EchoedBytesThatDifferAreABadResponse) {
    ScriptedServer server([](int fd, const std::atomic<bool>& stop) {
        std::string carry;
        std::size_t n = 0;
        while (read_until(fd, carry, stop, [](const std::string& c) { return !c.empty(); })) {
            // Every byte echoed except the 100th, which comes back changed.
            for (char& ch : carry)
                if (++n == 100) ch = static_cast<char>(ch ^ 1);
            if (!send_all(fd, carry)) return;
            carry.clear();
        }
    });
    load::LoadConfig c = config_for(server.port(), 300ms, load::Mode::Echo);
    c.size = 64;
    const load::LoadResult r = load::run_load(c);
    EXPECT_GE(errors_of(r, ErrorKind::BadResponse), 1u);
    EXPECT_EQ(r.total_errors(), errors_of(r, ErrorKind::BadResponse));
    EXPECT_NE(r.first_error.find("echoed bytes differ"), std::string::npos) << r.first_error;
    // The first message (bytes 1-64) came back intact before the change in the second.
    EXPECT_GE(r.requests, 1u);
}

TEST(LoadValidation, ExactEchoHasNoErrors) {
    ScriptedServer server([](int fd, const std::atomic<bool>& stop) {
        std::string carry;
        while (read_until(fd, carry, stop, [](const std::string& c) { return !c.empty(); })) {
            if (!send_all(fd, carry)) return;
            carry.clear();
        }
    });
    load::LoadConfig c = config_for(server.port(), 300ms, load::Mode::Echo);
    c.size = 10000;  // larger than a provided buffer: replies arrive in pieces
    c.pipeline = 3;
    const load::LoadResult r = load::run_load(c);
    EXPECT_EQ(r.total_errors(), 0u) << r.first_error;
    EXPECT_GT(r.requests, 0u);
    // Bytes of a reply still arriving at the end are counted, the reply is not.
    EXPECT_GE(r.bytes_in, r.requests * c.size);
    EXPECT_LT(r.bytes_in, (r.requests + c.pipeline) * c.size);
}

TEST(LoadValidation, ASendStuckOnAServerThatNeverReadsEndsCleanly) {
    // 4 MiB messages to a server that never reads: the send stays in flight
    // with the socket buffers full.  The timeout closes the connection; its
    // send must be cancelled and completed before the buffer it names is
    // freed, and the run must end.
    ScriptedServer server([](int, const std::atomic<bool>& stop) { hold(stop); });
    load::LoadConfig c = config_for(server.port(), 400ms, load::Mode::Echo);
    c.size = 4 << 20;
    c.timeout = 100ms;
    const load::LoadResult r = load::run_load(c);
    EXPECT_GE(errors_of(r, ErrorKind::Timeout), 1u);
    EXPECT_EQ(r.requests, 0u);
}

TEST(LoadValidation, ResponsesToNoRequestAreBad) {
    // Two responses per request.
    ScriptedServer server(
        answer_each("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxHTTP/1.1 200 OK\r\n"
                    "Content-Length: 1\r\n\r\ny"));
    const load::LoadResult r = load::run_load(config_for(server.port(), 300ms));
    EXPECT_GE(errors_of(r, ErrorKind::BadResponse), 1u);
    EXPECT_NE(r.first_error.find("no request"), std::string::npos) << r.first_error;
}

}  // namespace

namespace {

// Answers each request with the body its path names: "/x" gets `bodies[0]`,
// "/y" `bodies[1]`, "/z" `bodies[2]` (with `evil`, /y's byte 5 flipped);
// counts the requests of each path in `seen`.
ScriptedServer::Handler answer_by_path(std::array<std::string, 3> bodies, bool evil,
                                       std::array<std::atomic<int>, 3>& seen) {
    return [bodies, evil, &seen](int fd, const std::atomic<bool>& stop) {
        // Each response in its own send: without this, Nagle holds the small
        // ones for the client's delayed ACK.
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        std::string carry;
        for (;;) {
            if (!read_until(fd, carry, stop, [](const std::string& c) {
                    return c.find("\r\n\r\n") != std::string::npos;
                }))
                return;
            const std::size_t i = static_cast<std::size_t>(carry[5] - 'x');  // "GET /x ..."
            carry.erase(0, carry.find("\r\n\r\n") + 4);
            if (i > 2) return;
            ++seen[i];
            std::string body = bodies[i];
            if (evil && i == 1) body[5] ^= 1;
            if (!send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                                  "\r\n\r\n" + body))
                return;
        }
    };
}

TEST(LoadValidation, PathsAreRequestedInTurnAndBodiesVerified) {
    const std::array<std::string, 3> bodies{std::string(3000, 'x'), std::string(70000, 'y'),
                                            std::string(1, 'z')};
    for (const bool random : {false, true}) {
        std::array<std::atomic<int>, 3> seen{};
        ScriptedServer server(answer_by_path(bodies, false, seen));
        load::LoadConfig c = config_for(server.port(), 300ms);
        c.connections = 2;
        c.pipeline = 3;
        c.paths = {"/x", "/y", "/z"};
        c.random_paths = random;
        c.expected = {bodies.begin(), bodies.end()};
        const load::LoadResult r = load::run_load(c);
        EXPECT_EQ(r.total_errors(), 0u) << r.first_error;
        EXPECT_GT(r.requests, 30u);
        for (auto& n : seen) EXPECT_GT(n.load(), 3) << "every path is requested";
    }
}

TEST(LoadValidation, ABodyThatDiffersFromTheFileIsABadResponse) {
    const std::array<std::string, 3> bodies{std::string(3000, 'x'), std::string(70000, 'y'),
                                            std::string(1, 'z')};
    std::array<std::atomic<int>, 3> seen{};
    ScriptedServer server(answer_by_path(bodies, true, seen));
    load::LoadConfig c = config_for(server.port(), 300ms);
    c.paths = {"/x", "/y", "/z"};
    c.expected = {bodies.begin(), bodies.end()};
    const load::LoadResult r = load::run_load(c);
    EXPECT_GE(errors_of(r, ErrorKind::BadResponse), 1u);
    EXPECT_EQ(r.total_errors(), errors_of(r, ErrorKind::BadResponse));
    EXPECT_NE(r.first_error.find("/y: the body differs from the file at byte 5"), std::string::npos)
        << r.first_error;
    // Without --verify the same bytes are well-framed responses.
    c.expected.clear();
    const load::LoadResult plain = load::run_load(c);
    EXPECT_EQ(plain.total_errors(), 0u) << plain.first_error;
}

}  // namespace
