// serve --root's shared decisions: the target decoded once (NUL and bad
// encoding refused), mime.types lookups, and the response plan for GET and
// HEAD of a file: validators, 304, 206/416 ranges and If-Range.
#include <gtest/gtest.h>

#include "net/static_files.hpp"

#include <cerrno>
#include <string>

using namespace uringkit::net;

namespace {

constexpr std::time_t kNow = 1'700'000'000;

FileMeta meta(std::uint64_t size = 1000) {
    FileMeta m;
    m.ino = 0xabc;
    m.size = size;
    m.mtime_sec = 1'600'000'000;
    m.mtime_nsec = 5;
    return m;
}

std::string date_of(std::time_t t) {
    char d[kHttpDateBytes];
    format_http_date(t, d);
    return std::string(d, kHttpDateBytes);
}

bool has(const std::string& head, const std::string& line) {
    return head.find("\r\n" + line + "\r\n") != std::string::npos;
}

TEST(StaticFiles, DecodeTargetOnce) {
    EXPECT_EQ(decode_target("/"), "");
    EXPECT_EQ(decode_target("/a/b.html?x=1"), "a/b.html");
    EXPECT_EQ(decode_target("/%2e%2e/secret"), "../secret");  // the kernel refuses it, not us
    EXPECT_EQ(decode_target("/%2f..%2fsecret"), "/../secret");
    EXPECT_EQ(decode_target("/a%2520b"), "a%20b");  // once, not twice
    EXPECT_EQ(decode_target("/%41%7a"), "Az");
}

TEST(StaticFiles, DecodeTargetRefusesNulAndBadEncoding) {
    for (const char* t : {"/a%00b", "/%00", "/%", "/%4", "/%zz", "/%g1", "*", "", "a/b"})
        EXPECT_FALSE(decode_target(t).has_value()) << t;
}

TEST(StaticFiles, OpenErrors) {
    EXPECT_EQ(open_error_status(-EACCES), 403);
    EXPECT_EQ(open_error_status(EPERM), 403);
    EXPECT_EQ(open_error_status(-ENXIO), 403);  // a socket in the root
    EXPECT_EQ(open_error_status(-ENOENT), 404);
    EXPECT_EQ(open_error_status(-ELOOP), 404);
    EXPECT_EQ(open_error_status(-EXDEV), 404);
    EXPECT_EQ(open_error_status(-ENOTDIR), 404);
}

TEST(StaticFiles, MimeTypes) {
    const auto m = MimeTypes::parse(
        "# comment\n"
        "text/html\t\t\t\t\thtml htm shtml\n"
        "text/css css\r\n"
        "image/png   png # trailing\n"
        "application/x-empty\n"
        "text/x-other html\n");
    EXPECT_EQ(m.lookup("index.html"), "text/html");  // the first type named wins
    EXPECT_EQ(m.lookup("dir/a.HTM"), "text/html");
    EXPECT_EQ(m.lookup("s.css"), "text/css");
    EXPECT_EQ(m.lookup("p.png"), "image/png");
    EXPECT_EQ(m.lookup("noext"), MimeTypes::kDefault);
    EXPECT_EQ(m.lookup("a.unknownext"), MimeTypes::kDefault);
    EXPECT_EQ(m.lookup("a.d/noext"), MimeTypes::kDefault);
}

TEST(StaticFiles, SystemMimeTypes) {
    const auto m = MimeTypes::load();
    if (m.size() == 0) GTEST_SKIP() << "no /etc/mime.types (package media-types)";
    EXPECT_EQ(m.lookup("a.html"), "text/html");
    EXPECT_EQ(m.lookup("a.css"), "text/css");
    EXPECT_EQ(m.lookup("a.png"), "image/png");
}

TEST(StaticFiles, FindHeader) {
    const std::string head =
        "GET /x HTTP/1.1\r\nHost: h\r\nrange:  bytes=1-2 \r\nIF-NONE-MATCH: \"a\"\r\n\r\n";
    const auto h = file_request_headers(head);
    EXPECT_EQ(h.range, "bytes=1-2");
    EXPECT_EQ(h.if_none_match, "\"a\"");
    EXPECT_TRUE(h.if_modified_since.empty());
    EXPECT_TRUE(find_header("GET /Range: x HTTP/1.1\r\n\r\n", "Range").empty());
}

TEST(StaticFiles, HttpDateRoundTrip) {
    EXPECT_EQ(parse_http_date(date_of(kNow)), kNow);
    EXPECT_EQ(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777);
    EXPECT_FALSE(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"));
    EXPECT_FALSE(parse_http_date("Sun, 06 Xyz 1994 08:49:37 GMT"));
    EXPECT_FALSE(parse_http_date(""));
}

TEST(StaticFiles, WholeFile) {
    const auto p = plan_file_response(Method::Get, meta(), {}, "text/html", "", kNow);
    EXPECT_EQ(p.status, 200);
    EXPECT_EQ(p.offset, 0u);
    EXPECT_EQ(p.length, 1000u);
    EXPECT_TRUE(p.head.starts_with("HTTP/1.1 200 OK\r\n"));
    EXPECT_TRUE(has(p.head, "Content-Length: 1000"));
    EXPECT_TRUE(has(p.head, "Content-Type: text/html"));
    EXPECT_TRUE(has(p.head, "Accept-Ranges: bytes"));
    EXPECT_TRUE(has(p.head, "ETag: " + make_etag(meta())));
    EXPECT_EQ(make_etag(meta()), "\"abc-3e8-16345785d8a00005\"");
    EXPECT_TRUE(has(p.head, "Last-Modified: " + date_of(1'600'000'000)));
    EXPECT_TRUE(has(p.head, "Date: " + date_of(kNow)));
    EXPECT_TRUE(p.head.ends_with("\r\n\r\n"));

    const auto h = plan_file_response(Method::Head, meta(), {}, "text/html", "close", kNow);
    EXPECT_EQ(h.status, 200);
    EXPECT_EQ(h.length, 0u);  // HEAD: the same head, no body
    EXPECT_TRUE(has(h.head, "Content-Length: 1000"));
    EXPECT_TRUE(has(h.head, "Connection: close"));
}

TEST(StaticFiles, NotModified) {
    const auto etag = make_etag(meta());
    FileRequestHeaders h;
    h.if_none_match = etag;
    auto p = plan_file_response(Method::Get, meta(), h, "t", "", kNow);
    EXPECT_EQ(p.status, 304);
    EXPECT_EQ(p.length, 0u);
    EXPECT_EQ(p.head.find("Content-Length"), std::string::npos);

    const std::string list = "\"other\", W/" + etag;  // string_views below name these
    h.if_none_match = list;
    EXPECT_EQ(plan_file_response(Method::Get, meta(), h, "t", "", kNow).status, 304);
    h.if_none_match = "*";
    EXPECT_EQ(plan_file_response(Method::Get, meta(), h, "t", "", kNow).status, 304);

    // If-None-Match takes precedence over If-Modified-Since.
    h.if_none_match = "\"other\"";
    const std::string now = date_of(kNow), at = date_of(1'600'000'000),
                      before = date_of(1'599'999'999);
    h.if_modified_since = now;
    EXPECT_EQ(plan_file_response(Method::Get, meta(), h, "t", "", kNow).status, 200);

    FileRequestHeaders s;
    s.if_modified_since = at;
    EXPECT_EQ(plan_file_response(Method::Head, meta(), s, "t", "", kNow).status, 304);
    s.if_modified_since = before;
    EXPECT_EQ(plan_file_response(Method::Get, meta(), s, "t", "", kNow).status, 200);
    s.if_modified_since = "garbage";
    EXPECT_EQ(plan_file_response(Method::Get, meta(), s, "t", "", kNow).status, 200);
}

FilePlan ranged(std::string_view range, std::uint64_t size = 1000, std::string_view if_range = {}) {
    FileRequestHeaders h;
    h.range = range;
    h.if_range = if_range;
    return plan_file_response(Method::Get, meta(size), h, "t", "", kNow);
}

TEST(StaticFiles, Ranges) {
    auto p = ranged("bytes=10-19");
    EXPECT_EQ(p.status, 206);
    EXPECT_EQ(p.offset, 10u);
    EXPECT_EQ(p.length, 10u);
    EXPECT_TRUE(has(p.head, "Content-Range: bytes 10-19/1000"));
    EXPECT_TRUE(has(p.head, "Content-Length: 10"));

    p = ranged("bytes=990-");
    EXPECT_EQ(p.status, 206);
    EXPECT_EQ(p.offset, 990u);
    EXPECT_EQ(p.length, 10u);

    p = ranged("bytes=-5");
    EXPECT_EQ(p.status, 206);
    EXPECT_EQ(p.offset, 995u);
    EXPECT_TRUE(has(p.head, "Content-Range: bytes 995-999/1000"));

    p = ranged("bytes=-5000");  // more than the file: all of it
    EXPECT_EQ(p.status, 206);
    EXPECT_EQ(p.offset, 0u);
    EXPECT_EQ(p.length, 1000u);

    p = ranged("bytes=900-5000");  // the end is clipped
    EXPECT_EQ(p.length, 100u);
    EXPECT_TRUE(has(p.head, "Content-Range: bytes 900-999/1000"));
}

TEST(StaticFiles, UnsatisfiableRanges) {
    for (const char* r : {"bytes=1000-", "bytes=5000-6000", "bytes=-0"}) {
        const auto p = ranged(r);
        EXPECT_EQ(p.status, 416) << r;
        EXPECT_EQ(p.length, 0u);
        EXPECT_TRUE(has(p.head, "Content-Range: bytes */1000")) << r;
        EXPECT_TRUE(has(p.head, "Content-Length: 0"));
    }
    EXPECT_EQ(ranged("bytes=0-", 0).status, 416);
}

TEST(StaticFiles, IgnoredRangesSendTheWholeFile) {
    for (const char* r : {"bytes=0-1,5-6", "items=0-1", "bytes=5-1", "bytes=x-", "bytes=", "0-1"}) {
        const auto p = ranged(r);
        EXPECT_EQ(p.status, 200) << r;
        EXPECT_EQ(p.length, 1000u) << r;
    }
}

TEST(StaticFiles, IfRange) {
    const auto etag = make_etag(meta());
    EXPECT_EQ(ranged("bytes=0-0", 1000, etag).status, 206);
    EXPECT_EQ(ranged("bytes=0-0", 1000, "\"stale\"").status, 200);
    EXPECT_EQ(ranged("bytes=0-0", 1000, date_of(1'600'000'000)).status, 206);
    EXPECT_EQ(ranged("bytes=0-0", 1000, date_of(1'600'000'001)).status, 200);
    EXPECT_EQ(ranged("bytes=0-0", 1000, "W/" + etag).status, 200);  // weak never matches
}

TEST(StaticFiles, RedirectAndMethodNotAllowed) {
    const auto r = redirect_response("/dir/", "", false, kNow);
    EXPECT_TRUE(r.starts_with("HTTP/1.1 301 Moved Permanently\r\n"));
    EXPECT_TRUE(has(r, "Location: /dir/"));
    EXPECT_TRUE(r.ends_with("\r\n\r\nmoved\n"));
    EXPECT_TRUE(redirect_response("/dir/", "", true, kNow).ends_with("\r\n\r\n"));

    const auto m = method_not_allowed_response("close", kNow);
    EXPECT_TRUE(m.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"));
    EXPECT_TRUE(has(m, "Allow: GET, HEAD"));
    EXPECT_TRUE(has(m, "Connection: close"));
}

}  // namespace
