#include "load/target.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace uringkit::load {
namespace {

std::uint16_t parse_port(const std::string& text, const std::string& whole) {
    if (text.empty() || text.size() > 5 ||
        text.find_first_not_of("0123456789") != std::string::npos)
        throw TargetError(TargetError::usage,
                          fmt::format("{}: '{}' is not a port (1-65535)", whole, text));
    const unsigned long p = std::stoul(text);
    if (p == 0)
        throw TargetError(
            TargetError::usage,
            fmt::format("{}: port 0 names no server; give the port it listens on (1-65535)",
                        whole));
    if (p > 65535)
        throw TargetError(TargetError::usage, fmt::format("{}: port {} is above 65535", whole, p));
    return static_cast<std::uint16_t>(p);
}

}  // namespace

std::string Target::host_header() const {
    const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    return fmt::format("{}:{}", h, port);
}

std::string Target::name() const {
    return url ? fmt::format("http://{}{}", host_header(), path) : host_header();
}

Target parse_target(const std::string& text) {
    Target t;
    std::string rest = text;
    const std::size_t scheme_end = text.find("://");
    if (scheme_end != std::string::npos) {
        const std::string scheme = text.substr(0, scheme_end);
        if (scheme != "http" && scheme != "HTTP")
            throw TargetError(
                TargetError::usage,
                fmt::format("{}: the scheme '{}' is not supported; load speaks plain HTTP/1.1 "
                            "(http://HOST:PORT/PATH) or TCP (HOST:PORT)",
                            text, scheme));
        t.url = true;
        rest = text.substr(scheme_end + 3);
        const std::size_t slash = rest.find('/');
        if (slash != std::string::npos) {
            t.path = rest.substr(slash);
            rest.resize(slash);
        }
        for (char c : t.path)
            if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f || c == '#')
                throw TargetError(
                    TargetError::usage,
                    fmt::format("{}: the path may not hold spaces, control characters or '#'",
                                text));
    }
    std::string port;
    if (!rest.empty() && rest.front() == '[') {
        const std::size_t close = rest.find(']');
        if (close == std::string::npos)
            throw TargetError(TargetError::usage,
                              fmt::format("{}: an IPv6 address without its ']'", text));
        t.host = rest.substr(1, close - 1);
        if (close + 1 < rest.size()) {
            if (rest[close + 1] != ':')
                throw TargetError(TargetError::usage,
                                  fmt::format("{}: expected ':' after ']'", text));
            port = rest.substr(close + 2);
        }
    } else {
        const std::size_t colon = rest.rfind(':');
        if (colon != std::string::npos && rest.find(':') != colon)
            throw TargetError(
                TargetError::usage,
                fmt::format("{}: write an IPv6 address in brackets, like [::1]:8080", text));
        t.host = rest.substr(0, colon);
        if (colon != std::string::npos) port = rest.substr(colon + 1);
    }
    if (t.host.empty())
        throw TargetError(
            TargetError::usage,
            fmt::format("{}: no host; write HOST:PORT or http://HOST:PORT/PATH", text));
    if (port.empty()) {
        if (!t.url)
            throw TargetError(
                TargetError::usage,
                fmt::format("{}: no port; write HOST:PORT, like 127.0.0.1:8080", text));
        t.port = 80;
    } else {
        t.port = parse_port(port, text);
    }

    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const int rc = ::getaddrinfo(t.host.c_str(), nullptr, &hints, &res);
    if (rc != 0 || res == nullptr)
        throw TargetError(
            TargetError::unusable,
            fmt::format("{}: cannot resolve '{}': {}", text, t.host,
                        rc == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(rc)));
    std::memcpy(&t.address, res->ai_addr, res->ai_addrlen);
    t.address_len = res->ai_addrlen;
    ::freeaddrinfo(res);
    if (t.address.ss_family == AF_INET)
        reinterpret_cast<sockaddr_in*>(&t.address)->sin_port = htons(t.port);
    else
        reinterpret_cast<sockaddr_in6*>(&t.address)->sin6_port = htons(t.port);
    return t;
}

void check_reachable(const Target& t, std::chrono::milliseconds timeout) {
    const int fd = ::socket(t.address.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        throw TargetError(TargetError::unusable, fmt::format("socket: {}", std::strerror(errno)));
    int err = 0;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&t.address), t.address_len) < 0) {
        err = errno;
        if (err == EINPROGRESS) {
            pollfd p{fd, POLLOUT, 0};
            int r;
            do r = ::poll(&p, 1, static_cast<int>(timeout.count()));
            while (r < 0 && errno == EINTR);
            if (r == 0) {
                err = ETIMEDOUT;
            } else {
                socklen_t len = sizeof err;
                ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
            }
        }
    }
    ::close(fd);
    if (err != 0)
        throw TargetError(
            TargetError::unusable,
            fmt::format(
                "cannot connect to {}: {}{}", t.host_header(), std::strerror(err),
                err == ETIMEDOUT ? fmt::format(" (no answer within {} ms)", timeout.count()) : ""));
}

}  // namespace uringkit::load
