// HTTP/1.1 responses as a client reads them: the head parsed in place, and a
// reader that frames a stream of responses (to requests without a body, such
// as GET) arriving in pieces of any size, as `uringkit load` receives them.
//
// Like the request parser it allocates nothing per response: a head that
// arrives split across reads is gathered in a buffer reserved once; a whole
// head inside one read is parsed where it lies.
#pragma once

#include "net/http.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace uringkit::net {

struct ResponseHead {
    int status = 0;           // 100-999
    int minor_version = 1;    // HTTP/1.<minor>
    bool has_length = false;  // a Content-Length field
    std::uint64_t content_length = 0;
    bool chunked = false;  // Transfer-Encoding: chunked
    bool close = false;    // Connection: close, or HTTP/1.0 without keep-alive
    std::size_t head_bytes = 0;
};

enum class HeadStatus : std::uint8_t { Complete, Incomplete, Bad };

// Parses the response head at the start of `data`.  Bad names its reason in
// *why (a static string).
HeadStatus parse_response_head(std::string_view data, ResponseHead& out, const char** why) noexcept;

// Told each piece of a Content-Length body as the reader passes over it
// (`load --verify` compares them with the file); not for chunked bodies.
class BodySink {
public:
    virtual void on_body(const ResponseHead& head, std::string_view piece) noexcept = 0;

protected:
    ~BodySink() = default;
};

// Frames responses: status line and headers, then a body of Content-Length
// bytes, a chunked body (RFC 9112 7.1, through ChunkedBody), or none (1xx,
// 204, 304).  A body delimited only by the connection's close cannot be
// framed on a keep-alive connection and is refused.
class ResponseReader {
public:
    enum class Status : std::uint8_t { NeedMore, Complete, Bad };
    static constexpr std::size_t kMaxHead = 16384;

    ResponseReader();

    // Consumes bytes from the front of `data` up to the end of one response:
    // Complete (head() describes it; `data` holds what follows), NeedMore
    // (`data` is all consumed), or Bad (error() says why; the stream cannot
    // be read further).
    Status next(std::string_view& data) noexcept;

    const ResponseHead& head() const noexcept { return head_; }
    const char* error() const noexcept { return error_; }
    // Some bytes of a response arrived and its end has not.
    bool mid_response() const noexcept { return state_ != State::Head || !buffer_.empty(); }
    // Every response answers a HEAD request: it ends with its head whatever
    // its Content-Length says (RFC 9110 9.3.2).  Kept across reset().
    void set_head_requests(bool on) noexcept { head_requests_ = on; }
    // Bodies' bytes go to `sink` too (null: nobody); kept across reset().
    void set_body_sink(BodySink* sink) noexcept { sink_ = sink; }
    void reset() noexcept;

private:
    enum class State : std::uint8_t { Head, Body, Chunked };
    Status begin_body() noexcept;

    State state_ = State::Head;
    ResponseHead head_;
    std::uint64_t body_left_ = 0;
    ChunkedBody chunked_;
    std::string buffer_;  // a head that arrived in pieces; capacity kMaxHead, reserved once
    const char* error_ = "";
    bool head_requests_ = false;
    BodySink* sink_ = nullptr;
};

}  // namespace uringkit::net
