// async::Mutex, async::Event and async::wait_child on futex and waitid
// operations (6.7): who got the mutex in which order, how many waiters a
// set() woke, how a child ended; and one Mutex shared by two threads, each
// with its own loop (label kernel-threads: TSan runs it).  Every wait has a
// 20 s limit: past it the waits are cancelled and the test fails, never hangs.
#include "uring_test_support.hpp"
#include "uringkit/async/process.hpp"
#include "uringkit/async/sync.hpp"
#include "uringkit/ops/ops.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <string>
#include <thread>
#include <vector>

using namespace uringkit;
using namespace uringkit::testing;

namespace {

#define REQUIRE_FUTEX_OPS(ring) REQUIRE_OP(ring, op::FutexWait::code)

// A limit for one loop's waits: past `seconds`, `expired` is stopped (every
// lock and wait given its token returns -ECANCELED); finish() ends the watch.
struct Watch {
    std::stop_source expired;
    std::stop_source done;
    std::stop_token token() const { return expired.get_token(); }
    void finish() { done.request_stop(); }
};

async::Task<void> watch(async::Loop& loop, Watch& w, long seconds = 20) {
    const __kernel_timespec ts{seconds, 0};
    const async::Result r = co_await loop.submit(op::Timeout(&ts), w.done.get_token());
    if (r.res == -ETIME) w.expired.request_stop();
}

TEST(AsyncSync, ContendedLockWaitsForUnlockAndTakesItInOrder) {
    Ring ring(16);
    REQUIRE_FUTEX_OPS(ring);
    async::Loop loop(ring);
    async::Mutex m;
    Watch w;
    std::vector<std::string> log;
    loop.spawn(watch(loop, w));
    loop.block_on([](async::Loop& l, async::Mutex& mu, Watch& wt,
                     std::vector<std::string>& out) -> async::Task<void> {
        EXPECT_TRUE((co_await mu.lock(l, wt.token())).ok());
        out.push_back("A holds");
        for (int i = 0; i < 2; ++i) {
            l.spawn([](async::Loop& l2, async::Mutex& mu2, Watch& wt2, std::vector<std::string>& o,
                       int id) -> async::Task<void> {
                const async::Result r = co_await mu2.lock(l2, wt2.token());
                EXPECT_EQ(r.res, 0);
                if (!r.ok()) co_return;
                o.push_back("B" + std::to_string(id) + " holds");
                co_await l2.nop();  // hold it across a suspension
                o.push_back("B" + std::to_string(id) + " releases");
                mu2.unlock();
            }(l, mu, wt, out, i));
        }
        // Both waiters are in the kernel now: the word says contended.
        for (int i = 0; i < 3; ++i) co_await l.nop();
        EXPECT_EQ(mu.state(), 2u);
        EXPECT_FALSE(mu.try_lock());
        out.push_back("A releases");
        mu.unlock();
        while (l.live_tasks() > 1) co_await l.nop();
        wt.finish();
    }(loop, m, w, log));
    EXPECT_FALSE(w.expired.stop_requested()) << "a lock waited past the limit";
    ASSERT_EQ(log.size(), 6u);
    EXPECT_EQ(log[0], "A holds");
    EXPECT_EQ(log[1], "A releases") << "a waiter ran while A held the mutex";
    // One waiter, then the other, each a whole critical section.
    EXPECT_EQ(log[2].substr(3), "holds");
    EXPECT_EQ(log[3], log[2].substr(0, 2) + " releases");
    EXPECT_EQ(log[4].substr(3), "holds");
    EXPECT_EQ(log[5], log[4].substr(0, 2) + " releases");
    EXPECT_NE(log[2], log[4]);
    EXPECT_EQ(m.state(), 0u) << "free at the end";
    EXPECT_TRUE(m.try_lock());
    m.unlock();
}

TEST(AsyncSync, StoppedLockReturnsCancelledWithoutTheMutex) {
    Ring ring(8);
    REQUIRE_FUTEX_OPS(ring);
    async::Loop loop(ring);
    async::Mutex m;
    ASSERT_TRUE(m.try_lock());
    std::stop_source give_up;
    const async::Result r = loop.block_on(
        [](async::Loop& l, async::Mutex& mu, std::stop_source& s) -> async::Task<async::Result> {
            l.spawn([](async::Loop& l2, std::stop_source& s2) -> async::Task<void> {
                co_await l2.nop();
                co_await l2.nop();
                s2.request_stop();
            }(l, s));
            co_return co_await mu.lock(l, s.get_token());
        }(loop, m, give_up));
    EXPECT_EQ(r.res, -ECANCELED);
    m.unlock();
    EXPECT_EQ(m.state(), 0u);
    EXPECT_TRUE(m.try_lock()) << "the cancelled lock left the mutex free";
    m.unlock();
}

TEST(AsyncSync, EventSetWakesEveryWaiterOnce) {
    Ring ring(16);
    REQUIRE_FUTEX_OPS(ring);
    async::Loop loop(ring);
    async::Event ev;
    Watch w;
    int woken = 0;
    int set_count = -1;
    loop.spawn(watch(loop, w));
    loop.block_on([](async::Loop& l, async::Event& e, Watch& wt, int& n,
                     int& counted) -> async::Task<void> {
        for (int i = 0; i < 3; ++i)
            l.spawn(
                [](async::Loop& l2, async::Event& e2, Watch& wt2, int& n2) -> async::Task<void> {
                    if ((co_await e2.wait(l2, wt2.token())).ok()) ++n2;
                }(l, e, wt, n));
        co_await l.nop();  // submitted after the three waits: they are queued now
        EXPECT_EQ(n, 0);
        EXPECT_FALSE(e.is_set());
        counted = e.set();
        while (l.live_tasks() > 1) co_await l.nop();
        // Set: a wait returns at once; after reset() it waits for the next set().
        EXPECT_TRUE((co_await e.wait(l, wt.token())).ok());
        e.reset();
        l.spawn([](async::Loop& l2, async::Event& e2, Watch& wt2, int& n2) -> async::Task<void> {
            if ((co_await e2.wait(l2, wt2.token())).ok()) n2 += 10;
        }(l, e, wt, n));
        co_await l.nop();
        EXPECT_EQ(n, 3) << "a wait after reset() returned before set()";
        EXPECT_EQ(e.set(), 1);
        while (l.live_tasks() > 1) co_await l.nop();
        wt.finish();
    }(loop, ev, w, woken, set_count));
    EXPECT_FALSE(w.expired.stop_requested()) << "a wait outlived the limit";
    EXPECT_EQ(set_count, 3) << "set() woke every waiter in the kernel";
    EXPECT_EQ(woken, 13);
}

TEST(AsyncSync, WaitChildReturnsExitStatusOrSignal) {
    Ring ring(8);
    REQUIRE_OP(ring, op::Waitid::code);
    async::Loop loop(ring);
    const pid_t exits = ::fork();
    ASSERT_GE(exits, 0);
    if (exits == 0) ::_exit(7);
    const pid_t killed = ::fork();
    ASSERT_GE(killed, 0);
    if (killed == 0) {
        for (;;) ::pause();
    }
    Watch w;
    loop.spawn(watch(loop, w));
    const auto [a, b] =
        loop.block_on([](async::Loop& l, pid_t p1, pid_t p2,
                         Watch& wt) -> async::Task<std::pair<async::ChildExit, async::ChildExit>> {
            const async::ChildExit first = co_await async::wait_child(l, p1, wt.token());
            // Armed before the signal: it completes at the child's death.
            l.spawn([](async::Loop& l2, pid_t p) -> async::Task<void> {
                co_await l2.nop();
                ::kill(p, SIGKILL);
            }(l, p2));
            const async::ChildExit second = co_await async::wait_child(l, p2, wt.token());
            wt.finish();
            co_return std::pair{first, second};
        }(loop, exits, killed, w));
    EXPECT_EQ(a.result.res, 0);
    EXPECT_TRUE(a.exited());
    EXPECT_EQ(a.code, CLD_EXITED);
    EXPECT_EQ(a.status, 7);
    EXPECT_EQ(b.result.res, 0);
    EXPECT_TRUE(b.signalled());
    EXPECT_EQ(b.code, CLD_KILLED);
    EXPECT_EQ(b.status, SIGKILL);
    EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1) << "both children were reaped";
}

// Two threads, each with its own ring and loop, four tasks each, all
// incrementing one counter under one Mutex: futexes are process-wide, so a
// waiter on one ring is woken by an unlock on the other thread.
TEST(AsyncSync, OneMutexAcrossTwoThreadsLoops) {
    {
        Ring probe(4);
        REQUIRE_FUTEX_OPS(probe);
    }
    constexpr int kTasks = 4, kRounds = 300;
    async::Mutex m;
    long counter = 0;  // guarded by m
    int overlaps = 0;  // guarded by m
    bool inside = false;
    std::vector<std::thread> threads;
    int failures[2] = {0, 0};
    bool expired[2] = {false, false};
    for (int t = 0; t < 2; ++t) {
        threads.emplace_back([&, t] {
            Ring ring(32);
            async::Loop loop(ring);
            Watch w;
            loop.spawn(watch(loop, w));
            loop.block_on([](async::Loop& l, async::Mutex& mu, Watch& wt, long& c, int& over,
                             bool& in, int& failed) -> async::Task<void> {
                for (int i = 0; i < kTasks; ++i)
                    l.spawn([](async::Loop& l2, async::Mutex& mu2, Watch& wt2, long& c2, int& o2,
                               bool& in2, int& f2) -> async::Task<void> {
                        for (int r = 0; r < kRounds; ++r) {
                            if (!(co_await mu2.lock(l2, wt2.token())).ok()) {
                                ++f2;
                                co_return;
                            }
                            if (in2) ++o2;
                            in2 = true;
                            const long seen = c2;
                            if (r % 8 == 0) co_await l2.nop();  // hold it across a suspension
                            c2 = seen + 1;
                            in2 = false;
                            mu2.unlock();
                        }
                    }(l, mu, wt, c, over, in, failed));
                while (l.live_tasks() > 1) co_await l.nop();
                wt.finish();
            }(loop, m, w, counter, overlaps, inside, failures[t]));
            expired[t] = w.expired.stop_requested();
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_FALSE(expired[0] || expired[1]) << "a lock waited past the limit";
    EXPECT_EQ(failures[0] + failures[1], 0);
    EXPECT_EQ(overlaps, 0) << "two tasks held the mutex at once";
    EXPECT_EQ(counter, 2L * kTasks * kRounds) << "increments lost";
    EXPECT_EQ(m.state(), 0u);
}

}  // namespace
