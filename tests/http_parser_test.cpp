// The HTTP/1.1 request parser: what it accepts, what it refuses and with which
// status, and that no input (the fuzz corpus replayed here) makes it read
// outside its bytes or claim more than it was given.
#include "uringkit/net/http.hpp"

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
ParseResult parse(std::string_view s) { return parse_request(s, limits); }
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
    const std::string one = "GET /a HTTP/1.1\r\n\r\n";
    const std::string two = one + "GET /b HTTP/1.1\r\n\r\n";
    const auto r = parse(two);
    ASSERT_EQ(r.status, ParseStatus::Complete);
    EXPECT_EQ(r.request.target, "/a");
    EXPECT_EQ(r.request.head_bytes, one.size());
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
    EXPECT_FALSE(parse("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").request.keep_alive);
    EXPECT_FALSE(parse("GET / HTTP/1.1\r\nconnection: Upgrade, CLOSE\r\n\r\n").request.keep_alive);
    EXPECT_FALSE(parse("GET / HTTP/1.0\r\n\r\n").request.keep_alive);
    const auto r = parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    EXPECT_TRUE(r.request.keep_alive);
    EXPECT_EQ(r.request.minor_version, 0);
}

TEST(HttpParser, Refusals) {
    EXPECT_EQ(parse("\x16\x03\x01garbage\r\n\r\n").status, ParseStatus::BadRequest);
    EXPECT_EQ(parse("\x16\x03").status, ParseStatus::BadRequest) << "garbage fails before the head ends";
    EXPECT_EQ(parse("GET /\r\n\r\n").status, ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET  / HTTP/1.1\r\n\r\n").status, ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTP/1.1 \r\n\r\n").status, ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTQ/1.1\r\n\r\n").status, ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTP/1.1\r\nNo colon\r\n\r\n").status, ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTP/1.1\r\nName : v\r\n\r\n").status, ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n").status, ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTP/1.1\r\nA: b\x01\r\n\r\n").status, ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTP/1.1\r\nA: b\rc\r\n\r\n").status, ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n").status, ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n").status,
              ParseStatus::BadRequest);
    EXPECT_EQ(parse("GET / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n").status,
              ParseStatus::BadRequest);
    EXPECT_EQ(parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n").status,
              ParseStatus::BadRequest)
        << "TE with CL is request smuggling";
    EXPECT_EQ(parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").status, ParseStatus::NotImplemented);
    EXPECT_EQ(parse("BREW / HTTP/1.1\r\n\r\n").status, ParseStatus::NotImplemented);
    EXPECT_EQ(parse("DELETE / HTTP/1.1\r\n\r\n").status, ParseStatus::NotImplemented);
    EXPECT_EQ(parse("GET / HTTP/2.0\r\n\r\n").status, ParseStatus::VersionNotSupported);
    EXPECT_EQ(parse("GET / HTTP/0.9\r\n\r\n").status, ParseStatus::BadRequest);
}

TEST(HttpParser, Limits) {
    const std::string big_header = "GET / HTTP/1.1\r\nX: " + std::string(9000, 'a') + "\r\n\r\n";
    EXPECT_EQ(parse(big_header).status, ParseStatus::HeadTooLarge);
    // Refused without waiting for the end of the head.
    EXPECT_EQ(parse(std::string_view(big_header).substr(0, 8200)).status, ParseStatus::HeadTooLarge);
    // Just under the limit is fine.
    const std::string fits = "GET / HTTP/1.1\r\nX: " + std::string(8192 - 23, 'a') + "\r\n\r\n";
    ASSERT_EQ(fits.size(), 8192u);
    EXPECT_EQ(parse(fits).status, ParseStatus::Complete);
    EXPECT_EQ(parse("POST / HTTP/1.1\r\nContent-Length: 1048577\r\n\r\n").status, ParseStatus::BodyTooLarge);
    EXPECT_EQ(parse("POST / HTTP/1.1\r\nContent-Length: 1048576\r\n\r\n").status, ParseStatus::Complete);
}

TEST(HttpResponse, Bytes) {
    std::string out;
    append_response(out, 200, "text/plain", "hello", "", false);
    EXPECT_EQ(out, "HTTP/1.1 200 OK\r\nServer: uringkit\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello");
    out.clear();
    append_response(out, 431, "text/plain", "x", "close", true);
    EXPECT_EQ(out,
              "HTTP/1.1 431 Request Header Fields Too Large\r\nServer: uringkit\r\nContent-Type: text/plain\r\n"
              "Content-Length: 1\r\nConnection: close\r\n\r\n");
    const std::string body = make_body(128);
    EXPECT_EQ(body.size(), 128u);
    EXPECT_EQ(body.find_first_of("\"\\'\r"), std::string::npos) << "must fit an nginx `return 200 \"...\"`";
}

// Every file of the fuzz corpus, and random mutations of it: the parser
// either refuses or reports a head that lies inside the input.
TEST(HttpParser, CorpusReplay) {
    const auto dir = std::filesystem::path(__FILE__).parent_path() / "fuzz" / "http_corpus";
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
                    case 0: m[at] = static_cast<char>(rng() & 0xff); break;
                    case 1: m.erase(at, 1 + rng() % 8); break;
                    default: m.insert(at, std::string(1 + rng() % 4, "\r\n: \t"[rng() % 5])); break;
                }
            }
            check(m);
        }
    }
    EXPECT_GT(complete, seeds.size()) << "the seeds hold valid requests";
}
