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
#include <string>
#include <string_view>

namespace uringkit::net {

struct HttpLimits {
    std::size_t max_head_bytes = 8192;       // request line + headers + blank line
    std::uint64_t max_body_bytes = 1 << 20;  // Content-Length above this: 413
};

enum class Method : std::uint8_t { Get, Head, Post, Other };

enum class ParseStatus : std::uint8_t {
    Complete,          // a whole head; `head_bytes` long
    Incomplete,        // need more bytes (and the head is still under the limit)
    BadRequest,        // 400: malformed
    HeadTooLarge,      // 431: no end of head within max_head_bytes
    BodyTooLarge,      // 413: Content-Length above max_body_bytes
    NotImplemented,    // 501: unknown method, or a Transfer-Encoding
    VersionNotSupported // 505: HTTP/2.0 and up on this port
};

struct HttpRequest {
    Method method = Method::Other;
    std::string_view target;        // points into the parsed bytes
    int minor_version = 1;          // HTTP/1.<minor>
    bool keep_alive = true;         // after Connection: and the version's default
    std::uint64_t content_length = 0;
    std::size_t head_bytes = 0;     // bytes of the head, blank line included
};

struct ParseResult {
    ParseStatus status;
    HttpRequest request;
};

// Parses the request head at the start of `data`.
ParseResult parse_request(std::string_view data, const HttpLimits& limits) noexcept;

// The bytes of a whole response.  `connection` is the Connection header value
// to send ("close", "keep-alive") or empty for none.
void append_response(std::string& out, int status, std::string_view content_type, std::string_view body,
                     std::string_view connection, bool head_only);
std::string_view reason_phrase(int status) noexcept;

// The body `GET /` answers with: `size` printable bytes (a fixed pattern, so a
// peer server can be configured with exactly the same bytes).
std::string make_body(std::size_t size);

}  // namespace uringkit::net
