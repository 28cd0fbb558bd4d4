// The response reader of `uringkit load`: heads parsed by the rules the
// request parser uses, bodies framed by Content-Length or chunked coding,
// and the same responses whatever sizes the bytes arrive in.
#include <gtest/gtest.h>

#include "net/http_response.hpp"

#include <string>
#include <vector>

using namespace uringkit::net;

namespace {

struct Framed {
    std::vector<int> statuses;
    bool bad = false;
    std::string error;
};

// Feeds `stream` in pieces of `piece` bytes.
Framed frame(const std::string& stream, std::size_t piece) {
    ResponseReader reader;
    Framed f;
    for (std::size_t at = 0; at < stream.size() && !f.bad; at += piece) {
        std::string_view data = std::string_view(stream).substr(at, piece);
        while (!data.empty()) {
            const auto st = reader.next(data);
            if (st == ResponseReader::Status::NeedMore) break;
            if (st == ResponseReader::Status::Bad) {
                f.bad = true;
                f.error = reader.error();
                break;
            }
            f.statuses.push_back(reader.head().status);
        }
    }
    return f;
}

TEST(HttpResponse, HeadFields) {
    ResponseHead h;
    const char* why = "";
    ASSERT_EQ(
        parse_response_head(
            "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nConnection: keep-alive\r\n\r\n", h, &why),
        HeadStatus::Complete);
    EXPECT_EQ(h.status, 200);
    EXPECT_TRUE(h.has_length);
    EXPECT_EQ(h.content_length, 12u);
    EXPECT_FALSE(h.close);
    ASSERT_EQ(parse_response_head("HTTP/1.0 404 Not Found\r\n\r\n", h, &why), HeadStatus::Complete);
    EXPECT_EQ(h.status, 404);
    EXPECT_TRUE(h.close);  // HTTP/1.0 without keep-alive
    ASSERT_EQ(parse_response_head("HTTP/1.1 204\r\nconnection: Close\r\n\r\n", h, &why),
              HeadStatus::Complete);
    EXPECT_TRUE(h.close);
    ASSERT_EQ(
        parse_response_head(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", h, &why),
        HeadStatus::Complete);
    EXPECT_TRUE(h.chunked);
    EXPECT_FALSE(h.has_length);
    EXPECT_EQ(parse_response_head("HTTP/1.1 200 OK\r\nContent-", h, &why), HeadStatus::Incomplete);
}

TEST(HttpResponse, BadHeads) {
    ResponseHead h;
    const char* why = "";
    for (const char* bad :
         {"HTTX/1.1 200 OK\r\n\r\n", "HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n",
          "HTTP/2.0 200 OK\r\n\r\n", "HTTP/1.1 099 X\r\n\r\n",
          "HTTP/1.1 200 OK\r\nBad Name: 1\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n",
          "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
          "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "hello"}) {
        EXPECT_EQ(parse_response_head(bad, h, &why), HeadStatus::Bad) << bad;
        EXPECT_STRNE(why, "") << bad;
    }
}

TEST(HttpResponse, FramesTheSameResponsesInPiecesOfAnySize) {
    const std::string stream =
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
        "HTTP/1.1 100 Continue\r\n\r\n"
        "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nTrailer: "
        "t\r\n\r\n"
        "HTTP/1.1 204 No Content\r\n\r\n"
        "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n"
        "HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n";
    const std::vector<int> want{200, 100, 201, 204, 304, 500};
    for (std::size_t piece = 1; piece <= stream.size(); ++piece) {
        const Framed f = frame(stream, piece);
        EXPECT_FALSE(f.bad) << piece << ": " << f.error;
        EXPECT_EQ(f.statuses, want) << "pieces of " << piece;
    }
}

TEST(HttpResponse, WrongLengthsAndUnframedBodiesAreBad) {
    // 5 announced, 11 sent: the rest is no status line.
    Framed f = frame("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello world", 64);
    EXPECT_EQ(f.statuses, std::vector<int>{200});
    EXPECT_TRUE(f.bad);
    // A body delimited only by the close cannot be framed on a kept connection.
    f = frame("HTTP/1.1 200 OK\r\n\r\nbody", 64);
    EXPECT_TRUE(f.bad);
    EXPECT_NE(f.error.find("Content-Length"), std::string::npos);
    // A malformed chunk size.
    f = frame("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 64);
    EXPECT_TRUE(f.bad);
}

TEST(HttpResponse, HeadLimit) {
    std::string big = "HTTP/1.1 200 OK\r\nX: " + std::string(ResponseReader::kMaxHead, 'a');
    for (std::size_t piece : {std::size_t{100}, big.size()}) {
        const Framed f = frame(big, piece);
        EXPECT_TRUE(f.bad) << piece;
        EXPECT_NE(f.error.find("16 KiB"), std::string::npos) << f.error;
    }
}

TEST(HttpResponse, MidResponseAndReset) {
    ResponseReader r;
    EXPECT_FALSE(r.mid_response());
    std::string_view d = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nab";
    EXPECT_EQ(r.next(d), ResponseReader::Status::NeedMore);
    EXPECT_TRUE(r.mid_response());
    r.reset();
    EXPECT_FALSE(r.mid_response());
    d = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    EXPECT_EQ(r.next(d), ResponseReader::Status::Complete);
    EXPECT_FALSE(r.mid_response());
}

}  // namespace

namespace {

// Responses to HEAD requests end with their head: the Content-Length they
// announce (that of the GET) is not read as a body, across reset() too.
TEST(HttpResponse, HeadRequestResponsesEndWithTheirHead) {
    ResponseReader reader;
    reader.set_head_requests(true);
    const std::string two =
        "HTTP/1.1 200 OK\r\nContent-Length: 128\r\n\r\n"
        "HTTP/1.1 404 Not Found\r\nContent-Length: 10\r\n\r\n";
    for (int round = 0; round < 2; ++round) {
        std::string_view data = two;
        ASSERT_EQ(reader.next(data), ResponseReader::Status::Complete);
        EXPECT_EQ(reader.head().status, 200);
        ASSERT_EQ(reader.next(data), ResponseReader::Status::Complete);
        EXPECT_EQ(reader.head().status, 404);
        EXPECT_TRUE(data.empty());
        EXPECT_FALSE(reader.mid_response());
        reader.reset();
    }
}

}  // namespace
