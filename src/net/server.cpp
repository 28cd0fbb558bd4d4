#include "net/server.hpp"

#include "engine.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/buffer_ring.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/error.hpp"
#include "uringkit/util/unique_fd.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <system_error>

namespace uringkit::net {

std::string_view engine_name(EngineKind e) noexcept {
    switch (e) {
        case EngineKind::Uring:
            return "uring";
        case EngineKind::UringCoro:
            return "uring-coro";
        case EngineKind::Epoll:
            return "epoll";
    }
    return "?";
}

std::optional<EngineKind> parse_engine(std::string_view name) noexcept {
    if (name == "uring") return EngineKind::Uring;
    if (name == "uring-coro") return EngineKind::UringCoro;
    if (name == "epoll") return EngineKind::Epoll;
    return std::nullopt;
}

std::string uring_unavailable_reason() {
    // Tried, not guessed from a version: a provided buffer ring (5.19) and a
    // multishot recv from it (6.0) are the engine's backbone, and kernels
    // with backports or seccomp policies disagree with their version numbers.
    try {
        Ring ring(8);
        BufferRing group(ring, 0, 2, 64);
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
            return std::string("socketpair: ") + std::strerror(errno);
        const util::UniqueFd a(sv[0]), b(sv[1]);
        ring.prepare(op::Recv::provided(Fd{a.get()}, 0).multishot()).user_data(1);
        if (::send(b.get(), "x", 1, MSG_NOSIGNAL) != 1)
            return std::string("send: ") + std::strerror(errno);
        int res = -ETIME;
        bool more = false;
        for (int round = 0; round < 2 && res == -ETIME; ++round) {
            const int r = ring.submit_and_wait_for(1, std::chrono::milliseconds(500));
            if (r < 0 && r != -ETIME && r != -EINTR)
                return "io_uring_enter: " + errno_code(r).message();
            ring.for_each_completion([&](const Completion& c) {
                res = c.res;
                more = c.more();
            });
        }
        if (res == -EINVAL) return "this kernel has no multishot recv (needs Linux 6.0)";
        if (res < 0) return "multishot recv failed in a trial: " + errno_code(res).message();
        if (!more)
            return "recv came back without IORING_CQE_F_MORE: no multishot recv (needs Linux 6.0)";
        // EOF ends the armed recv before the ring and the group go away.
        ::shutdown(b.get(), SHUT_WR);
        ring.submit_and_wait_for(1, std::chrono::milliseconds(500));
        return {};
    } catch (const RingError& e) {
        return e.what();
    }
}

std::string recv_bundle_unavailable_reason() {
    std::string why = uring_unavailable_reason();
    if (!why.empty()) return why;
    try {
        const Ring ring(2);
        if (!ring.has_feature(IORING_FEAT_RECVSEND_BUNDLE))
            return "this kernel has no recv bundles (IORING_FEAT_RECVSEND_BUNDLE, Linux 6.10)";
        return {};
    } catch (const RingError& e) {
        return e.what();
    }
}

std::string recv_incremental_unavailable_reason() {
    std::string why = uring_unavailable_reason();
    if (!why.empty()) return why;
    try {
        Ring ring(2);
        const BufferRing group(ring, 0, 2, 64, true);
        return {};
    } catch (const RingError& e) {
        if (e.code().value() == EINVAL)
            return "this kernel has no incremental buffer rings (IOU_PBUF_RING_INC, Linux 6.12)";
        return e.what();
    }
}

bool batch_wait_available() {
    try {
        const Ring ring(2);
        return ring.features() & IORING_FEAT_MIN_TIMEOUT;
    } catch (const RingError&) {
        return false;
    }
}

std::string endpoint_name(const std::string& address, std::uint16_t port) {
    // RFC 3986: an IPv6 literal is bracketed, or its colons run into the port's.
    if (address.find(':') != std::string::npos) return "[" + address + "]:" + std::to_string(port);
    return address + ":" + std::to_string(port);
}

namespace {
[[noreturn]] void fail(const std::string& what, int err) {
    throw std::system_error(err, std::system_category(), what);
}

int make_listener(const ServerConfig& c, std::uint16_t port, std::string& address) {
    sockaddr_storage ss{};
    socklen_t len = 0;
    int family = AF_INET;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (::inet_pton(AF_INET, c.bind.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        len = sizeof *v4;
    } else if (::inet_pton(AF_INET6, c.bind.c_str(), &v6->sin6_addr) == 1) {
        family = AF_INET6;
        v6->sin6_family = AF_INET6;
        len = sizeof *v6;
    } else {
        // A host name: the first address getaddrinfo gives, the one a client
        // (load, wrk, curl) resolving the same name tries first.
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* res = nullptr;
        const int rc =
            c.bind.empty() ? EAI_NONAME : ::getaddrinfo(c.bind.c_str(), nullptr, &hints, &res);
        if (rc != 0 || res == nullptr) {
            const std::string why = rc == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(rc);
            throw std::system_error(
                EINVAL, std::system_category(),
                "--bind " + (c.bind.empty() ? std::string("''") : c.bind) +
                    ": not an IPv4 or IPv6 address, and no host name that resolves (" + why + ")" +
                    (c.bind.find(':') != std::string::npos ? "; give the port with --port" : ""));
        }
        std::memcpy(&ss, res->ai_addr, res->ai_addrlen);
        len = res->ai_addrlen;
        family = ss.ss_family;
        ::freeaddrinfo(res);
    }
    char text[INET6_ADDRSTRLEN] = {};
    if (family == AF_INET) {
        v4->sin_port = htons(port);
        ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    } else {
        v6->sin6_port = htons(port);
        ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    }
    address = text;
    const int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) fail("socket", errno);
    const int one = 1;
    // SO_REUSEADDR only lets a restarted server bind over connections still
    // in TIME_WAIT; on Linux it never lets a second socket listen on the same
    // port.  No SO_REUSEPORT: the kernel lets any process of the same user
    // join a SO_REUSEPORT group, and a second server would silently take
    // half the connections.  The threads share this one socket instead.
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    // Accepted sockets inherit TCP_NODELAY from the listener (Linux), which
    // saves every engine a setsockopt per connection.  Responses leave in one
    // send each, so Nagle would only delay them.
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) < 0) {
        const int e = errno;
        ::close(fd);
        fail("bind " + endpoint_name(address, port), e);
    }
    if (::listen(fd, c.backlog) < 0) {
        const int e = errno;
        ::close(fd);
        fail("listen", e);
    }
    return fd;
}

std::uint16_t bound_port(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) < 0) fail("getsockname", errno);
    if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
    return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}
}  // namespace

Server::Server(ServerConfig config) : config_(std::move(config)) {
    if (config_.threads == 0) config_.threads = 1;
    if (config_.recv_bundle && config_.engine != EngineKind::Uring)
        throw std::system_error(EINVAL, std::system_category(),
                                "recv bundles are an option of the uring engine");
    if (config_.recv_incremental && config_.engine != EngineKind::Uring)
        throw std::system_error(EINVAL, std::system_category(),
                                "incremental buffer rings are an option of the uring engine");
    if (config_.recv_incremental && config_.recv_bundle)
        throw std::system_error(EINVAL, std::system_category(),
                                "recv bundles and incremental buffer rings are not combined here");
    if (!config_.root.empty()) {
        if (config_.mode != Mode::Http)
            throw std::system_error(EINVAL, std::system_category(),
                                    "--root serves files over HTTP, not in echo mode");
        root_ = std::make_unique<StaticRoot>();
        // O_PATH: the root is only ever a starting point for openat2, never read.
        root_->fd = ::open(config_.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_->fd < 0) fail("--root " + config_.root, errno);
        root_->mime = MimeTypes::load(config_.mime_types.c_str());
        root_->resolve = config_.resolve;
    }
    stats_ = std::make_unique<std::vector<ServerStats>>(config_.threads);
    try {
        listener_ = make_listener(config_, config_.port, address_);
    } catch (...) {
        if (root_) ::close(root_->fd);
        throw;
    }
    try {
        port_ = bound_port(listener_);
        for (unsigned i = 0; i < config_.threads; ++i) {
            const int efd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
            if (efd < 0) fail("eventfd", errno);
            wake_fds_.push_back(efd);
        }
    } catch (...) {
        ::close(listener_);
        for (int fd : wake_fds_) ::close(fd);
        if (root_) ::close(root_->fd);
        throw;
    }
}

Server::~Server() {
    if (!threads_.empty()) {
        stop();
        for (auto& t : threads_)
            if (t.joinable()) t.join();
    }
    ::close(listener_);
    for (int fd : wake_fds_) ::close(fd);
    if (root_) ::close(root_->fd);
}

std::string Server::stats_json() const {
    return stats().to_json(engine_name(config_.engine),
                           config_.mode == Mode::Http ? "http" : "echo", config_.threads);
}

namespace {

FileServing file_serving(const ServerConfig& c) noexcept {
    FileServing s;
    s.engine_file_io = c.engine == EngineKind::Uring && c.file_io != FileIo::Calls;
    const bool epoll = c.engine == EngineKind::Epoll;
    s.engine_sends_body = c.body_path == BodyPath::Auto
                              ? epoll || s.engine_file_io
                              : (epoll && c.body_path == BodyPath::Sendfile) ||
                                    (s.engine_file_io && c.body_path == BodyPath::Splice);
    s.send_from = c.body_path == BodyPath::Auto ? c.body_send_from : 0;
    return s;
}

}  // namespace

void Server::start() {
    const unsigned n = config_.threads;
    for (unsigned i = 0; i < n; ++i) {
        // max_conns split evenly; the first threads take the remainder.
        const unsigned share = config_.max_conns / n + (i < config_.max_conns % n ? 1 : 0);
        threads_.emplace_back([this, i, share] {
            try {
                Responder responder =
                    root_ ? Responder(*root_, config_.limits, (*stats_)[i], file_serving(config_))
                          : Responder(config_.mode, config_.body_size, config_.limits, (*stats_)[i],
                                      [this] { return stats_json(); });
                detail::WorkerContext ctx{&config_, listener_,     wake_fds_[i],
                                          share,    &(*stats_)[i], &responder};
                switch (config_.engine) {
                    case EngineKind::Uring:
                        detail::run_uring_engine(ctx);
                        break;
                    case EngineKind::UringCoro:
                        detail::run_coro_engine(ctx);
                        break;
                    case EngineKind::Epoll:
                        detail::run_epoll_engine(ctx);
                        break;
                }
            } catch (...) {
                std::lock_guard lock(error_mutex_);
                if (!error_) error_ = std::current_exception();
            }
            finished_.fetch_add(1, std::memory_order_release);
        });
    }
}

void Server::stop() noexcept {
    const std::uint64_t one = 1;
    for (int fd : wake_fds_) {
        [[maybe_unused]] const ssize_t r = ::write(fd, &one, sizeof one);
    }
}

void Server::wait() {
    for (auto& t : threads_)
        if (t.joinable()) t.join();
    threads_.clear();
    std::lock_guard lock(error_mutex_);
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace uringkit::net
