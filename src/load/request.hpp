// The HTTP request `uringkit load` sends on every connection: the method,
// the target's path, Host, the extra header fields (-H, as wrk) and a body
// with its Content-Length (-b).  Built once before the run.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace uringkit::load {

struct LoadConfig;

// A header field, method or body that cannot go into a request; what()
// names the text that is wrong.
class RequestError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// "Name: value" as wrk's -H takes it (messages name it --header): the name a token (RFC
// 9110 5.6.2), the value visible characters, spaces and tabs (trimmed), no CR, LF or NUL anywhere.
// Content-Length and Transfer-Encoding are refused (the body sets the length; requests are not
// chunked).  Throws RequestError.
std::pair<std::string, std::string> parse_header(std::string_view text);

// A method is a token (RFC 9110 9.1); CONNECT is refused (it opens a
// tunnel, it does not get a response to measure).  Throws RequestError.
void check_method(std::string_view method);

// The bytes of one request for `c`.  A Host field among c.headers replaces
// the one made from the target; Content-Length is set when c.body is.
std::string http_request(const LoadConfig& c);
// The same request for another target `path` (--paths), without copying `c`
// (its expected bodies may be large).
std::string http_request(const LoadConfig& c, std::string_view path);

}  // namespace uringkit::load
