// The probe's socket trials: multishot accept of loopback connections, and a
// provided buffer ring feeding a multishot recv.  Traffic stays on 127.0.0.1.
#include "trial_support.hpp"

#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/buffer_ring.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

namespace uringkit::probe::detail {

using util::UniqueFd;

namespace {

sockaddr_in loopback_any_port() noexcept {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    return a;
}

// A listening TCP socket on 127.0.0.1 and an ephemeral port; throws on failure.
UniqueFd listen_loopback(sockaddr_in& addr) {
    UniqueFd l(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!l) throw std::system_error(errno, std::system_category(), "socket");
    addr = loopback_any_port();
    socklen_t len = sizeof addr;
    if (::bind(l.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(l.get(), 16) != 0 ||
        ::getsockname(l.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
        throw std::system_error(errno, std::system_category(), "bind/listen on 127.0.0.1");
    return l;
}

UniqueFd connect_to(const sockaddr_in& addr) {
    UniqueFd c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!c) throw std::system_error(errno, std::system_category(), "socket");
    // A loopback connect completes from the listen backlog, before any accept.
    if (::connect(c.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
        throw std::system_error(errno, std::system_category(), "connect to 127.0.0.1");
    return c;
}

unsigned short local_port(int fd) noexcept {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    return ntohs(a.sin_port);
}
unsigned short peer_port(int fd) noexcept {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len);
    return ntohs(a.sin_port);
}

}  // namespace

void multishot_accept(Trial& t) {
    sockaddr_in addr{};
    UniqueFd listener = listen_loopback(addr);
    Ring ring(8);
    constexpr std::uint64_t kAccept = 1, kCancel = 2;
    ring.prepare(op::Accept(Fd{listener.get()}).flags(SOCK_CLOEXEC).multishot()).user_data(kAccept);
    if (const int r = ring.submit(); r < 0) return set_from_result(t, r, "submit");
    UniqueFd clients[2] = {connect_to(addr), connect_to(addr)};
    Completion c[2];
    if (const int r = collect(ring, c); r < 0)
        return set_from_result(t, r, "waiting for two accepts");
    UniqueFd accepted[2];
    for (int i = 0; i < 2; ++i) {
        if (c[i].res >= 0) accepted[i] = UniqueFd(c[i].res);
        if (c[i].user_data != kAccept)
            return set_failed(t, 0, "a completion with a foreign user_data");
        if (c[i].res < 0) return set_from_result(t, c[i].res, "multishot accept");
        if (!c[i].more())
            return set_unsupported(t, 0,
                                   "the accept completed without IORING_CQE_F_MORE: not multishot");
    }
    // Each accepted socket must be the peer of one of our clients.
    const unsigned short p0 = peer_port(accepted[0].get()), p1 = peer_port(accepted[1].get());
    const unsigned short c0 = local_port(clients[0].get()), c1 = local_port(clients[1].get());
    if (!((p0 == c0 && p1 == c1) || (p0 == c1 && p1 == c0)))
        return set_failed(t, 0, "the accepted sockets are not the two clients' peers");
    // Stop it: the cancel and the accept's last CQE (without MORE) both come back.
    ring.prepare(op::AsyncCancel(kAccept)).user_data(kCancel);
    Completion end[2];
    if (const int r = collect(ring, end); r < 0)
        return set_from_result(t, r, "waiting for the cancel");
    for (const Completion& e : end) {
        if (e.user_data == kAccept && (e.more() || e.res != -ECANCELED))
            return set_failed(t, 0, fmt::format("cancelled accept ended with res {}", e.res));
        if (e.user_data == kCancel && e.res != 0)
            return set_from_result(t, e.res, "async_cancel of the multishot accept");
    }
    set_ok(t, "one SQE accepted two loopback connections (CQE_F_MORE on each), then was cancelled");
}

void buffer_ring_and_recv(std::vector<Trial>& out, const std::string& dir) {
    constexpr std::uint16_t kGroup = 7;
    constexpr unsigned kCount = 4;
    constexpr std::uint32_t kSize = 256;
    std::optional<Ring> ring;
    std::optional<BufferRing> group;
    out.push_back(attempt(
        "provided_buffer_ring", "register a provided buffer ring; a read picks a buffer",
        [&](Trial& t) {
            ring.emplace(8);
            group.emplace(*ring, kGroup, kCount, kSize);
            ProbeFile file;
            if (const int err = file.create(dir))
                return set_failed(
                    t, err, fmt::format("cannot create a file in {}: {}", dir, err_text(err)));
            constexpr std::uint64_t offset = 1000;
            ring->prepare(op::ReadProvided(Fd{file.fd()}, kGroup, kSize, offset)).user_data(1);
            Completion c[1];
            if (const int r = collect(*ring, c); r < 0)
                return set_from_result(t, r, "waiting for the read");
            if (c[0].res < 0) return set_from_result(t, c[0].res, "read with a provided buffer");
            const auto id = c[0].buffer_id();
            if (!id || *id >= kCount)
                return set_failed(t, 0, "the completion names no valid buffer");
            const auto data = group->data(*id, static_cast<std::size_t>(c[0].res));
            if (!check_read(t, c[0], reinterpret_cast<const unsigned char*>(data.data()), kSize,
                            offset, "read into a provided buffer"))
                return;
            group->recycle(*id);
            set_ok(t,
                   fmt::format(
                       "the kernel picked buffer {} of group {} for a {}-byte read; data matches",
                       *id, kGroup, kSize));
        }));
    const Outcome ring_outcome = out.back().outcome;
    const int ring_err = out.back().err;
    out.push_back(attempt(
        "multishot_recv", "multishot recv on loopback TCP into the buffer ring", [&](Trial& t) {
            if (ring_outcome != Outcome::ok)
                return set_unsupported(t, ring_err, "needs a provided buffer ring (see above)");
            sockaddr_in addr{};
            UniqueFd listener = listen_loopback(addr);
            UniqueFd client = connect_to(addr);
            UniqueFd server(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
            if (!server) throw std::system_error(errno, std::system_category(), "accept");
            ring->prepare(op::Recv::provided(Fd{server.get()}, kGroup).multishot()).user_data(3);
            if (const int r = ring->submit(); r < 0) return set_from_result(t, r, "submit");
            // Two separate arrivals, each waited for, so each must come back as its
            // own CQE from the one armed request.
            const std::string_view messages[] = {"first message over loopback",
                                                 "second, a little longer"};
            int shots = 0;
            for (std::string_view m : messages) {
                if (::send(client.get(), m.data(), m.size(), MSG_NOSIGNAL) !=
                    static_cast<ssize_t>(m.size()))
                    throw std::system_error(errno, std::system_category(), "send on loopback");
                Completion c[1];
                if (const int r = collect(*ring, c); r < 0)
                    return set_from_result(t, r, "waiting for data");
                if (c[0].res < 0) return set_from_result(t, c[0].res, "multishot recv");
                const auto id = c[0].buffer_id();
                if (!id || *id >= kCount)
                    return set_failed(t, 0, "a recv completion names no valid buffer");
                const auto data = group->data(*id, static_cast<std::size_t>(c[0].res));
                if (std::string_view(reinterpret_cast<const char*>(data.data()), data.size()) != m)
                    return set_failed(t, 0,
                                      fmt::format("message {} came back different", shots + 1));
                if (!c[0].more())
                    return set_unsupported(
                        t, 0, "recv completed without IORING_CQE_F_MORE: not multishot");
                group->recycle(*id);
                ++shots;
            }
            // EOF ends the multishot request: res 0 and no MORE.
            ::shutdown(client.get(), SHUT_WR);
            Completion c[1];
            if (const int r = collect(*ring, c); r < 0)
                return set_from_result(t, r, "waiting for EOF");
            if (c[0].res != 0 || c[0].more())
                return set_failed(t, 0,
                                  fmt::format("after EOF: res {} more {}", c[0].res, c[0].more()));
            set_ok(t, fmt::format(
                          "one SQE delivered {} messages into provided buffers, then ended at EOF",
                          shots));
        }));
}

}  // namespace uringkit::probe::detail
