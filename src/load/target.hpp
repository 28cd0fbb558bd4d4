// Where `uringkit load` sends its requests: `http://HOST[:PORT][/PATH]` or
// `HOST:PORT` (`[::1]:8080` for IPv6), resolved once before the run.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace uringkit::load {

// A target that cannot be used.  usage: the text itself is wrong (another
// scheme, port 0, no port); unusable: it is well formed but the host does
// not resolve or nothing accepts connections there.
class TargetError : public std::runtime_error {
public:
    enum Kind { usage, unusable };
    TargetError(Kind k, const std::string& what) : std::runtime_error(what), kind_(k) {}
    Kind kind() const noexcept { return kind_; }

private:
    Kind kind_;
};

struct Target {
    std::string host;  // as given ("localhost", "127.0.0.1", "::1")
    std::uint16_t port = 0;
    std::string path = "/";  // the request-target of each GET
    bool url = false;        // given as http://...
    sockaddr_storage address{};
    socklen_t address_len = 0;
    std::string host_header()
        const;                 // "host:port" ("[::1]:port"), as the Host field and in reports
    std::string name() const;  // "http://127.0.0.1:8080/" or "127.0.0.1:8080"
};

// Parses and resolves (getaddrinfo, numeric or a name) `text`; the first
// address found is used.  Throws TargetError.
Target parse_target(const std::string& text);

// Opens one connection and closes it, so an unreachable target is one clear
// error before the run instead of a run of connect errors.  Throws
// TargetError(unusable) naming the address and the errno (ECONNREFUSED,
// ENETUNREACH, ETIMEDOUT after `timeout`).
void check_reachable(const Target& t, std::chrono::milliseconds timeout);

}  // namespace uringkit::load
