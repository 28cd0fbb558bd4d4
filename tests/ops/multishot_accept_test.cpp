// Multishot accept (5.19): one SQE, one completion per connection while
// IORING_CQE_F_MORE is set; each result is a real connected socket.  Also into
// the registered file table (into_any_slot).
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/sys/error.hpp"

#include <gtest/gtest.h>

#include <set>

using namespace uringkit;
using namespace uringkit::testing;

TEST(MultishotAccept, OneCompletionPerConnection) {
    Ring ring(8);
    Listener listener;
    ring.prepare(op::Accept(Fd{listener.fd.get()}).flags(SOCK_CLOEXEC).multishot()).user_data(42);
    ASSERT_EQ(ring.submit(), 1);
    std::vector<UniqueFd> clients, servers;
    for (int i = 0; i < 3; ++i) {
        clients.push_back(listener.connect_client());
        const auto c = reap_one(ring);
        EXPECT_EQ(c.user_data, 42u);
        if (i == 0 && c.res == -EINVAL) GTEST_SKIP() << "no multishot accept (5.19)";
        ASSERT_GE(c.res, 0) << "connection " << i;
        EXPECT_TRUE(c.more()) << "still armed after connection " << i;
        servers.emplace_back(c.res);
    }
    // Each accepted socket is the peer of the matching client: a byte sent by
    // client i arrives on server socket i.
    for (int i = 0; i < 3; ++i) {
        const char b = static_cast<char>('A' + i);
        ASSERT_EQ(::send(clients[i].get(), &b, 1, 0), 1);
        char got = 0;
        ASSERT_EQ(::recv(servers[i].get(), &got, 1, 0), 1);
        EXPECT_EQ(got, b);
    }
    // Cancelling ends it with a completion without F_MORE.
    ring.prepare(op::AsyncCancel(42)).user_data(7);
    const auto cs = reap(ring, 2);
    EXPECT_EQ(find(cs, 7).res, 0);
    const auto last = find(cs, 42);
    EXPECT_EQ(last.res, -ECANCELED);
    EXPECT_FALSE(last.more());
}

TEST(MultishotAccept, IntoAnySlotOfASparseTable) {
    Ring ring(8);
    try {
        ring.register_files_sparse(2);
    } catch (const RingError& e) {
        GTEST_SKIP() << "no sparse file table: " << e.what();
    }
    Listener listener;
    ring.prepare(op::Accept(Fd{listener.fd.get()}).multishot().into_any_slot()).user_data(1);
    ASSERT_EQ(ring.submit(), 1);
    std::vector<UniqueFd> clients;
    std::set<int> slots;
    for (int i = 0; i < 2; ++i) {
        clients.push_back(listener.connect_client());
        const auto c = reap_one(ring);
        if (i == 0 && c.res == -EINVAL)
            GTEST_SKIP() << "no multishot accept into direct slots (5.19)";
        ASSERT_GE(c.res, 0);
        ASSERT_LT(c.res, 2);
        slots.insert(c.res);
    }
    EXPECT_EQ(slots.size(), 2u);
    // Data sent by client 0 is readable through one of the two slots.
    ASSERT_EQ(::send(clients[0].get(), "q", 1, 0), 1);
    ASSERT_EQ(::send(clients[1].get(), "r", 1, 0), 1);
    char a = 0, b = 0;
    ring.prepare(op::Recv(Fixed{0}, &a, 1)).user_data(10);
    ring.prepare(op::Recv(Fixed{1}, &b, 1)).user_data(11);
    const auto rs = reap(ring, 2);
    EXPECT_EQ(find(rs, 10).res, 1);
    EXPECT_EQ(find(rs, 11).res, 1);
    EXPECT_EQ(std::set<char>({a, b}), std::set<char>({'q', 'r'}));
    // A third connection finds the table full: the multishot ends with -ENFILE.
    clients.push_back(listener.connect_client());
    const auto full = reap_one(ring);
    EXPECT_EQ(full.user_data, 1u);
    EXPECT_EQ(full.res, -ENFILE);
    EXPECT_FALSE(full.more());
}
