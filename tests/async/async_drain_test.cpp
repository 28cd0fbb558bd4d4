// What a loop that drains (an exception ended run(), or ~Loop()) does with
// work started from the destructors it runs.  Two defects of the first loop:
//  - an awaitable issue() refused while draining resumed with Result{0,0},
//    success, from submit()/nop() and send_all(), and with -EINVAL from a
//    chain: now every one says -ECANCELED;
//  - spawn() started a task while the loop drained; now the task is
//    destroyed unstarted (nothing it issued could reach the kernel).
#include "uring_test_support.hpp"
#include "uringkit/async/loop.hpp"

#include <gtest/gtest.h>

#include <sys/socket.h>

#include <functional>
#include <memory>
#include <stdexcept>
#include <utility>

using namespace uringkit;

namespace {

using uringkit::testing::SocketPair;

// Lives in a suspended task's frame; its destructor runs while the loop
// destroys that frame, i.e. while it drains.
struct AtDrain {
    std::function<void()> run;
    explicit AtDrain(std::function<void()> f) : run(std::move(f)) {}
    // The coroutine moves its parameter into the frame: only that copy runs.
    AtDrain(AtDrain&& o) noexcept : run(std::exchange(o.run, nullptr)) {}
    ~AtDrain() {
        if (run) run();
    }
};

// A task that holds `at` and waits on a recv nobody answers, so the loop
// still has it when it drains.
async::Task<void> parked(async::Loop& loop, int fd, AtDrain at) {
    char buf[16];
    (void)co_await loop.recv(Fd{fd}, buf, sizeof buf);
    (void)at;
}

// Issues `a` by hand (as a coroutine would) and returns what it resumes with.
template <class Awaiter>
auto refused(Awaiter&& a) {
    EXPECT_TRUE(a.await_ready() == false);
    EXPECT_FALSE(a.await_suspend(std::noop_coroutine()))
        << "the loop drains: nothing may be issued";
    return a.await_resume();
}

TEST(AsyncDrain, AwaitablesIssuedWhileDrainingResumeWithECANCELED) {
    Ring ring(8);
    SocketPair sp;
    bool ran = false;
    async::Result nop{}, send_all{};
    std::array<async::Result, 2> chain{}, batch{};
    const char text[] = "never sent";
    {
        async::Loop loop(ring);
        loop.spawn(parked(loop, sp.fd[0], AtDrain{[&] {
                              ran = true;
                              nop = refused(loop.nop());
                              send_all = refused(loop.send_all(Fd{sp.fd[1]}, text, sizeof text));
                              chain = refused(loop.chain(op::Nop{}, op::Nop{}));
                              batch = refused(loop.batch(op::Nop{}, op::Nop{}));
                          }}));
        ASSERT_EQ(loop.in_flight(), 1u);
    }  // ~Loop: cancels the recv, drains, destroys the frame
    ASSERT_TRUE(ran);
    EXPECT_EQ(nop.res, -ECANCELED) << "was 0: a refused nop looked like success";
    EXPECT_EQ(send_all.res, -ECANCELED) << "was 0 with nothing sent";
    EXPECT_EQ(chain[0].res, -ECANCELED);
    EXPECT_EQ(chain[1].res, -ECANCELED);
    EXPECT_EQ(batch[0].res, -ECANCELED);
    char buf[32];
    EXPECT_EQ(::recv(sp.fd[0], buf, sizeof buf, MSG_DONTWAIT), -1)
        << "a refused send reached the peer";
}

TEST(AsyncDrain, AChainLongerThanTheSqIsEINVALNotECANCELED) {
    Ring ring(2);
    async::Loop loop(ring);
    const auto r = loop.block_on([](async::Loop& l) -> async::Task<std::array<async::Result, 4>> {
        co_return co_await l.chain(op::Nop{}, op::Nop{}, op::Nop{}, op::Nop{});
    }(loop));
    for (const async::Result& x : r)
        EXPECT_EQ(x.res, -EINVAL) << "it could never be one submission";
}

// A spawned task's parameter: counts its copies' destructions, so a frame
// destroyed unstarted still shows.
struct Witness {
    std::shared_ptr<int> destroyed = std::make_shared<int>(0);
    Witness() = default;
    Witness(const Witness& o) : destroyed(o.destroyed) {}
    ~Witness() { ++*destroyed; }
};

async::Task<void> records(async::Loop& loop, bool& started, async::Result& got, Witness) {
    started = true;
    got = co_await loop.nop();
}

TEST(AsyncDrain, SpawnWhileDrainingDestroysTheTaskUnstarted) {
    Ring ring(8);
    SocketPair sp;
    bool started = false;
    async::Result got{1, 0};
    Witness witness;
    std::size_t live_after_spawn = 99;
    int frames_destroyed = -1;
    {
        async::Loop loop(ring);
        loop.spawn(parked(loop, sp.fd[0], AtDrain{[&] {
                              async::Task<void> t = records(loop, started, got, witness);
                              const int before = *witness.destroyed;
                              loop.spawn(std::move(t));
                              frames_destroyed = *witness.destroyed - before;
                              live_after_spawn = loop.live_tasks();
                          }}));
    }
    EXPECT_FALSE(started) << "spawn() ran a task while the loop drained";
    EXPECT_EQ(got.res, 1) << "the task resumed with " << got.res;
    EXPECT_EQ(live_after_spawn, 0u) << "the loop kept a task it will never run";
    EXPECT_EQ(frames_destroyed, 1) << "the unstarted frame was not destroyed at once";
}

async::Task<void> fails(async::Loop& loop) {
    co_await loop.nop();
    throw std::runtime_error("task failed");
}

TEST(AsyncDrain, SpawnRunsTasksAgainOnceTheDrainEnded) {
    Ring ring(8);
    async::Loop loop(ring);
    loop.spawn(fails(loop));
    EXPECT_THROW(loop.run(), std::runtime_error);  // run() drained before rethrowing
    bool started = false;
    async::Result got{1, 0};
    loop.spawn(records(loop, started, got, Witness{}));
    loop.run();
    EXPECT_TRUE(started);
    EXPECT_EQ(got.res, 0) << "the loop still refuses work after its drain";
}

}  // namespace
