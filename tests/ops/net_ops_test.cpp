// Sockets over loopback: connect and accept through the ring, send and recv
// with the data checked, shutdown seen as EOF, poll_add and poll_remove.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"

#include <poll.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>

using namespace uringkit;
using namespace uringkit::testing;

TEST(NetOps, AcceptConnectSendRecvShutdown) {
    Ring ring(8);
    Listener listener;
    UniqueFd client(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in peer{};
    socklen_t peer_len = sizeof peer;
    ring.prepare(op::Accept(Fd{listener.fd.get()}, reinterpret_cast<sockaddr*>(&peer), &peer_len)
                     .flags(SOCK_CLOEXEC))
        .user_data(1);
    ring.prepare(op::Connect(Fd{client.get()}, reinterpret_cast<const sockaddr*>(&listener.addr),
                             sizeof listener.addr))
        .user_data(2);
    const auto cs = reap(ring, 2);
    const int accepted = find(cs, 1).res;
    ASSERT_GE(accepted, 0);
    UniqueFd server(accepted);
    EXPECT_EQ(find(cs, 2).res, 0);
    EXPECT_EQ(peer.sin_family, AF_INET);
    EXPECT_EQ(peer.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
    EXPECT_EQ(peer_len, sizeof peer);

    // Recv first (it waits), then send: the bytes arrive intact.
    const auto msg = pattern(3000, 6);
    std::vector<std::byte> got(4096);
    ring.prepare(op::Recv(Fd{server.get()}, got.data(), 4096, MSG_WAITALL)).user_data(3);
    ASSERT_EQ(ring.submit(), 1);
    ring.prepare(op::Send(Fd{client.get()}, msg.data(), 3000)).user_data(4).link();
    ring.prepare(op::Shutdown(Fd{client.get()}, SHUT_WR)).user_data(5);
    const auto io = reap(ring, 3);
    EXPECT_EQ(find(io, 4).res, 3000);
    EXPECT_EQ(find(io, 5).res, 0);
    // MSG_WAITALL with 4096 asked: the shutdown ends it at 3000.
    ASSERT_EQ(find(io, 3).res, 3000);
    EXPECT_EQ(std::memcmp(got.data(), msg.data(), 3000), 0);
    // After the peer's shutdown a recv reads EOF.
    ring.prepare(op::Recv(Fd{server.get()}, got.data(), 4096)).user_data(6);
    EXPECT_EQ(reap_one(ring).res, 0);
}

TEST(NetOps, ConnectToAClosedPortIsRefused) {
    Ring ring(4);
    sockaddr_in addr{};
    {
        Listener l;
        addr = l.addr;
    }  // closed: nothing listens on that port now
    UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    ring.prepare(op::Connect(Fd{s.get()}, reinterpret_cast<const sockaddr*>(&addr), sizeof addr))
        .user_data(1);
    EXPECT_EQ(reap_one(ring).res, -ECONNREFUSED);
}

TEST(NetOps, PollAddFiresWithTheReadyMask) {
    Ring ring(4);
    TcpPair pair;
    ring.prepare(op::PollAdd(Fd{pair.server.get()}, POLLIN)).user_data(1);
    ASSERT_EQ(ring.submit(), 1);
    EXPECT_EQ(ring.cq_ready(), 0u) << "nothing to read yet";
    ASSERT_EQ(::send(pair.client.get(), "x", 1, 0), 1);
    const auto c = reap_one(ring);
    EXPECT_EQ(c.user_data, 1u);
    ASSERT_GT(c.res, 0);
    EXPECT_TRUE(c.res & POLLIN);
}

TEST(NetOps, MultishotPollAndPollRemove) {
    Ring ring(8);
    Pipe pipe;
    ring.prepare(op::PollAdd(Fd{pipe.read_end.get()}, POLLIN).multishot()).user_data(1);
    ASSERT_EQ(ring.submit(), 1);
    ASSERT_EQ(::write(pipe.write_end.get(), "a", 1), 1);
    const auto first = reap_one(ring);
    EXPECT_EQ(first.user_data, 1u);
    EXPECT_TRUE(first.res & POLLIN);
    EXPECT_TRUE(first.more()) << "a multishot poll stays armed";
    char drain[8];
    ASSERT_EQ(::read(pipe.read_end.get(), drain, sizeof drain), 1);
    ASSERT_EQ(::write(pipe.write_end.get(), "b", 1), 1);
    const auto second = reap_one(ring);
    EXPECT_EQ(second.user_data, 1u);
    EXPECT_TRUE(second.more());

    ring.prepare(op::PollRemove(1)).user_data(2);
    const auto cs = reap(ring, 2);
    EXPECT_EQ(find(cs, 2).res, 0);
    const auto last = find(cs, 1);
    EXPECT_EQ(last.res, -ECANCELED);
    EXPECT_FALSE(last.more()) << "the final completion of a multishot request clears F_MORE";
}
