// Helpers for the serve tests: an in-process server and a blocking client
// whose every read has a timeout, so a server bug fails a test instead of
// hanging it.
#pragma once

#include "net/server.hpp"
#include "tools/send_all.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace serve_test {

using namespace uringkit;

// The engines that can run here: uring ones only where io_uring works.
inline std::vector<net::EngineKind> engines() {
    std::vector<net::EngineKind> e;
    if (net::uring_unavailable_reason().empty()) {
        e.push_back(net::EngineKind::Uring);
        e.push_back(net::EngineKind::UringCoro);
    }
    e.push_back(net::EngineKind::Epoll);
    return e;
}

inline std::string engine_param_name(const testing::TestParamInfo<net::EngineKind>& info) {
    std::string n(net::engine_name(info.param));
    for (char& c : n)
        if (c == '-') c = '_';
    return n;
}

// The serve tests that run once per engine start from this configuration:
// the engine under test, and a short grace period so a stop never waits long.
class PerEngine : public testing::TestWithParam<net::EngineKind> {
protected:
    net::ServerConfig config() const {
        net::ServerConfig c;
        c.engine = GetParam();
        c.grace = std::chrono::milliseconds(500);
        return c;
    }
};

class TestServer {
public:
    explicit TestServer(net::ServerConfig cfg) {
        cfg.port = 0;
        server_ = std::make_unique<net::Server>(cfg);
        server_->start();
    }
    ~TestServer() { finish(); }
    void finish() {
        if (!server_) return;
        server_->stop();
        server_->wait();
        stats_ = server_->stats();
        server_.reset();
    }
    std::uint16_t port() const { return server_->port(); }
    net::Server& server() { return *server_; }
    net::StatsSnapshot final_stats() const { return stats_; }

private:
    std::unique_ptr<net::Server> server_;
    net::StatsSnapshot stats_;
};

// recv() that retries EINTR.  With SO_RCVTIMEO set the kernel cannot restart
// an interrupted recv, so it returns EINTR.  No signal is needed: strace shows
// it here when another thread of the process sets up an io_uring (a task-work
// notification), so the test's own client must retry like any real client.
inline ssize_t recv_retrying(int fd, void* buf, std::size_t n) {
    for (;;) {
        const ssize_t r = ::recv(fd, buf, n, 0);
        if (r >= 0 || errno != EINTR) return r;
    }
}

// A connected, blocking client socket; reads give up after `timeout`.
// `rcvbuf` (bytes, 0: the default) is set before connecting, so the window
// the client announces stays that small.
inline int connect_to(std::uint16_t port,
                      std::chrono::milliseconds timeout = std::chrono::seconds(10),
                      int rcvbuf = 0) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error("socket");
    if (rcvbuf > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    if (rc < 0 && errno == EINTR) {
        // Interrupted, the connect goes on in the background (connect(2)):
        // wait for it and read its outcome.
        pollfd p{fd, POLLOUT, 0};
        int err = ETIMEDOUT;
        socklen_t len = sizeof err;
        if (::poll(&p, 1, 10000) == 1) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        rc = err == 0 ? 0 : -1;
        errno = err;
    }
    if (rc < 0) {
        const int e = errno;
        ::close(fd);
        throw std::runtime_error(std::string("connect: ") + std::strerror(e));
    }
    return fd;
}

struct Socket {
    int fd;
    explicit Socket(std::uint16_t port,
                    std::chrono::milliseconds timeout = std::chrono::seconds(10), int rcvbuf = 0)
        : fd(connect_to(port, timeout, rcvbuf)) {}
    ~Socket() {
        if (fd >= 0) ::close(fd);
    }
    Socket(const Socket&) = delete;
    Socket& operator=(const Socket&) = delete;

    bool send(std::string_view data) const { return test_tools::send_all(fd, data); }
    // Reads until EOF (or an error/timeout); `closed` tells whether EOF or a reset ended it.
    std::string read_all(bool* closed = nullptr) const {
        std::string out;
        char buf[65536];
        for (;;) {
            const ssize_t n = recv_retrying(fd, buf, sizeof buf);
            if (n > 0) {
                out.append(buf, static_cast<std::size_t>(n));
                continue;
            }
            if (closed) *closed = n == 0 || errno == ECONNRESET;
            return out;
        }
    }
    // Reads exactly n bytes; fewer on EOF/error/timeout.
    std::string read_n(std::size_t n) const {
        std::string out;
        out.resize(n);
        std::size_t got = 0;
        while (got < n) {
            const ssize_t r = recv_retrying(fd, out.data() + got, n - got);
            if (r <= 0) break;
            got += static_cast<std::size_t>(r);
        }
        out.resize(got);
        return out;
    }
    // True when the server closed the connection (EOF or reset) before the timeout.
    bool closed_by_peer() const {
        char c;
        for (;;) {
            const ssize_t n = recv_retrying(fd, &c, 1);
            if (n == 0) return true;
            if (n < 0) return errno == ECONNRESET;
            // data: keep reading until the close
        }
    }
    // Aborts with RST instead of FIN.
    void reset() {
        linger l{1, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        ::close(fd);
        fd = -1;
    }
};

struct Response {
    int status = 0;
    std::string head;  // status line + headers
    std::string body;
};

// Reads one response (Content-Length framed) from `s`; status 0 on EOF/garbage.
inline Response read_response(const Socket& s, std::string& carry) {
    Response r;
    std::size_t end;
    char buf[16384];
    while ((end = carry.find("\r\n\r\n")) == std::string::npos) {
        const ssize_t n = recv_retrying(s.fd, buf, sizeof buf);
        if (n <= 0) return r;
        carry.append(buf, static_cast<std::size_t>(n));
    }
    r.head = carry.substr(0, end + 2);
    carry.erase(0, end + 4);
    if (r.head.size() < 12 || r.head.compare(0, 9, "HTTP/1.1 ") != 0) return r;
    r.status = std::stoi(r.head.substr(9, 3));
    std::size_t len = 0;
    const auto cl = r.head.find("Content-Length: ");
    if (cl != std::string::npos) len = std::stoul(r.head.substr(cl + 16));
    while (carry.size() < len) {
        const ssize_t n = recv_retrying(s.fd, buf, sizeof buf);
        if (n <= 0) {
            r.status = 0;
            return r;
        }
        carry.append(buf, static_cast<std::size_t>(n));
    }
    r.body = carry.substr(0, len);
    carry.erase(0, len);
    return r;
}

// `text` with every Date header value replaced by '#'s of the same length,
// so responses taken in different seconds compare equal.
inline std::string blank_dates(std::string text) {
    for (std::size_t at = 0; (at = text.find("\r\nDate: ", at)) != std::string::npos; at += 8)
        if (at + 8 + net::kHttpDateBytes <= text.size())
            text.replace(at + 8, net::kHttpDateBytes, net::kHttpDateBytes, '#');
    return text;
}

inline std::size_t open_fds() {
    std::size_t n = 0;
    if (DIR* d = ::opendir("/proc/self/fd")) {
        while (::readdir(d)) ++n;
        ::closedir(d);
    }
    return n;
}

}  // namespace serve_test
