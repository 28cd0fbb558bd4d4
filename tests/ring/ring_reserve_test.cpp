// Ring::reserve: room for n SQEs or the kernel's error, never a loop without
// progress; stat_batch on a ring that cannot submit ends with that error.
// Faults come from a seccomp filter in a forked child that makes
// io_uring_enter fail (after the ring was set up and used); an alarm kills
// a child that hangs, and the test then fails on the signal.
#include "fs/walk.hpp"
#include "tools/forbid_uring.hpp"
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/kernel_owned.hpp"

#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>

namespace uringkit {
namespace {

// Runs `body` in a forked child that must exit within `limit_s` seconds;
// returns its exit status, or 128 + signal (SIGALRM: it hung).
int in_child(const std::function<int()>& body, unsigned limit_s = 30) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::alarm(limit_s);
        ::_exit(body());
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

TEST(RingReserve, SubmitsToMakeRoomAndEveryNopCompletesOnce) {
    Ring ring(4);
    for (std::uint64_t i = 0; i < 4; ++i) ASSERT_TRUE(ring.prepare(op::Nop{}).user_data(i));
    ASSERT_EQ(ring.sq_space_left(), 0u);
    ASSERT_EQ(ring.reserve(3), 0);
    EXPECT_GE(ring.sq_space_left(), 3u);
    for (std::uint64_t i = 4; i < 7; ++i) ASSERT_TRUE(ring.prepare(op::Nop{}).user_data(i));
    ASSERT_EQ(ring.reserve(4), 0);
    std::vector<int> seen(7, 0);
    while (std::count(seen.begin(), seen.end(), 1) < 7) {
        ASSERT_GE(ring.submit_and_wait(1), 0);
        ring.for_each_completion([&](const Completion& c) {
            ASSERT_LT(c.user_data, seen.size());
            EXPECT_EQ(c.res, 0);
            ++seen[c.user_data];
        });
    }
    EXPECT_EQ(seen, std::vector<int>(7, 1));
}

TEST(RingReserve, MoreThanTheSqIsEinval) {
    Ring ring(4);
    EXPECT_EQ(ring.reserve(5), -EINVAL);
    EXPECT_EQ(ring.reserve(4), 0);
}

// Without SQPOLL: a full SQ, then every io_uring_enter fails.  Both forms
// return that error (the old `while (sq_space_left() < 2) submit();` spun
// for ever here).
TEST(RingReserve, EndsWithTheKernelsErrorWhenEnterKeepsFailing) {
    for (const int err : {EBUSY, EAGAIN, EBADR, EEXIST, EIO}) {
        const int status = in_child([err] {
            Ring ring(4);
            for (int i = 0; i < 4; ++i)
                if (!ring.prepare(op::Nop{})) return 10;
            if (!forbid_io_uring(static_cast<unsigned>(err), false)) return 11;
            if (ring.reserve(2) != -err) return 12;
            unsigned reaped = 0;
            if (ring.reserve(2, [&](const Completion&) { ++reaped; }) != -err) return 13;
            return reaped == 0 ? 0 : 14;
        });
        EXPECT_EQ(status, 0) << std::strerror(err) << " (142 = SIGALRM: reserve hung)";
    }
}

// The kernel refuses submissions (-EBUSY) but completions still come: the
// reaping form hands every completion of the earlier batch to its callback,
// and still ends with -EBUSY when the refusal never eases.
TEST(RingReserve, BackpressureThatNeverEasesReapsThenFails) {
    const int status = in_child([] {
        Ring ring(8);
        for (std::uint64_t i = 0; i < 4; ++i) ring.prepare(op::Nop{}).user_data(i);
        if (ring.submit() != 4) return 10;
        for (std::uint64_t i = 4; i < 8; ++i) ring.prepare(op::Nop{}).user_data(i);
        if (!refuse_io_uring_submission(EBUSY)) return 11;
        std::vector<int> seen(8, 0);
        const int r = ring.reserve(8, [&](const Completion& c) { ++seen.at(c.user_data); });
        if (r != -EBUSY) return 12;
        // The first four completed exactly once; the refused four never ran.
        return seen == std::vector<int>{1, 1, 1, 1, 0, 0, 0, 0} ? 0 : 13;
    });
    EXPECT_EQ(status, 0) << "(142 = SIGALRM: reserve hung)";
}

class StatBatch : public ::testing::Test {
protected:
    void SetUp() override {
        for (unsigned i = 0; i < 13; ++i) files.emplace_back(100 + i * 37, i);
        for (const auto& f : files) paths.push_back(f.path().c_str());
    }
    std::deque<testing::TempFile> files;
    std::vector<const char*> paths;
};

TEST_F(StatBatch, MoreFilesThanTheSqAllStatted) {
    Ring ring(4);
    std::vector<struct statx> st(paths.size());
    std::vector<int> res(paths.size(), 1);
    std::uint64_t calls = 0;
    ASSERT_EQ(fs::stat_batch(&ring, paths, 0, STATX_SIZE, st, res, calls), 0);
    for (std::size_t i = 0; i < paths.size(); ++i) {
        EXPECT_EQ(res[i], 0) << i;
        EXPECT_EQ(st[i].stx_size, 100 + i * 37) << i;
    }
}

TEST_F(StatBatch, EndsWithTheRingsErrorWhenEnterKeepsFailing) {
    for (const int err : {EBUSY, EBADR, EEXIST}) {
        const int status = in_child([&, err] {
            Ring ring(4);
            std::vector<struct statx> st(paths.size());
            std::vector<int> res(paths.size(), 1);
            std::uint64_t calls = 0;
            if (!forbid_io_uring(static_cast<unsigned>(err), false)) return 11;
            if (fs::stat_batch(&ring, paths, 0, STATX_SIZE, st, res, calls) != -err) return 12;
            for (int r : res)
                if (r != -err) return 13;
            // The statx SQEs it prepared may still run: their memory is kept.
            return kept_for_kernel() > 0 ? 0 : 14;
        });
        EXPECT_EQ(status, 0) << std::strerror(err) << " (142 = SIGALRM: stat_batch hung)";
    }
}

// Submissions refused after the first batch: what completed keeps its
// result, the rest report the error, and nothing waits for ever.
TEST_F(StatBatch, SubmissionRefusedAfterUseEndsWithTheError) {
    const int status = in_child([&] {
        Ring ring(4);
        std::vector<struct statx> st(paths.size());
        std::vector<int> res(paths.size(), 1);
        std::uint64_t calls = 0;
        // Stat the first four through the ring, then refuse every later submission.
        std::span<const char* const> first(paths.data(), 4);
        if (fs::stat_batch(&ring, first, 0, STATX_SIZE, std::span(st).first(4),
                           std::span(res).first(4), calls) != 0)
            return 10;
        if (!refuse_io_uring_submission(EIO)) return 11;
        if (fs::stat_batch(&ring, paths, 0, STATX_SIZE, st, res, calls) != -EIO) return 12;
        for (int r : res)
            if (r != -EIO) return 13;
        return 0;
    });
    EXPECT_EQ(status, 0) << "(142 = SIGALRM: stat_batch hung)";
}

}  // namespace
}  // namespace uringkit
