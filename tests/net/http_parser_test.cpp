// The HTTP/1.1 request parser: what it accepts, what it refuses and with which
// status, and that no input (the fuzz corpus replayed here) makes it read
// outside its bytes or claim more than it was given.
#include "net/http.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

using namespace uringkit::net;
using namespace std::string_view_literals;

namespace {
const HttpLimits limits{};
ParseResult parse(std::string_view s) {
    return parse_request(s, limits);
}
}  // namespace

TEST(HttpParser, SimpleGet) {
    const std::string req = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    const auto r = parse(req);
    ASSERT_EQ(r.status, ParseStatus::Complete);
    EXPECT_EQ(r.request.method, Method::Get);
    EXPECT_EQ(r.request.target, "/");
    EXPECT_EQ(r.request.minor_version, 1);
    EXPECT_TRUE(r.request.keep_alive);
    EXPECT_EQ(r.request.head_bytes, req.size());
    EXPECT_EQ(r.request.content_length, 0u);
}

TEST(HttpParser, StopsAtTheEndOfTheFirstHead) {
    const std::string one = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
    const std::string two = one + "GET /b HTTP/1.1\r\nHost: x\r\n\r\n";
    const auto r = parse(two);
    ASSERT_EQ(r.status, ParseStatus::Complete);
    EXPECT_EQ(r.request.target, "/a");
    EXPECT_EQ(r.request.head_bytes, one.size());
}

// RFC 9112 3.2.2: a server accepts the absolute-form and takes its path;
// "http://host" with no path means "/".  The target stays inside the head.
TEST(HttpParser, AbsoluteFormTargetIsItsPath) {
    const std::pair<std::string_view, std::string_view> cases[] = {
        {"http://x/", "/"},
        {"http://x/a/b?c=1", "/a/b?c=1"},
        {"HTTP://example.com:8080/stats", "/stats"},
        {"https://user@x/stats?q", "/stats?q"},
        {"http://x", "/"},
        {"http://x:80", "/"},
        {"http://x?q=1", "/"},
        {"coap+tcp://x/y", "/y"},
        {"*", "*"},      // asterisk-form: not absolute, left as it is
        {"x/y", "x/y"},  // no "://": left as it is (404)
        {"http:/x", "http:/x"},
        {"1http://x/y", "1http://x/y"},
    };
    for (const auto& [target, path] : cases) {
        const std::string req = "GET " + std::string(target) + " HTTP/1.1\r\nHost: x\r\n\r\n";
        const auto r = parse(req);
        ASSERT_EQ(r.status, ParseStatus::Complete) << target;
        EXPECT_EQ(r.request.target, path) << target;
        EXPECT_GE(r.request.target.data(), req.data()) << target;
        EXPECT_LE(r.request.target.data() + r.request.target.size(),
                  req.data() + r.request.head_bytes)
            << target;
    }
}

TEST(HttpParser, EveryPrefixIsIncomplete) {
    const std::string req = "POST /upload?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n";
    for (std::size_t n = 0; n < req.size(); ++n)
        EXPECT_EQ(parse(std::string_view(req).substr(0, n)).status, ParseStatus::Incomplete) << n;
    const auto r = parse(req);
    ASSERT_EQ(r.status, ParseStatus::Complete);
    EXPECT_EQ(r.request.method, Method::Post);
    EXPECT_EQ(r.request.content_length, 5u);
}

TEST(HttpParser, BareLineFeedsAndLeadingEmptyLines) {
    const auto r = parse("\r\n\nGET / HTTP/1.1\nHost: x\n\n");
    ASSERT_EQ(r.status, ParseStatus::Complete);
    EXPECT_EQ(r.request.head_bytes, 3u + 15 + 8 + 1);
}

TEST(HttpParser, ConnectionSemantics) {
    EXPECT_FALSE(
        parse("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").request.keep_alive);
    EXPECT_FALSE(parse("GET / HTTP/1.1\r\nHost: x\r\nconnection: Upgrade, CLOSE\r\n\r\n")
                     .request.keep_alive);
    EXPECT_FALSE(parse("GET / HTTP/1.0\r\n\r\n").request.keep_alive);
    const auto r = parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    EXPECT_TRUE(r.request.keep_alive);
    EXPECT_EQ(r.request.minor_version, 0);
}

TEST(HttpParser, Refusals) {
    EXPECT_EQ(parse("\x16\x03\x01garbage\r\n\r\n").status, ParseStatus::BadRequest);
    EXPECT_EQ(parse("\x16\x03").status, ParseStatus::BadRequest)
        << "garbage fails before the head ends";
    EXPECT_EQ(parse("GET /\r\n\r\n").status, ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET  / HTTP/1.1\r\nHost: x\r\n\r\n").status, ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTP/1.1 \r\n\r\n").status, ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTQ/1.1\r\n\r\n").status, ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTP/1.1\r\nHost: x\r\nNo colon\r\n\r\n").status,
              ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTP/1.1\r\nHost: x\r\nName : v\r\n\r\n").status,
              ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTP/1.1\r\nHost: x\r\nA: b\r\n folded\r\n\r\n").status,
              ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTP/1.1\r\nHost: x\r\nA: b\x01\r\n\r\n").status,
              ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTP/1.1\r\nHost: x\r\nA: b\rc\r\n\r\n").status,
              ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n").status,
              ParseStatus::BadRequest);
    EXPECT_EQ(
        parse("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n").status,
        ParseStatus::BadRequest);
    EXPECT_EQ(
        parse("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n").status,
        ParseStatus::BadRequest);
    EXPECT_EQ(
        parse(
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n")
            .status,
        ParseStatus::BadRequest)
        << "TE with CL is request smuggling";
    EXPECT_EQ(
        parse("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n").status,
        ParseStatus::NotImplemented);
    EXPECT_EQ(parse("BREW / HTTP/1.1\r\nHost: x\r\n\r\n").status, ParseStatus::NotImplemented);
    EXPECT_EQ(parse("DELETE / HTTP/1.1\r\nHost: x\r\n\r\n").status, ParseStatus::NotImplemented);
    EXPECT_EQ(parse("GET / HTTP/2.0\r\n\r\n").status, ParseStatus::VersionNotSupported);
    EXPECT_EQ(parse("GET / HTTP/0.9\r\n\r\n").status, ParseStatus::BadRequest);
}

TEST(HttpParser, Limits) {
    const std::string big_header =
        "GET / HTTP/1.1\r\nHost: x\r\nX: " + std::string(9000, 'a') + "\r\n\r\n";
    EXPECT_EQ(parse(big_header).status, ParseStatus::HeadTooLarge);
    // Refused without waiting for the end of the head.
    EXPECT_EQ(parse(std::string_view(big_header).substr(0, 8200)).status,
              ParseStatus::HeadTooLarge);
    // Just under the limit is fine.
    const std::string fits =
        "GET / HTTP/1.1\r\nHost: x\r\nX: " + std::string(8192 - 32, 'a') + "\r\n\r\n";
    ASSERT_EQ(fits.size(), 8192u);
    EXPECT_EQ(parse(fits).status, ParseStatus::Complete);
    EXPECT_EQ(parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1048577\r\n\r\n").status,
              ParseStatus::BodyTooLarge);
    EXPECT_EQ(parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n").status,
              ParseStatus::Complete);
}

TEST(HttpResponse, Bytes) {
    std::string out;
    // RFC 9110 5.6.7's own example: 784111777 is Sun, 06 Nov 1994 08:49:37 GMT.
    append_response(out, 200, "text/plain", "hello", "", false, 784111777);
    EXPECT_EQ(out,
              "HTTP/1.1 200 OK\r\nServer: uringkit\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
              "Content-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello");
    out.clear();
    append_response(out, 431, "text/plain", "x", "close", true, 1764547200);
    EXPECT_EQ(out,
              "HTTP/1.1 431 Request Header Fields Too Large\r\nServer: uringkit\r\nDate: Mon, 01 "
              "Dec 2025 00:00:00 GMT\r\n"
              "Content-Type: text/plain\r\nContent-Length: 1\r\nConnection: close\r\n\r\n");
    const std::string body = make_body(128);
    EXPECT_EQ(body.size(), 128u);
    EXPECT_EQ(body.find_first_of("\"\\'\r"), std::string::npos)
        << "must fit an nginx `return 200 \"...\"`";
}

TEST(HttpParser, Http11NeedsExactlyOneHost) {
    // RFC 9112 3.2: 400 for an HTTP/1.1 request without Host or with two.
    EXPECT_EQ(parse("GET / HTTP/1.1\r\n\r\n").status, ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n").status,
              ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTP/1.1\r\nHOST: a\r\n\r\n").status, ParseStatus::Complete);
    EXPECT_EQ(parse("GET / HTTP/1.1\r\nHost:\r\n\r\n").status, ParseStatus::Complete)
        << "an empty Host is allowed";
    EXPECT_EQ(parse("GET / HTTP/1.0\r\n\r\n").status, ParseStatus::Complete)
        << "HTTP/1.0 has no Host rule";
}

TEST(HttpParser, RequestLineOverTheLimitIs414) {
    const auto line = [](std::size_t bytes) {  // a request line of exactly `bytes`
        return "GET /" + std::string(bytes - 14, 'a') + " HTTP/1.1";
    };
    ASSERT_EQ(line(4096).size(), 4096u);
    EXPECT_EQ(parse(line(4096) + "\r\nHost: x\r\n\r\n").status, ParseStatus::Complete);
    EXPECT_EQ(parse(line(4096) + "\nHost: x\n\n").status, ParseStatus::Complete);
    EXPECT_EQ(parse(line(4097) + "\r\nHost: x\r\n\r\n").status, ParseStatus::UriTooLong);
    // Refused as soon as the limit passes without a line end, before 431.
    EXPECT_EQ(parse(std::string("GET /") + std::string(4092, 'a')).status, ParseStatus::UriTooLong);
    EXPECT_EQ(parse(std::string("GET /") + std::string(4091, 'a')).status, ParseStatus::Incomplete);
    EXPECT_EQ(parse(std::string("GET /") + std::string(9000, 'a')).status, ParseStatus::UriTooLong);
    // A long header is still 431, not 414.
    EXPECT_EQ(parse("GET / HTTP/1.1\r\nX: " + std::string(9000, 'a')).status,
              ParseStatus::HeadTooLarge);
}

TEST(HttpParser, ChunkedRequestsAreAccepted) {
    const auto r =
        parse("POST /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n5\r\nhello");
    ASSERT_EQ(r.status, ParseStatus::Complete);
    EXPECT_TRUE(r.request.chunked);
    EXPECT_EQ(r.request.content_length, 0u);
    EXPECT_EQ(r.request.head_bytes, 58u) << "the body is not part of the head";
    EXPECT_FALSE(parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n").request.chunked);
    // Transfer-Encoding in HTTP/1.0, or empty, is faulty (RFC 9112 6.1).
    EXPECT_EQ(parse("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n").status,
              ParseStatus::BadRequest);
    EXPECT_EQ(parse("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\r\n\r\n").status,
              ParseStatus::BadRequest);
    // A coding this server does not know: 501.
    EXPECT_EQ(parse("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n").status,
              ParseStatus::NotImplemented);
    EXPECT_EQ(parse("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "
                    "chunked\r\nTransfer-Encoding: chunked\r\n\r\n")
                  .status,
              ParseStatus::NotImplemented);
}

// Feeds `body` to a ChunkedBody in pieces of `step` bytes; returns the final
// status and what was left after it.
std::pair<ChunkedBody::Status, std::string> read_chunked(std::string_view body, std::size_t step,
                                                         const HttpLimits& l = limits) {
    ChunkedBody c(l);
    for (std::size_t at = 0; at < body.size(); at += step) {
        std::string_view piece = body.substr(at, step);
        const auto st = c.consume(piece);
        if (st != ChunkedBody::Status::NeedMore)
            return {st, std::string(piece) +
                            std::string(body.substr(std::min(body.size(), at + step)))};
        EXPECT_TRUE(piece.empty());
    }
    return {ChunkedBody::Status::NeedMore, ""};
}

TEST(ChunkedBody, ReadsEveryPartAndStopsAtTheEnd) {
    const std::string body =
        "5\r\nhello\r\n1A;name=\"v\";x\r\nabcdefghijklmnopqrstuvwxyz\r\n000\r\nTrailer: t\r\nX: "
        "y\r\n\r\n";
    for (std::size_t step : {1u, 2u, 3u, 7u, 1000u}) {
        const auto [st, rest] = read_chunked(body + "GET / HTTP/1.1\r\n", step);
        EXPECT_EQ(st, ChunkedBody::Status::Done) << step;
        EXPECT_EQ(rest, "GET / HTTP/1.1\r\n") << step;
    }
    EXPECT_EQ(read_chunked("0\n\n", 1).first, ChunkedBody::Status::Done) << "bare LF line ends";
    EXPECT_EQ(read_chunked("5\r\nhello\r\n0\r\n", 1).first, ChunkedBody::Status::NeedMore);
}

TEST(ChunkedBody, RefusesMalformedAndOversizedBodies) {
    for (const char* bad : {"x\r\n", "\r\n", "5\r\nhelloX", "5\rhello", "5\r\nhello\r\n0\r\n\rX",
                            "-1\r\n", "5\x01\r\n"})
        EXPECT_EQ(read_chunked(bad, 1).first, ChunkedBody::Status::Bad) << bad;
    // 1 MiB is the limit: exactly that much is fine, a byte more is not.
    const std::string mib(1 << 20, 'b');
    EXPECT_EQ(read_chunked("100000\r\n" + mib + "\r\n0\r\n\r\n", 4096).first,
              ChunkedBody::Status::Done);
    EXPECT_EQ(read_chunked("80000\r\n" + mib.substr(0, 1 << 19) + "\r\n80001\r\n", 4096).first,
              ChunkedBody::Status::TooLarge);
    // Refused from the size alone, and a size that would overflow 64 bits too.
    EXPECT_EQ(read_chunked("100001\r\n", 1).first, ChunkedBody::Status::TooLarge);
    EXPECT_EQ(read_chunked("fffffffffffffffffffff", 1).first, ChunkedBody::Status::TooLarge);
    // An endless extension or trailer section is not waited for.
    EXPECT_EQ(read_chunked("5;" + std::string(9000, 'e'), 100).first, ChunkedBody::Status::Bad);
    EXPECT_EQ(read_chunked("0\r\nT: " + std::string(9000, 't'), 100).first,
              ChunkedBody::Status::Bad);
}

// Every file of the fuzz corpus, and random mutations of it: the parser
// either refuses or reports a head that lies inside the input.
TEST(HttpParser, CorpusReplay) {
    const auto dir =
        std::filesystem::path(__FILE__).parent_path().parent_path() / "fuzz" / "http_corpus";
    ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
    std::vector<std::string> seeds;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        std::ifstream in(e.path(), std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        seeds.push_back(ss.str());
    }
    ASSERT_GE(seeds.size(), 8u);
    std::mt19937 rng(12345);
    std::size_t complete = 0;
    auto check = [&](const std::string& s) {
        const auto r = parse(s);
        if (r.status == ParseStatus::Complete) {
            ++complete;
            ASSERT_LE(r.request.head_bytes, s.size());
            ASSERT_GE(r.request.target.data(), s.data());
            ASSERT_LE(r.request.target.data() + r.request.target.size(), s.data() + s.size());
            ASSERT_LE(r.request.content_length, limits.max_body_bytes);
        }
    };
    for (const auto& s : seeds) {
        check(s);
        for (int i = 0; i < 2000; ++i) {
            std::string m = s;
            const int edits = 1 + static_cast<int>(rng() % 4);
            for (int e = 0; e < edits && !m.empty(); ++e) {
                const std::size_t at = rng() % m.size();
                switch (rng() % 3) {
                    case 0:
                        m[at] = static_cast<char>(rng() & 0xff);
                        break;
                    case 1:
                        m.erase(at, 1 + rng() % 8);
                        break;
                    default:
                        m.insert(at, std::string(1 + rng() % 4, "\r\n: \t"[rng() % 5]));
                        break;
                }
            }
            check(m);
        }
    }
    EXPECT_GT(complete, seeds.size()) << "the seeds hold valid requests";
}
