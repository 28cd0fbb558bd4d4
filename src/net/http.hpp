// HTTP/1.1 request parsing and the response bytes, shared by every engine of
// `uringkit serve`, so the io_uring and epoll servers differ only in how bytes
// move, never in what they say.
//
// The parser is a pure function over a byte range: no allocation, no state, no
// copy.  It looks at a request head only once the whole head is present (the
// engines keep the bytes of an incomplete head), and a head longer than the
// limit is refused (431) without waiting for its end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>

namespace uringkit::net {

struct HttpLimits {
    std::size_t max_request_line_bytes = 4096;  // request line over this: 414 (nginx: 8k buffers)
    std::size_t max_head_bytes = 8192;          // request line + headers + blank line
    std::uint64_t max_body_bytes = 1 << 20;     // a body (Content-Length or chunked) over this: 413
};

enum class Method : std::uint8_t { Get, Head, Post, Other };

enum class ParseStatus : std::uint8_t {
    Complete,            // a whole head; `head_bytes` long
    Incomplete,          // need more bytes (and the head is still under the limit)
    BadRequest,          // 400: malformed, or HTTP/1.1 without exactly one Host
    UriTooLong,          // 414: the request line is over max_request_line_bytes
    HeadTooLarge,        // 431: no end of head within max_head_bytes
    BodyTooLarge,        // 413: Content-Length (or a chunked body) above max_body_bytes
    NotImplemented,      // 501: unknown method, or a transfer coding other than chunked
    VersionNotSupported  // 505: HTTP/2.0 and up on this port
};

struct HttpRequest {
    Method method = Method::Other;
    // Points into the parsed bytes; origin-form ("/a?b") even when the
    // request line had the absolute-form ("http://host/a?b", RFC 9112 3.2.2).
    std::string_view target;
    int minor_version = 1;   // HTTP/1.<minor>
    bool keep_alive = true;  // after Connection: and the version's default
    std::uint64_t content_length = 0;
    bool chunked = false;        // Transfer-Encoding: chunked; the body follows the head
    std::size_t head_bytes = 0;  // bytes of the head, blank line included
};

struct ParseResult {
    ParseStatus status;
    HttpRequest request;
};

// Parses the request head at the start of `data`.
ParseResult parse_request(std::string_view data, const HttpLimits& limits) noexcept;

// Reads a chunked request body (RFC 9112 7.1) as it arrives and discards it:
// chunk sizes, extensions, data and trailer fields, never holding a byte.  A
// body over the limit is refused as soon as a chunk size says so.
class ChunkedBody {
public:
    enum class Status : std::uint8_t { NeedMore, Done, Bad, TooLarge };
    explicit ChunkedBody(const HttpLimits& limits) noexcept
        : max_body_(limits.max_body_bytes), max_line_(limits.max_head_bytes) {}
    // Consumes from the front of `data`; on Done, `data` holds what follows
    // the body (the next pipelined request).
    Status consume(std::string_view& data) noexcept;

private:
    enum class State : std::uint8_t {
        SizeStart,
        Size,
        Ext,
        SizeLf,
        Data,
        DataCr,
        DataLf,
        TrailerStart,
        Trailer,
        TrailerLf,
        EndLf
    };
    State state_ = State::SizeStart;
    std::uint64_t max_body_;
    std::size_t max_line_;     // a chunk-size line or the trailer section at most this long
    std::uint64_t chunk_ = 0;  // the chunk size being read, then its bytes still to skip
    std::uint64_t total_ = 0;  // body bytes announced so far
    std::size_t line_ = 0;     // bytes of the current size line or of the trailer section
};

// RFC 9110 5.6.7 IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT": always this long.
inline constexpr std::size_t kHttpDateBytes = 29;
void format_http_date(std::time_t t, char (&out)[kHttpDateBytes]) noexcept;

// "HTTP/1.1 STATUS REASON\r\nServer: uringkit\r\nDate: DATE", the start of
// every response (the caller ends the Date line).
void append_status_and_date(std::string& out, int status, std::time_t now);

// The bytes of a whole response, with a Date header for `now` (RFC 9110
// 6.6.1: a server with a clock sends one).  `connection` is the Connection
// header value to send ("close", "keep-alive") or empty for none.
void append_response(std::string& out, int status, std::string_view content_type,
                     std::string_view body, std::string_view connection, bool head_only,
                     std::time_t now = std::time(nullptr));
std::string_view reason_phrase(int status) noexcept;

// The body `GET /` answers with: `size` printable bytes (a fixed pattern, so a
// peer server can be configured with exactly the same bytes).
std::string make_body(std::size_t size);

}  // namespace uringkit::net
