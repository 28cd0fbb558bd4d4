// Socket operations awaited from coroutines, each checked by the bytes and
// addresses that arrive: socket, bind, listen (no blocking setup call),
// multishot accept as a stream with the peer's address, connect, send/recv,
// sendmsg/recvmsg over UDP with the sender's address, poll, a timeout, and
// msg_ring to the loop's own ring.
#include "uring_test_support.hpp"
#include "uringkit/async/loop.hpp"
#include "uringkit/async/streams.hpp"
#include "uringkit/ops/control.hpp"
#include "uringkit/ops/net.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

using namespace uringkit;
using namespace std::chrono_literals;

namespace {

sockaddr_in loopback(std::uint16_t port = 0) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    return a;
}

std::uint16_t port_of(int fd) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    return ntohs(a.sin_port);
}

TEST(AsyncNetOps, ServerSetupAcceptStreamConnectSendRecv) {
    Ring ring(32);
    async::Loop loop(ring);
    std::vector<std::uint16_t> client_ports, peer_ports;
    std::vector<std::string> echoed;
    auto t = [&]() -> async::Task<std::string> {
        const async::Result ls =
            co_await loop.submit(op::Socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC));
        if (!ls.ok()) co_return "socket " + ls.error().message();
        const int listener = ls.res;
        const sockaddr_in any = loopback();
        const async::Result b = co_await loop.submit(
            op::Bind(Fd{listener}, reinterpret_cast<const sockaddr*>(&any), sizeof any));
        if (b.res == -EOPNOTSUPP) co_return "bind refused";
        if (b.res != 0) co_return "bind " + b.error().message();
        if ((co_await loop.submit(op::Listen(Fd{listener}, 16))).res != 0) co_return "listen";
        const sockaddr_in to = loopback(port_of(listener));
        {
            async::AcceptStream accepts(loop, Fd{listener});
            accepts.arm();
            for (int i = 0; i < 3; ++i) {
                const async::Result c =
                    co_await loop.submit(op::Socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC));
                if (!c.ok()) co_return "client socket";
                const async::Result cr = co_await loop.connect(
                    Fd{c.res}, reinterpret_cast<const sockaddr*>(&to), sizeof to);
                if (cr.res != 0) co_return "connect " + cr.error().message();
                client_ports.push_back(port_of(c.res));
                const async::Result a = co_await accepts.next();
                if (!a.ok() || !a.more()) co_return "accept " + std::to_string(a.res);
                const auto peer = async::AcceptStream::peer(a.res);
                peer_ports.push_back(
                    ntohs(reinterpret_cast<const sockaddr_in&>(peer.address).sin_port));
                const std::string msg = "client " + std::to_string(i);
                co_await loop.send_all(Fd{c.res}, msg.data(), msg.size());
                char buf[32];
                const async::Result n = co_await loop.recv(Fd{a.res}, buf, sizeof buf);
                echoed.emplace_back(buf, static_cast<std::size_t>(n.res > 0 ? n.res : 0));
                co_await loop.close(Fd{a.res});
                co_await loop.close(Fd{c.res});
            }
        }  // the armed accept is cancelled and drained by the loop
        co_await loop.close(Fd{listener});
        co_return "ok";
    };
    const std::string r = loop.block_on(t());
    if (r == "bind refused") REQUIRE_OP(ring, op::Bind::code);
    EXPECT_EQ(r, "ok");
    EXPECT_EQ(echoed, (std::vector<std::string>{"client 0", "client 1", "client 2"}));
    EXPECT_EQ(peer_ports, client_ports) << "the stream's peer address is not the client's";
    for (int i = 0; i < 10 && loop.in_flight() > 0; ++i)
        loop.block_on([](async::Loop& l) -> async::Task<void> { co_await l.nop(); }(loop));
    EXPECT_EQ(loop.in_flight(), 0u);
}

TEST(AsyncNetOps, UdpSendmsgRecvmsgWithTheSendersAddress) {
    Ring ring(16);
    async::Loop loop(ring);
    const int rx = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    const int tx = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = loopback();
    ASSERT_EQ(::bind(rx, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::bind(tx, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    const sockaddr_in to = loopback(port_of(rx));
    auto t = [&]() -> async::Task<std::string> {
        char part1[] = "datagram ", part2[] = "in two iovecs";
        iovec out[2] = {{part1, 9}, {part2, 13}};
        msghdr sm{};
        sm.msg_name = const_cast<sockaddr_in*>(&to);
        sm.msg_namelen = sizeof to;
        sm.msg_iov = out;
        sm.msg_iovlen = 2;
        const async::Result s = co_await loop.submit(op::SendMsg(Fd{tx}, &sm));
        if (s.res != 22) co_return "sendmsg " + std::to_string(s.res);
        char buf[64] = {};
        iovec in{buf, sizeof buf};
        sockaddr_in from{};
        msghdr rm{};
        rm.msg_name = &from;
        rm.msg_namelen = sizeof from;
        rm.msg_iov = &in;
        rm.msg_iovlen = 1;
        const async::Result r = co_await loop.submit(op::RecvMsg(Fd{rx}, &rm));
        if (r.res != 22) co_return "recvmsg " + std::to_string(r.res);
        if (ntohs(from.sin_port) != port_of(tx)) co_return "wrong sender port";
        co_return std::string(buf, 22);
    };
    EXPECT_EQ(loop.block_on(t()), "datagram in two iovecs");
    ::close(rx);
    ::close(tx);
}

TEST(AsyncNetOps, PollTimeoutAndMsgRing) {
    Ring ring(16);
    async::Loop loop(ring);
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    struct Seen {
        std::vector<std::pair<std::uint64_t, std::int32_t>> got;
        static void record(void* self, const Completion& c) noexcept {
            static_cast<Seen*>(self)->got.emplace_back(c.user_data, c.res);
        }
    } seen;
    loop.route_foreign(&Seen::record, &seen);
    auto t = [&]() -> async::Task<std::string> {
        __kernel_timespec ts{0, 2'000'000};
        const async::Result to = co_await loop.submit(op::Timeout(&ts));
        if (to.res != -ETIME) co_return "timeout " + std::to_string(to.res);
        ::send(sv[1], "p", 1, 0);
        const async::Result p = co_await loop.submit(op::PollAdd(Fd{sv[0]}, POLLIN));
        if (!(p.res & POLLIN)) co_return "poll " + std::to_string(p.res);
        // A message to our own ring: it arrives as a completion the loop did
        // not ask for, with the value and user_data sent.
        const async::Result m = co_await loop.submit(op::MsgRing(ring.fd(), 1234, 0xfeed));
        if (m.res != 0) co_return "msg_ring " + m.error().message();
        co_await loop.nop();
        co_return "ok";
    };
    EXPECT_EQ(loop.block_on(t()), "ok");
    ASSERT_EQ(seen.got.size(), 1u);
    EXPECT_EQ(seen.got[0].first, 0xfeedu);
    EXPECT_EQ(seen.got[0].second, 1234);
    ::close(sv[0]);
    ::close(sv[1]);
}

}  // namespace
