// Setup and registration failures throw RingError naming the call, the errno
// and what it usually means: EINVAL for what this kernel does not know, EPERM
// when io_uring is forbidden (injected by running this program again under
// tests/tools/no_uring, the seccomp filter a container profile would install),
// ENOSYS for a kernel without io_uring.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/buffer_ring.hpp"
#include "uringkit/sys/error.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>

using namespace uringkit;
using namespace uringkit::testing;

namespace {
bool contains(const std::string& s, const char* part) {
    return s.find(part) != std::string::npos;
}

// The child half: runs inside this same program, re-executed under no_uring
// (tests/tools/no_uring.cpp, the seccomp filter a container profile would
// install), and prints what creating a ring says.
constexpr const char* kChildEnv = "URINGKIT_ERRORS_TEST_CHILD";

// Re-executes this test binary under no_uring with io_uring failing with
// `err`, runs only the child test and returns what it printed.
std::string setup_under_no_uring(int err) {
    const std::string cmd = std::string(kChildEnv) + "=1 " NO_URING " --errno " +
                            std::to_string(err) + " /proc/" + std::to_string(::getpid()) +
                            "/exe --gtest_filter=ErrorsChild.* 2>&1";
    std::string out;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
        char buf[512];
        std::size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
        ::pclose(p);
    }
    const auto at = out.find("RESULT ");
    if (at == std::string::npos) return "no result: " + out;
    return out.substr(at + 7, out.find('\n', at) - at - 7);
}
}  // namespace

// Not a test on its own: the body the parent runs under no_uring.
TEST(ErrorsChild, CreateARing) {
    if (!std::getenv(kChildEnv)) GTEST_SKIP() << "runs only re-executed under no_uring by Errors.*";
    try {
        Ring ring(4);
        std::printf("RESULT OK\n");
    } catch (const RingError& e) {
        std::printf("RESULT ERR %d %s | %s\n", e.code().value(), e.call(), e.what());
    }
}

TEST(Errors, ZeroEntriesIsExplainedEinval) {
    try {
        Ring ring(0);
        FAIL() << "io_uring_setup(0) succeeded";
    } catch (const RingError& e) {
        EXPECT_STREQ(e.call(), "io_uring_setup");
        EXPECT_EQ(e.code().value(), EINVAL);
        EXPECT_TRUE(contains(e.what(), "io_uring_setup: Invalid argument")) << e.what();
        EXPECT_TRUE(contains(e.what(), "flag or size this kernel does not know")) << e.what();
    }
}

TEST(Errors, UnknownSetupFlagIsExplainedEinval) {
    try {
        Ring ring(4, {.extra_flags = 1u << 30});
        FAIL() << "a setup flag from the future was accepted";
    } catch (const RingError& e) {
        EXPECT_EQ(e.code().value(), EINVAL);
        EXPECT_TRUE(contains(e.what(), "try fewer flags")) << e.what();
    }
}

// SQE128, CQE32 and NO_MMAP change the ring layout the Ring relies on:
// refused before any system call, by name, not set up and misread.
TEST(Errors, LayoutChangingExtraFlagsAreRefusedByName) {
    // The big layout is a BigRing's; rings in memory of ours are not offered.
    const std::tuple<std::uint32_t, const char*, const char*> flags[] = {
        {IORING_SETUP_SQE128, "SQE128", "makes a BigRing"},
        {IORING_SETUP_CQE32, "CQE32", "makes a BigRing"},
        {IORING_SETUP_NO_MMAP, "NO_MMAP", "not supported"},
        {IORING_SETUP_NO_MMAP | IORING_SETUP_REGISTERED_FD_ONLY, "NO_MMAP", "not supported"},
    };
    for (const auto& [flag, name, says] : flags) {
        try {
            Ring ring(4, {.extra_flags = flag});
            ADD_FAILURE() << name << " was accepted";
        } catch (const RingError& e) {
            EXPECT_EQ(e.code().value(), EINVAL);
            EXPECT_TRUE(contains(e.what(), name)) << e.what();
            EXPECT_TRUE(contains(e.what(), says)) << e.what();
        }
    }
}

// What io_uring_enter's own errors mean, in the message a tool prints.
TEST(Errors, EnterErrorsAreExplained) {
    EXPECT_TRUE(contains(RingError("io_uring_enter", EBADR).what(), "dropped completions"));
    EXPECT_TRUE(
        contains(RingError("io_uring_enter", -EBUSY).what(), "until completions are reaped"));
    EXPECT_TRUE(contains(RingError("io_uring_enter", EEXIST).what(), "SINGLE_ISSUER"));
}

TEST(Errors, SeccompEpermSaysIoUringIsDisabled) {
    const auto got = setup_under_no_uring(EPERM);
    ASSERT_EQ(got.rfind("ERR 1 io_uring_setup | ", 0), 0u) << got;
    EXPECT_TRUE(contains(got, "Operation not permitted")) << got;
    EXPECT_TRUE(contains(got, "/proc/sys/kernel/io_uring_disabled")) << got;
    EXPECT_TRUE(contains(got, "seccomp")) << got;
}

TEST(Errors, EnosysSaysTheKernelHasNoIoUring) {
    const auto got = setup_under_no_uring(ENOSYS);
    ASSERT_EQ(got.rfind("ERR 38 io_uring_setup | ", 0), 0u) << got;
    EXPECT_TRUE(contains(got, "CONFIG_IO_URING")) << got;
}

TEST(Errors, RegistrationFailuresNameTheCall) {
    Ring ring(4);
    try {
        ring.register_eventfd(-1);
        FAIL() << "registered eventfd -1";
    } catch (const RingError& e) {
        EXPECT_EQ(e.code().value(), EBADF);
        EXPECT_TRUE(contains(e.what(), "io_uring_register(REGISTER_EVENTFD)")) << e.what();
    }
    try {
        ring.unregister_buffers();
        FAIL() << "unregistered buffers that were never registered";
    } catch (const RingError& e) {
        EXPECT_EQ(e.code().value(), ENXIO);
        EXPECT_TRUE(contains(e.what(), "UNREGISTER_BUFFERS")) << e.what();
    }
    // A bad argument is not a failed io_uring call (error_rule_test.cpp).
    EXPECT_THROW(BufferRing(ring, 1, 3, 64), std::invalid_argument)
        << "a count that is not a power of two";
}

TEST(Errors, ExplainCoversTheUsualCauses) {
    // Registered buffers count against RLIMIT_MEMLOCK without CAP_IPC_LOCK on
    // every kernel; the rings themselves depend on the kernel.
    const std::string pinned = explain("io_uring_register(REGISTER_BUFFERS)", ENOMEM);
    EXPECT_TRUE(contains(pinned, "RLIMIT_MEMLOCK") && contains(pinned, "CAP_IPC_LOCK")) << pinned;
    EXPECT_FALSE(contains(pinned, "ring's memory")) << pinned;
    const std::string setup = explain("io_uring_setup", ENOMEM);
    EXPECT_TRUE(contains(setup, "memory cgroup") && contains(setup, "6.1 does not")) << setup;
    EXPECT_FALSE(contains(explain("mmap of a probe buffer", ENOMEM), "RLIMIT_MEMLOCK"));
    EXPECT_FALSE(contains(
        explain("io_uring_register(REGISTER_PBUF_RING: a provided buffer ring, Linux 5.19)",
                ENOMEM),
        "RLIMIT_MEMLOCK"));
    EXPECT_TRUE(contains(explain("io_uring_setup", -EPERM), "io_uring_disabled"))
        << "negative errno accepted";
    EXPECT_TRUE(contains(explain("io_uring_register(REGISTER_FILES)", EMFILE), "ulimit -n"));
    EXPECT_TRUE(explain("io_uring_setup", ENOENT).empty())
        << "nothing made up for an unusual errno";
    EXPECT_EQ(errno_code(-EBADF).value(), EBADF);
    EXPECT_EQ(errno_code(EBADF), errno_code(-EBADF));
}

TEST(Errors, HotPathReturnsTheKernelsResultInsteadOfThrowing) {
    Ring ring(2);
    char b[1];
    ring.prepare(op::Read(Fd{-1}, b, 1, 0)).user_data(1);
    EXPECT_EQ(reap_one(ring).res, -EBADF);
}
