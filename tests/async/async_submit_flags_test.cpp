// SQE flags an op sets in its own prepare() that reach past its SQE.
// Defect of the first loop: an op whose prepare() set IOSQE_IO_LINK (or
// HARDLINK), awaited through submit(), linked the next SQE in the ring
// behind it, which could be another task's: a bystander NOP waited for
// someone else's recv.  Links exist only inside chain().
#include "uring_test_support.hpp"
#include "uringkit/async/loop.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <string>
#include <vector>

using namespace uringkit;
using namespace std::chrono_literals;

namespace {

using uringkit::testing::Pipe;

// A read that asks for a link itself, as a user's own op type might.
struct LinkingRead {
    [[maybe_unused]] static constexpr std::uint8_t code = IORING_OP_READ;  // as every op declares
    op::Read read;
    std::uint8_t flag;
    void prepare(io_uring_sqe& s) const noexcept {
        read.prepare(s);
        s.flags |= flag;
    }
};

class SubmitFlags : public ::testing::TestWithParam<std::uint8_t> {};

// Task A waits on a pipe read that carries the link flag; task B's NOP is
// prepared after it in the same submission.  Unlinked, B's NOP completes
// first and B's write then answers A; linked, the NOP would wait for the
// read, which only the safety timer ends.  The order decides, not a time.
TEST_P(SubmitFlags, AnOpsOwnLinkDoesNotHoldTheNextTasksSqe) {
    Ring ring(8);
    async::Loop loop(ring);
    Pipe pipe;
    std::vector<std::string> order;
    char buf[8] = {};
    loop.spawn([](async::Loop& l, Pipe& p, char* b, std::vector<std::string>& o,
                  std::uint8_t flag) -> async::Task<void> {
        const async::Result r =
            co_await l.submit(LinkingRead{op::Read(Fd{p.read_end.get()}, b, 1, 0), flag});
        o.push_back("read " + std::to_string(r.res));
    }(loop, pipe, buf, order, GetParam()));
    loop.spawn([](async::Loop& l, Pipe& p, std::vector<std::string>& o) -> async::Task<void> {
        const async::Result r = co_await l.nop();
        o.push_back("nop " + std::to_string(r.res));
        (void)!::write(p.write_end.get(), "x", 1);
    }(loop, pipe, order));
    loop.spawn([](async::Loop& l, Pipe& p) -> async::Task<void> {
        (void)co_await l.sleep(5s);  // only if the NOP was held behind the read
        (void)!::write(p.write_end.get(), "y", 1);
    }(loop, pipe));
    while (order.size() < 2) loop.run_once();
    ASSERT_EQ(order.size(), 2u);
    EXPECT_EQ(order[0], "nop 0") << "the NOP was linked behind another task's read";
    EXPECT_EQ(order[1], "read 1");
    EXPECT_EQ(buf[0], 'x');
    loop.stop();
}

INSTANTIATE_TEST_SUITE_P(LinkFlags, SubmitFlags,
                         ::testing::Values(std::uint8_t{IOSQE_IO_LINK},
                                           std::uint8_t{IOSQE_IO_HARDLINK}));

struct SkippingNop {
    static constexpr std::uint8_t code = IORING_OP_NOP;
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.flags |= IOSQE_CQE_SKIP_SUCCESS;
    }
};

// IOSQE_CQE_SKIP_SUCCESS would leave the awaiter without its completion
// (it waited forever; the sentinel timer ends the test then).
TEST(SubmitFlagsSkip, AnOpsOwnSkipSuccessStillResumesTheAwaiter) {
    Ring ring(8);
    async::Loop loop(ring);
    std::vector<std::string> order;
    loop.spawn([](async::Loop& l, std::vector<std::string>& o) -> async::Task<void> {
        const async::Result r = co_await l.submit(SkippingNop{});
        o.push_back("nop " + std::to_string(r.res));
    }(loop, order));
    loop.spawn([](async::Loop& l, std::vector<std::string>& o) -> async::Task<void> {
        (void)co_await l.sleep(5s);
        o.push_back("sentinel");
    }(loop, order));
    while (order.empty()) loop.run_once();
    EXPECT_EQ(order[0], "nop 0") << "the awaiter never heard its completion";
}

// Inside a chain the links stay: the last op's own link is cleared, so the
// next SQE in the ring is not held behind the chain.
TEST(SubmitFlagsChain, TheLastOpOfAChainLinksToNothing) {
    Ring ring(8);
    async::Loop loop(ring);
    Pipe pipe;
    std::vector<std::string> order;
    char buf[8] = {};
    loop.spawn(
        [](async::Loop& l, Pipe& p, char* b, std::vector<std::string>& o) -> async::Task<void> {
            const auto r = co_await l.chain(
                op::Nop{}, LinkingRead{op::Read(Fd{p.read_end.get()}, b, 1, 0), IOSQE_IO_LINK});
            o.push_back("chain " + std::to_string(r[0].res) + " " + std::to_string(r[1].res));
        }(loop, pipe, buf, order));
    loop.spawn([](async::Loop& l, Pipe& p, std::vector<std::string>& o) -> async::Task<void> {
        const async::Result r = co_await l.nop();
        o.push_back("nop " + std::to_string(r.res));
        (void)!::write(p.write_end.get(), "x", 1);
    }(loop, pipe, order));
    loop.spawn([](async::Loop& l, Pipe& p) -> async::Task<void> {
        (void)co_await l.sleep(5s);
        (void)!::write(p.write_end.get(), "y", 1);
    }(loop, pipe));
    while (order.size() < 2) loop.run_once();
    EXPECT_EQ(order[0], "nop 0");
    EXPECT_EQ(order[1], "chain 0 1");
    EXPECT_EQ(buf[0], 'x');
}

}  // namespace
