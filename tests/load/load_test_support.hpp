// Helpers for the load tests: a loopback server whose connections a test
// scripts byte by byte (to send a wrong length, close mid-response, reset),
// and a LoadConfig aimed at a local port.  Every wait is bounded.
#pragma once

#include "load/load.hpp"
#include "tools/send_all.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

namespace load_test {

using namespace uringkit;

// Accepts on 127.0.0.1 and hands each connection, one after the other, to
// `handler(fd, stop)`; the handler returns when it is done with it (the
// server then closes it) or when `stop` is set.
class ScriptedServer {
public:
    using Handler = std::function<void(int fd, const std::atomic<bool>& stop)>;
    explicit ScriptedServer(Handler handler) : handler_(std::move(handler)) {
        listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), len) < 0 ||
            ::listen(listen_fd_, 128) < 0 ||
            ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) < 0)
            throw std::runtime_error("ScriptedServer: cannot listen");
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this] { accept_loop(); });
    }
    ~ScriptedServer() {
        stop_.store(true);
        thread_.join();
        ::close(listen_fd_);
    }
    std::uint16_t port() const { return port_; }
    unsigned accepted() const { return accepted_.load(); }

private:
    void accept_loop() {
        while (!stop_.load()) {
            pollfd p{listen_fd_, POLLIN, 0};
            if (::poll(&p, 1, 20) <= 0) continue;
            const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) continue;
            ++accepted_;
            handler_(fd, stop_);
            if (fd >= 0) ::close(fd);
        }
    }
    Handler handler_;
    int listen_fd_ = -1;
    std::uint16_t port_ = 0;
    std::atomic<bool> stop_{false};
    std::atomic<unsigned> accepted_{0};
    std::thread thread_;
};

// Reads from `fd` into `carry` until `pred(carry)` holds; false on EOF, an
// error, or `stop`.
template <class Pred>
bool read_until(int fd, std::string& carry, const std::atomic<bool>& stop, Pred pred) {
    char buf[4096];
    while (!pred(carry)) {
        if (stop.load()) return false;
        pollfd p{fd, POLLIN, 0};
        const int r = ::poll(&p, 1, 20);
        if (r < 0 && errno != EINTR) return false;
        if (r <= 0) continue;
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            return false;
        }
        carry.append(buf, static_cast<std::size_t>(n));
    }
    return true;
}

// Takes one request head off the front of `carry` (reading more as needed).
inline bool next_request(int fd, std::string& carry, const std::atomic<bool>& stop) {
    if (!read_until(fd, carry, stop,
                    [](const std::string& c) { return c.find("\r\n\r\n") != std::string::npos; }))
        return false;
    carry.erase(0, carry.find("\r\n\r\n") + 4);
    return true;
}

using test_tools::send_all;

// Waits until `stop`, so the connection stays open and silent.
inline void hold(const std::atomic<bool>& stop) {
    while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

inline load::LoadConfig config_for(std::uint16_t port, std::chrono::milliseconds duration,
                                   load::Mode mode = load::Mode::Http) {
    load::LoadConfig c;
    c.target = load::parse_target(mode == load::Mode::Http
                                      ? "http://127.0.0.1:" + std::to_string(port) + "/"
                                      : "127.0.0.1:" + std::to_string(port));
    c.mode = mode;
    c.connections = 1;
    c.threads = 1;
    c.duration = duration;
    return c;
}

}  // namespace load_test
