// Waiting: submit_and_wait_for gives up with -ETIME (IORING_ENTER_EXT_ARG),
// and a signal that interrupts a wait (EINTR) is retried inside the ring, so
// the caller gets its completions rather than a spurious error.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"

#include <signal.h>
#include <sys/time.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <vector>

using namespace uringkit;
using namespace uringkit::testing;
using namespace std::chrono_literals;

namespace {
std::atomic<int> g_signals{0};
void on_alarm(int) {
    g_signals.fetch_add(1, std::memory_order_relaxed);
}

// SIGALRM every `period`, with a handler installed without SA_RESTART, so a
// blocking system call it interrupts fails with EINTR.
class Alarm {
public:
    explicit Alarm(std::chrono::microseconds period) {
        struct sigaction sa {};
        sa.sa_handler = on_alarm;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0;  // no SA_RESTART
        sigaction(SIGALRM, &sa, &old_);
        itimerval it{};
        it.it_interval.tv_usec = period.count();
        it.it_value.tv_usec = period.count();
        setitimer(ITIMER_REAL, &it, nullptr);
    }
    ~Alarm() {
        itimerval off{};
        setitimer(ITIMER_REAL, &off, nullptr);
        sigaction(SIGALRM, &old_, nullptr);
    }

private:
    struct sigaction old_ {};
};
}  // namespace

TEST(WaitTimeout, GivesUpWithEtime) {
    Ring ring(4);
    if (!ring.has_feature(IORING_FEAT_EXT_ARG)) GTEST_SKIP() << "no IORING_FEAT_EXT_ARG (5.11)";
    EXPECT_EQ(ring.submit_and_wait_for(1, 5ms), -ETIME);
    EXPECT_EQ(ring.cq_ready(), 0u);
}

TEST(WaitTimeout, ReturnsOnceTheCompletionIsThere) {
    Ring ring(4);
    if (!ring.has_feature(IORING_FEAT_EXT_ARG)) GTEST_SKIP() << "no IORING_FEAT_EXT_ARG (5.11)";
    ring.prepare(op::Nop{}).user_data(9);
    EXPECT_EQ(ring.submit_and_wait_for(1, 10s), 1);
    ASSERT_EQ(ring.cq_ready(), 1u);
    EXPECT_EQ(reap_one(ring).user_data, 9u);
}

TEST(WaitTimeout, InterruptedWaitIsRetried) {
    Ring ring(4);
    Pipe pipe;
    char buf[1];
    // The timeout is the only thing that can end the wait; the alarm keeps
    // interrupting it until then.
    const __kernel_timespec ts{0, 200'000'000};
    ring.prepare(op::Timeout(&ts)).user_data(1);
    ASSERT_EQ(ring.submit(), 1);
    g_signals = 0;
    int r;
    {
        Alarm alarm(std::chrono::milliseconds(10));
        r = ring.submit_and_wait(1);
    }
    EXPECT_EQ(r, 0) << "nothing new was submitted; EINTR must not reach the caller";
    ASSERT_EQ(ring.cq_ready(), 1u) << "returned before the completion arrived";
    const auto c = reap_one(ring);
    EXPECT_EQ(c.user_data, 1u);
    EXPECT_EQ(c.res, -ETIME);
    if (g_signals.load() == 0) GTEST_SKIP() << "no signal arrived during the wait; EINTR untested";
    (void)buf;
    (void)pipe;
}

TEST(WaitTimeout, InterruptedWaitAfterSubmittingStillWaits) {
    // Submission and wait in one enter: the kernel reports the submitted count
    // even when the wait part was interrupted; the ring must go on waiting.
    Ring ring(4);
    const __kernel_timespec ts{0, 200'000'000};
    ring.prepare(op::Timeout(&ts)).user_data(1);
    g_signals = 0;
    int r;
    {
        Alarm alarm(std::chrono::milliseconds(10));
        r = ring.submit_and_wait(1);
    }
    EXPECT_EQ(r, 1);
    ASSERT_EQ(ring.cq_ready(), 1u) << "submit_and_wait(1) returned with no completion";
    EXPECT_EQ(reap_one(ring).res, -ETIME);
    if (g_signals.load() == 0) GTEST_SKIP() << "no signal arrived during the wait; EINTR untested";
}

TEST(WaitTimeout, InterruptedTimedWaitStillEndsWithEtime) {
    Ring ring(4);
    if (!ring.has_feature(IORING_FEAT_EXT_ARG)) GTEST_SKIP() << "no IORING_FEAT_EXT_ARG (5.11)";
    g_signals = 0;
    int r;
    const auto start = std::chrono::steady_clock::now();
    {
        Alarm alarm(std::chrono::milliseconds(5));
        r = ring.submit_and_wait_for(1, 100ms);
    }
    const auto waited = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(r, -ETIME);
    // Not a timing assertion on speed: only that the wait was not cut short.
    EXPECT_GE(waited, 100ms);
}

TEST(WaitTimeout, PartialSubmissionReturnsInsteadOfWaitingForever) {
    // The kernel rejects the second SQE at submission, stops the batch there
    // and skips the wait: only 2 of the 3 wanted completions can come, so the
    // ring must return the submitted count rather than wait again.
    Ring ring(8);
    ring.prepare(op::Nop{}).user_data(1);
    io_uring_sqe* bad = ring.get_sqe();
    ASSERT_NE(bad, nullptr);
    bad->opcode = 250;  // no such opcode
    bad->user_data = 2;
    ring.prepare(op::Nop{}).user_data(3);
    EXPECT_EQ(ring.submit_and_wait(3), 2);
    EXPECT_EQ(ring.sq_pending(), 1u) << "the SQE after the rejected one waits for the next submit";
    const auto cs = reap(ring, 3);
    EXPECT_EQ(find(cs, 1).res, 0);
    EXPECT_EQ(find(cs, 2).res, -EINVAL);
    EXPECT_EQ(find(cs, 3).res, 0);
}

// A Timeout operation is a wake-up: the kernel ends a wait for more
// completions when it fires, and the ring must not wait on past it.
TEST(WaitTimeout, TimeoutOperationEndsALargerWait) {
    Ring ring(8);
    Pipe pipe;
    char never[16];
    ring.prepare(op::Read(Fd{pipe.read_end.get()}, never, sizeof never, 0)).user_data(1);
    const __kernel_timespec ts{0, 20'000'000};
    ring.prepare(op::Timeout(&ts)).user_data(2);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(ring.submit_and_wait(2), 2);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "waited past the Timeout";
    ASSERT_EQ(ring.cq_ready(), 1u);
    const Completion c = reap_one(ring);
    EXPECT_EQ(c.user_data, 2u);
    EXPECT_EQ(c.res, -ETIME);
    // The read still points at `never`: cancel it and see its CQE before the
    // buffer goes out of scope.
    ring.prepare(op::AsyncCancel(1)).user_data(3);
    ASSERT_EQ(ring.submit_and_wait(2), 1);
    std::vector<Completion> rest;
    while (rest.size() < 2) {
        ring.for_each_completion([&](const Completion& d) { rest.push_back(d); });
        if (rest.size() < 2) ring.submit_and_wait(1);
    }
    for (const Completion& d : rest) {
        if (d.user_data == 1) {
            EXPECT_EQ(d.res, -ECANCELED);
        } else {
            EXPECT_EQ(d.user_data, 3u);
            EXPECT_EQ(d.res, 0);
        }
    }
}
