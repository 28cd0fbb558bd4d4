// The fallbacks for setup flags and multishot recv, run on any kernel: a
// seccomp user-notification supervisor (tools/uring_supervisor.hpp) reads
// io_uring_params and answers EINVAL for the flags Linux 5.18, 5.19 or 6.0
// lacks, and marks multishot recvs so the kernel completes them with
// -EINVAL as 5.19 does.  Each test checks that the refusal really happened
// (the supervisor's counts), then that the fallback did the same work.
#include "files_test_support.hpp"
#include "tools/older_kernel.hpp"
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/buffer_ring.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>

namespace {

using namespace files_test;
using uringkit::Completion;
using uringkit::Fd;
using uringkit::Ring;
namespace op = uringkit::op;

constexpr unsigned kNewFlags =
    IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG;

// Runs `body` on a thread of its own under the faults of Linux `version`
// (the filter binds only that thread); what it returns is a failure text.
template <class Body>
std::string on_older_kernel(const char* version, Body body,
                            unsigned long* setups_refused = nullptr) {
    std::string failure;
    std::thread([&] {
        UringFaults f;
        older_kernel_faults(version, f);
        UringSupervisor sup(f);
        if (!sup.error().empty()) {
            failure = "skip: " + sup.error();
            return;
        }
        failure = body(sup);
        if (setups_refused) *setups_refused = sup.counts().setups_refused;
    }).join();
    return failure;
}

TEST(OlderKernelSetup, CreateDropsTheFlagsEachKernelLacksAndTheRingWorks) {
    {
        Ring now = Ring::create(8, uringkit::single_thread_options(16));
        if ((now.setup_flags() & kNewFlags) != kNewFlags)
            GTEST_SKIP()
                << "this kernel itself lacks DEFER_TASKRUN: the fallback is what runs everywhere";
    }
    for (const char* version : {"6.0", "5.19", "5.18"}) {
        unsigned long refused = 0;
        const std::string failure = on_older_kernel(
            version,
            [](UringSupervisor&) -> std::string {
                Ring ring = Ring::create(8, uringkit::single_thread_options(16));
                std::string f;
                if (ring.setup_flags() & kNewFlags)
                    f += "kept a flag the kernel refused: " + std::to_string(ring.setup_flags()) +
                         ";";
                if (ring.cq_entries() != 16) f += " CQ size lost;";
                // A read that completes after its submit, then NOPs: each user_data once, the bytes
                // right.
                uringkit::testing::Pipe pipe;
                char buf[8] = {};
                ring.prepare(op::Read(Fd{pipe.read_end.get()}, buf, sizeof buf, 0)).user_data(1);
                if (ring.submit() != 1) f += " submit;";
                if (::write(pipe.write_end.get(), "older", 5) != 5) f += " write;";
                for (std::uint64_t i = 2; i <= 4; ++i) ring.prepare(op::Nop{}).user_data(i);
                std::uint64_t seen = 0;
                for (int round = 0; round < 10 && seen != 0b11110; ++round) {
                    if (ring.submit_and_wait(1) < 0) f += " submit_and_wait;";
                    ring.for_each_completion([&](const Completion& c) {
                        if (seen >> c.user_data & 1)
                            f += " user_data " + std::to_string(c.user_data) + " twice;";
                        seen |= std::uint64_t{1} << c.user_data;
                        if (c.user_data == 1 && c.res != 5)
                            f += " read res " + std::to_string(c.res) + ";";
                    });
                }
                if (seen != 0b11110) f += " completions seen: mask " + std::to_string(seen);
                if (std::memcmp(buf, "older", 5) != 0) f += " the bytes read differ;";
                return f;
            },
            &refused);
        if (failure.rfind("skip: ", 0) == 0) GTEST_SKIP() << failure;
        EXPECT_EQ(failure, "") << "on " << version;
        EXPECT_GE(refused, 1u) << version
                               << ": the supervisor never refused a setup, so no fallback ran";
    }
}

TEST(OlderKernelSetup, FlagsTheKernelHasAreKept) {
    // 6.0 has SINGLE_ISSUER: a ring asking only for it is not refused.
    unsigned long refused = 0;
    const std::string failure = on_older_kernel(
        "6.0",
        [](UringSupervisor&) -> std::string {
            uringkit::RingOptions o;
            o.single_issuer = true;
            Ring ring = Ring::create(4, o);
            return ring.setup_flags() & IORING_SETUP_SINGLE_ISSUER ? "" : "SINGLE_ISSUER dropped";
        },
        &refused);
    if (failure.rfind("skip: ", 0) == 0) GTEST_SKIP() << failure;
    EXPECT_EQ(failure, "");
    EXPECT_EQ(refused, 0u);
}

// The tools on those kernels: readfiles, cp and bench's uring and liburing
// engines set up their rings without the refused flags and do the same work.
class OlderKernelTools : public testing::TestWithParam<const char*> {};

TEST_P(OlderKernelTools, ReadfilesAndCpGiveTheSameBytes) {
    Scratch s;
    stdfs::create_directories(s.dir / "t" / "sub");
    write_file(s / "t/a", random_bytes(4097, 1));
    write_file(s / "t/sub/b", random_bytes(300000, 2));
    const Child ref = run({URINGKIT_CLI, "readfiles", "--engine", "sync", s / "t"});
    ASSERT_EQ(ref.status, 0) << ref.err;
    const Child rf = run({NO_URING, "--kernel", GetParam(), "--report", URINGKIT_CLI, "readfiles",
                          "--engine", "ring", s / "t"});
    EXPECT_EQ(rf.status, 0) << rf.err;
    EXPECT_EQ(rf.out, ref.out);
    EXPECT_EQ(rf.err.find("no_uring: 0 setups"), std::string::npos)
        << "nothing was refused: " << rf.err;
    const Child c = run(
        {NO_URING, "--kernel", GetParam(), "--report", URINGKIT_CLI, "cp", "-r", s / "t", s / "u"});
    EXPECT_EQ(c.status, 0) << c.err;
    EXPECT_EQ(c.err.find("no_uring: 0 setups"), std::string::npos)
        << "nothing was refused: " << c.err;
    EXPECT_EQ(read_file(s / "u/a"), read_file(s / "t/a"));
    EXPECT_EQ(read_file(s / "u/sub/b"), read_file(s / "t/sub/b"));
}

TEST_P(OlderKernelTools, BenchRunsItsRingEngines) {
    const Child r = run({NO_URING, "--kernel", GetParam(), "--report", URINGKIT_CLI, "bench",
                         "--size", "4m", "--ios", "2000", "--ramp", "0", "--rounds", "1",
                         "--engines", "uring,uring-reg,liburing", "--json", "-"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.find("no_uring: 0 setups"), std::string::npos)
        << "nothing was refused: " << r.err;
    const auto j = nlohmann::json::parse(r.out);
    std::size_t ok = 0;
    for (const auto& row : j["rows"]) {
        const std::string engine = row["engine"];
        const std::string reason =
            row.contains("reason") && row["reason"].is_string() ? row["reason"] : "";
        if (engine == "liburing" && row["status"] == "unavailable" &&
            reason.find("not built") != std::string::npos)
            continue;  // built without liburing
        EXPECT_EQ(row["status"], "ok") << engine << ": " << reason;
        ++ok;
    }
    EXPECT_GE(ok, 2u) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Kernels, OlderKernelTools, testing::Values("6.0", "5.19"),
                         [](const testing::TestParamInfo<const char*>& i) {
                             std::string n = std::string("Linux") + i.param;
                             n.erase(std::remove(n.begin(), n.end(), '.'), n.end());
                             return n;
                         });

// The supervisor's multishot refusal is the kernel's own answer: the recv
// completes once, with -EINVAL and without IORING_CQE_F_MORE.
TEST(OlderKernelSetup, MultishotRecvCompletesWithEinvalAsOn519) {
    const std::string failure = on_older_kernel("5.19", [](UringSupervisor& sup) -> std::string {
        Ring ring(8);
        uringkit::BufferRing group(ring, 0, 2, 64);
        uringkit::testing::SocketPair sp;
        ring.prepare(op::Recv::provided(Fd{sp.fd[0]}, 0).multishot()).user_data(7);
        const auto c = uringkit::testing::reap_one(ring);
        std::string f;
        if (c.user_data != 7 || c.res != -EINVAL || c.more())
            f = "got user_data " + std::to_string(c.user_data) + " res " + std::to_string(c.res);
        if (sup.counts().recvs_refused == 0) f += " the supervisor marked no recv";
        return f;
    });
    if (failure.rfind("skip: ", 0) == 0) GTEST_SKIP() << failure;
    EXPECT_EQ(failure, "");
}

}  // namespace
