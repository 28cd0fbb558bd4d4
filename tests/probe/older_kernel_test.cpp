// The tools on a kernel older than the features they prefer, on any kernel:
// a seccomp filter answers io_uring_register's newer opcodes with EINVAL, as
// a kernel before them does (tools/older_kernel.hpp, through no_uring
// --refuse-register), and `setarch --uname-2.6` makes uname report a release
// below the minimum.  Each fallback must still give the same bytes.
#include "tools/older_kernel.hpp"
#include "files_test_support.hpp"
#include "probe/kernel.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/uapi.hpp"

#include <nlohmann/json.hpp>

#include <cstring>
#include <string>
#include <thread>

namespace {

using namespace files_test;
using uringkit::probe::KernelVersion;

const std::string kSparseFiles = std::to_string(IORING_REGISTER_FILES2);  // sparse tables: 5.19
const std::string kOpcodeProbe = std::to_string(IORING_REGISTER_PROBE);   // 5.6

void make_tree(const Scratch& s) {
    stdfs::create_directories(s.dir / "t" / "sub");
    write_file(s / "t/a", random_bytes(0, 1));
    write_file(s / "t/b", random_bytes(4097, 2));
    write_file(s / "t/sub/c", random_bytes(300000, 3));
    write_file(s / "t/sub/d", random_bytes(65536, 4));
}

TEST(KernelVersion, ParsesTheReleaseAndComparesWithTheMinimum) {
    EXPECT_EQ(uringkit::probe::parse_kernel_release("6.1.0-57-amd64"), (KernelVersion{6, 1}));
    EXPECT_EQ(uringkit::probe::parse_kernel_release("6.12.117+deb12-amd64"),
              (KernelVersion{6, 12}));
    EXPECT_EQ(uringkit::probe::parse_kernel_release("5.15"), (KernelVersion{5, 15}));
    EXPECT_FALSE(uringkit::probe::parse_kernel_release("linux"));
    EXPECT_FALSE(uringkit::probe::parse_kernel_release("6"));
    EXPECT_LT((KernelVersion{5, 19}), uringkit::probe::kMinKernel);
    EXPECT_LT((KernelVersion{6, 0}), (KernelVersion{6, 12}));
    EXPECT_EQ(uringkit::probe::below_minimum_notice("6.1.0-57-amd64"), "");
    EXPECT_EQ(uringkit::probe::below_minimum_notice("6.18.4"), "");
    const std::string old = uringkit::probe::below_minimum_notice("5.15.0-91-generic");
    EXPECT_NE(old.find("kernel 5.15.0-91-generic is older than 6.1"), std::string::npos) << old;
    EXPECT_EQ(old.find('\n'), std::string::npos);
}

TEST(KernelVersion, EveryFeatureNamesTheKernelItNeedsOldestFirst) {
    KernelVersion last{};
    for (const auto& f : uringkit::probe::feature_needs()) {
        EXPECT_LE(last, f.needs) << f.name;
        EXPECT_GE(f.needs, (KernelVersion{5, 1})) << f.name;
        last = f.needs;
        EXPECT_EQ(uringkit::probe::feature_need(f.name), f.needs);
    }
    EXPECT_FALSE(uringkit::probe::feature_need("no_such_feature"));
}

TEST(OlderKernel, RingWithoutRegisteredRingFdsIsEnteredThroughItsFd) {
    // The filter binds only this thread, so the rest of the suite is untouched.
    std::string failure;
    std::thread([&] {
        if (!refuse_register_opcodes({IORING_REGISTER_RING_FDS})) {
            failure = std::string("seccomp: ") + std::strerror(errno);
            return;
        }
        uringkit::Ring ring = uringkit::Ring::create(8, uringkit::single_thread_options(16));
        if (ring.ring_fd_registered()) failure = "the refused registration was reported as done";
        for (std::uint64_t i = 1; i <= 3; ++i) ring.prepare(uringkit::op::Nop{}).user_data(i);
        if (ring.submit_and_wait(3) != 3) failure += " submit_and_wait did not take the 3 NOPs;";
        std::uint64_t seen = 0;
        ring.for_each_completion([&](const uringkit::Completion& c) {
            if (c.res != 0) failure += " NOP res " + std::to_string(c.res) + ";";
            seen |= std::uint64_t{1} << c.user_data;
        });
        if (seen != 0b1110) failure += " user_data came back as mask " + std::to_string(seen);
    }).join();
    EXPECT_EQ(failure, "");
}

TEST(OlderKernel, ReadfilesWithoutSparseFileTablesReadsWithBlockingCallsSameOutput) {
    Scratch s;
    make_tree(s);
    for (const char* threads : {"1", "2"}) {
        const Child ref = run({URINGKIT_CLI, "readfiles", "--engine", "sync", s / "t"});
        ASSERT_EQ(ref.status, 0) << ref.err;
        ASSERT_EQ(count(ref.out, "\n"), 4u);
        const Child old = run({NO_URING, "--refuse-register", kSparseFiles, URINGKIT_CLI,
                               "readfiles", "--engine", "ring", "--threads", threads, s / "t"});
        EXPECT_EQ(old.status, 0) << old.err;
        EXPECT_EQ(old.out, ref.out) << "threads " << threads;
        // Said, naming the feature, not an error from the top.
        EXPECT_NE(old.err.find("sparse file table"), std::string::npos) << old.err;
        EXPECT_EQ(old.err.find("uringkit: io_uring_register"), std::string::npos) << old.err;
    }
}

TEST(OlderKernel, CpWithoutSparseFileTablesCopiesWithReadWriteByteIdentical) {
    Scratch s;
    make_tree(s);
    const Child old = run({NO_URING, "--refuse-register", kSparseFiles, URINGKIT_CLI, "cp", "-r",
                           "--copy-threads", "0", s / "t", s / "u"});
    ASSERT_EQ(old.status, 0) << old.err;
    for (const char* f : {"a", "b", "sub/c", "sub/d"})
        EXPECT_EQ(read_file(s / (std::string("u/") + f)), read_file(s / (std::string("t/") + f)))
            << f;
    EXPECT_EQ(count(old.err, "sparse file table"), 1u) << old.err;
    EXPECT_NE(old.err.find("copying with read/write"), std::string::npos) << old.err;
}

TEST(OlderKernel, ServeWithoutProvidedBufferRingsNamesTheFeature) {
    const std::string pbuf = std::to_string(IORING_REGISTER_PBUF_RING);
    // --engine uring refuses with status 3 before listening, naming what is missing.
    const Child r = run({NO_URING, "--refuse-register", pbuf, URINGKIT_CLI, "serve", "--engine",
                         "uring", "--port", "0"});
    EXPECT_EQ(r.status, 3) << r.err;
    EXPECT_EQ(count(r.err, "provided buffer ring, Linux 5.19"), 1u) << r.err;
}

TEST(OlderKernel, ProbeWithoutOpcodeProbeStillReportsAndTrials) {
    Scratch s;
    const Child old = run({NO_URING, "--refuse-register", kOpcodeProbe, URINGKIT_CLI, "probe",
                           "--json", "--dir", s.dir});
    ASSERT_EQ(old.status, 0) << old.err;
    const auto j = nlohmann::json::parse(old.out);
    EXPECT_TRUE(j["opcodes"]["last_op"].is_null());
    EXPECT_EQ(j["opcodes"]["probe_errno"], EINVAL);
    EXPECT_TRUE(j["opcodes"]["supported"].empty());
    EXPECT_FALSE(j["trials"].empty());
}

TEST(ProbeJson, SaysTheMinimumKernelAndWhatEachTrialNeeds) {
    Scratch s;
    const Child r = run({URINGKIT_CLI, "probe", "--json", "--dir", s.dir});
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["min_kernel"], "6.1");
    const auto v = uringkit::probe::parse_kernel_release(j["kernel"]["release"].get<std::string>());
    ASSERT_TRUE(v);
    EXPECT_EQ(j["min_kernel_ok"], *v >= uringkit::probe::kMinKernel);
    ASSERT_FALSE(j["trials"].empty());
    for (const auto& t : j["trials"]) {
        const auto need = uringkit::probe::feature_need(t["name"].get<std::string>());
        ASSERT_TRUE(need) << t["name"] << " is missing from the feature table";
        EXPECT_EQ(t["needs"], need->str()) << t["name"];
    }
    EXPECT_EQ(j["trials"][0]["name"], "nop");
    EXPECT_EQ(j["trials"][0]["needs"], "5.1");
}

TEST(OlderKernel, BelowTheMinimumEveryToolSaysSoInOneLine) {
    if (!have_program("setarch")) GTEST_SKIP() << "setarch (util-linux) is not installed";
    // UNAME26: uname reports 2.6.x, as a kernel far below the minimum would.
    if (run({"setarch", "x86_64", "--uname-2.6", "true"}).status != 0)
        GTEST_SKIP() << "setarch --uname-2.6 is refused here";
    Scratch s;
    make_tree(s);
    const Child probe =
        run({"setarch", "x86_64", "--uname-2.6", URINGKIT_CLI, "probe", "--json", "--dir", s.dir});
    ASSERT_EQ(probe.status, 0) << probe.err;
    const auto j = nlohmann::json::parse(probe.out);
    EXPECT_EQ(j["min_kernel_ok"], false);
    EXPECT_EQ(j["kernel"]["release"].get<std::string>().rfind("2.6.", 0), 0u);
    EXPECT_EQ(count(probe.err, "older than 6.1"), 1u) << probe.err;
    EXPECT_EQ(count(probe.err, "\n"), 1u) << probe.err;
    // Another tool: the same one line, and its work still done.
    const Child rf = run({"setarch", "x86_64", "--uname-2.6", URINGKIT_CLI, "readfiles", s / "t"});
    EXPECT_EQ(rf.status, 0) << rf.err;
    EXPECT_EQ(count(rf.out, "\n"), 4u);
    EXPECT_EQ(count(rf.err, "older than 6.1"), 1u) << rf.err;
    // At or above the minimum nothing is said.
    const auto v = uringkit::probe::parse_kernel_release(uringkit::probe::running_kernel_release());
    if (!v || *v < uringkit::probe::kMinKernel) return;
    const Child now = run({URINGKIT_CLI, "readfiles", s / "t"});
    EXPECT_EQ(now.err.find("older than"), std::string::npos) << now.err;
}

}  // namespace
