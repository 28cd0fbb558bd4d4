// Reaping without waiting (a peek: for_each_completion, copy_completions)
// sees completions the kernel holds until the ring is entered, as liburing's
// peek does:
// - DEFER_TASKRUN rings run completion work only when the ring is entered.
//   single_thread_options() asks for IORING_SETUP_TASKRUN_FLAG, so the
//   kernel raises IORING_SQ_TASKRUN when work waits, and a peek enters then,
//   and only then (entering on every peek would defeat the deferral).
// - IOPOLL rings (without SQPOLL) post a completion only when someone polls
//   for it: a peek that finds the CQ empty enters with GETEVENTS
//   (liburing's INT_FLAG_CQ_ENTER).
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string_view>

using namespace uringkit;
using namespace uringkit::testing;

namespace {

TEST(RingPeek, DeferTaskrunPeekSeesTheCompletionAndEntersOnlyWhenAsked) {
    Ring ring = Ring::create(8, single_thread_options());
    if (!(ring.setup_flags() & IORING_SETUP_DEFER_TASKRUN))
        GTEST_SKIP() << "no DEFER_TASKRUN (6.1)";
    EXPECT_TRUE(ring.setup_flags() & IORING_SETUP_TASKRUN_FLAG);
    for (const bool copy : {false, true}) {
        SCOPED_TRACE(copy ? "copy_completions" : "for_each_completion");
        std::vector<Completion> got;
        auto peek = [&] {
            if (copy) {
                std::array<Completion, 4> out{};
                const unsigned n = ring.copy_completions(out);
                got.insert(got.end(), out.begin(), out.begin() + n);
            } else {
                ring.for_each_completion([&](const Completion& c) { got.push_back(c); });
            }
        };
        // A socket, not a pipe: on 6.1 a blocking pipe read is handed to an
        // io-wq worker once its poll fires, and its CQE comes from that
        // thread after the peek returned (failed every run on Debian's 6.1).
        int sv[2];
        ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        const UniqueFd reader(sv[0]), writer(sv[1]);
        char buf[16] = {};
        ring.prepare(op::Read(Fd{reader.get()}, buf, sizeof buf, ~std::uint64_t{0})).user_data(7);
        ASSERT_EQ(ring.submit(), 1);
        // Nothing to complete yet: the peek finds nothing and makes no system call.
        const auto calls = ring.enter_calls();
        peek();
        EXPECT_TRUE(got.empty());
        EXPECT_EQ(ring.enter_calls(), calls) << "a peek with no work pending must not enter";
        // The write wakes the read; its completion is now deferred work.
        ASSERT_EQ(::write(writer.get(), "hello", 5), 5);
        EXPECT_TRUE(ring.sq_flags() & IORING_SQ_TASKRUN) << "the kernel says work is waiting";
        peek();
        ASSERT_EQ(got.size(), 1u) << "the peek did not run the deferred completion";
        EXPECT_EQ(got[0].user_data, 7u);
        EXPECT_EQ(got[0].res, 5);
        EXPECT_EQ(std::string_view(buf, 5), "hello");
        EXPECT_EQ(ring.enter_calls(), calls + 1);
    }
}

// Falls back without DEFER_TASKRUN where the kernel lacks it: TASKRUN_FLAG
// alone needs COOP_TASKRUN or DEFER_TASKRUN, so it must go too.
TEST(RingPeek, SingleThreadOptionsStillMakeARing) {
    const RingOptions o = single_thread_options();
    EXPECT_TRUE(o.taskrun_flag);
    Ring ring = Ring::create(4, o);
    ring.prepare(op::Nop{}).user_data(3);
    EXPECT_EQ(reap_one(ring).user_data, 3u);
}

struct FreeDeleter {
    void operator()(void* p) const noexcept { std::free(p); }
};

// One O_DIRECT read of block 1 of `fd` on an IOPOLL ring, then peeks until
// its completion shows.  The kernel's result, or nullopt when no peek ever
// saw it.
std::optional<int> peek_polled_read(Ring& ring, int fd, void* buf, std::size_t block) {
    ring.prepare(op::Read(Fd{fd}, buf, static_cast<std::uint32_t>(block), block)).user_data(9);
    if (ring.submit() != 1) return std::nullopt;
    // The deadline only stops a peek that never polls from spinning for ever
    // (a polled device answers in microseconds).
    std::optional<int> res;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!res && std::chrono::steady_clock::now() < give_up)
        ring.for_each_completion([&](const Completion& c) {
            if (c.user_data == 9) res = c.res;
        });
    return res;
}

// A device with poll queues: null_blk loaded with poll_queues (5.13), where
// this test may load it (root, the module available, not in a container).
std::string nullb_with_poll_queues(std::string& why) {
    if (::access("/dev/nullb0", F_OK) != 0 &&
        std::system("modprobe null_blk nr_devices=1 queue_mode=2 submit_queues=1 poll_queues=1 "
                    ">/dev/null 2>&1") != 0) {
        why = "modprobe null_blk poll_queues=1 failed (no module, not root, or in a container)";
        return {};
    }
    std::ifstream q("/sys/block/nullb0/queue/io_poll");
    int on = 0;
    if (!(q >> on) || !on) {
        why = "/dev/nullb0 exists without poll queues (loaded earlier without poll_queues=)";
        return {};
    }
    return "/dev/nullb0";
}

TEST(RingPeek, IopollPeekPollsForTheCompletion) {
    constexpr std::size_t kBlock = 4096;
    void* mem = nullptr;
    ASSERT_EQ(::posix_memalign(&mem, kBlock, kBlock), 0);
    std::unique_ptr<void, FreeDeleter> buf(mem);
    // A file in TMPDIR first: on a device with poll queues (NVMe with
    // poll_queues=N) the read is polled and its bytes are checked.
    TempFile file(4 * kBlock, 5);
    const int fd = ::open(file.path().c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd >= 0) {
        UniqueFd direct(fd);
        Ring ring(8, RingOptions{.iopoll = true});
        const auto res = peek_polled_read(ring, direct.get(), buf.get(), kBlock);
        ASSERT_TRUE(res) << "a peek on an IOPOLL ring never polled";
        if (*res != -EOPNOTSUPP) {
            ASSERT_EQ(*res, static_cast<int>(kBlock));
            const auto want = pattern(4 * kBlock, 5);
            EXPECT_EQ(std::memcmp(buf.get(), want.data() + kBlock, kBlock), 0);
            return;
        }
    }
    // Its device has no poll queues (-EOPNOTSUPP): null_blk, if it can be had.
    std::string why;
    const std::string dev = nullb_with_poll_queues(why);
    if (dev.empty()) GTEST_SKIP() << "no block device with poll queues for IOPOLL: " << why;
    UniqueFd nullb(::open(dev.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
    if (nullb.get() < 0) GTEST_SKIP() << dev << ": " << std::strerror(errno);
    Ring ring(8, RingOptions{.iopoll = true});
    const auto res = peek_polled_read(ring, nullb.get(), buf.get(), kBlock);
    ASSERT_TRUE(res) << "a peek on an IOPOLL ring never polled";
    EXPECT_EQ(*res, static_cast<int>(kBlock));
}

}  // namespace
