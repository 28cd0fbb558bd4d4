// One loop per thread, and work handed between them: a Mailbox's send()
// queues the value and wakes the receiving loop with IORING_OP_MSG_RING.
// Every value arrives exactly once, in each sender's order; a reply goes
// back the same way.  Run under TSan (label `threads`).
#include "uring_test_support.hpp"
#include "uringkit/async/mailbox.hpp"
#include "uringkit/ops/ops.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

using namespace uringkit;

namespace {

struct Message {
    int sender = 0;
    int seq = 0;  // 0: that sender is done
};

TEST(AsyncThreads, MailboxesCarryEveryValueOnceInOrder) {
    constexpr int kSenders = 3;
    constexpr int kEach = 2000;
    Ring receiver_ring(64);
    REQUIRE_OP(receiver_ring, op::MsgRing::code);
    async::Loop receiver(receiver_ring);
    async::Mailbox<Message> inbox(receiver);
    std::vector<std::vector<int>> seen(kSenders);

    std::vector<std::thread> senders;
    for (int s = 0; s < kSenders; ++s) {
        senders.emplace_back([&inbox, s] {
            Ring ring(64);
            async::Loop loop(ring);
            loop.block_on(
                [](async::Loop& l, async::Mailbox<Message>& box, int id) -> async::Task<void> {
                    for (int i = 1; i <= kEach; ++i) {
                        box.send(l, Message{id, i});
                        if (i % 64 == 0)
                            co_await l.nop();  // reap the sends' own completions now and then
                    }
                    box.send(l, Message{id, 0});
                    while (l.in_flight() > 0) co_await l.nop();
                }(loop, inbox, s));
        });
    }
    receiver.block_on(
        [](async::Mailbox<Message>& box, std::vector<std::vector<int>>& out) -> async::Task<void> {
            int done = 0;
            while (done < kSenders) {
                const Message m = co_await box.receive();
                if (m.seq == 0)
                    ++done;
                else
                    out[static_cast<std::size_t>(m.sender)].push_back(m.seq);
            }
        }(inbox, seen));
    for (auto& t : senders) t.join();
    for (int s = 0; s < kSenders; ++s) {
        ASSERT_EQ(seen[static_cast<std::size_t>(s)].size(), static_cast<std::size_t>(kEach))
            << "sender " << s;
        for (int i = 0; i < kEach; ++i)
            ASSERT_EQ(seen[static_cast<std::size_t>(s)][static_cast<std::size_t>(i)], i + 1);
    }
    EXPECT_EQ(receiver.in_flight(), 0u);
}

TEST(AsyncThreads, PingPongBetweenTwoLoops) {
    Ring ring_a(16), ring_b(16);
    REQUIRE_OP(ring_a, op::MsgRing::code);
    async::Loop a(ring_a), b(ring_b);
    async::Mailbox<int> to_a(a), to_b(b);
    constexpr int kRounds = 500;
    int b_last = -1;
    std::thread tb([&] {
        b.block_on([](async::Loop& l, async::Mailbox<int>& in, async::Mailbox<int>& out,
                      int& last) -> async::Task<void> {
            for (;;) {
                const int v = co_await in.receive();
                last = v;
                out.send(l, v + 1);
                if (v >= 2 * kRounds - 2) break;
            }
            while (l.in_flight() > 0) co_await l.nop();
        }(b, to_b, to_a, b_last));
    });
    const int final_value = a.block_on(
        [](async::Loop& l, async::Mailbox<int>& in, async::Mailbox<int>& out) -> async::Task<int> {
            int v = 0;
            for (int i = 0; i < kRounds; ++i) {
                out.send(l, v);
                v = co_await in.receive() + 1;
            }
            while (l.in_flight() > 0) co_await l.nop();
            co_return v;
        }(a, to_a, to_b));
    tb.join();
    EXPECT_EQ(final_value, 2 * kRounds);
    EXPECT_EQ(b_last, 2 * kRounds - 2);
}

}  // namespace
