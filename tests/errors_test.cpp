// Setup and registration failures throw RingError naming the call, the errno
// and what it usually means: EINVAL for what this kernel does not know, EPERM
// when io_uring is forbidden (injected here with a seccomp filter in a forked
// child, as a container profile would), ENOSYS for a kernel without io_uring.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/buffer_ring.hpp"
#include "uringkit/sys/error.hpp"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

using namespace uringkit;
using namespace uringkit::testing;

namespace {
bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// Forks; the child forbids the three io_uring calls with `err`, creates a Ring
// and reports "OK" or "ERR <errno> <what()>" through a pipe.
std::string setup_under_seccomp(unsigned err) {
    Pipe report;
    const pid_t pid = ::fork();
    if (pid < 0) return "fork failed";
    if (pid == 0) {
        auto say = [&](const std::string& s) {
            (void)!::write(report.write_end.get(), s.data(), s.size());
            ::_exit(0);
        };
        sock_filter filter[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 3, 0),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_enter, 2, 0),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_register, 1, 0),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
        };
        sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
            say("SKIP seccomp");
        try {
            Ring ring(4);
            say("OK");
        } catch (const RingError& e) {
            say("ERR " + std::to_string(e.code().value()) + " " + e.call() + " | " + e.what());
        }
        say("NOTHING");
    }
    report.write_end.reset();
    std::string got;
    char buf[512];
    ssize_t n;
    while ((n = ::read(report.read_end.get(), buf, sizeof buf)) > 0) got.append(buf, static_cast<std::size_t>(n));
    int status = 0;
    ::waitpid(pid, &status, 0);
    return got;
}
}  // namespace

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

TEST(Errors, SeccompEpermSaysIoUringIsDisabled) {
    const auto got = setup_under_seccomp(EPERM);
    if (got.rfind("SKIP", 0) == 0) GTEST_SKIP() << "cannot install a seccomp filter: " << got;
    ASSERT_EQ(got.rfind("ERR 1 io_uring_setup | ", 0), 0u) << got;
    EXPECT_TRUE(contains(got, "Operation not permitted")) << got;
    EXPECT_TRUE(contains(got, "/proc/sys/kernel/io_uring_disabled")) << got;
    EXPECT_TRUE(contains(got, "seccomp")) << got;
}

TEST(Errors, EnosysSaysTheKernelHasNoIoUring) {
    const auto got = setup_under_seccomp(ENOSYS);
    if (got.rfind("SKIP", 0) == 0) GTEST_SKIP() << "cannot install a seccomp filter: " << got;
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
    EXPECT_THROW(BufferRing(ring, 1, 3, 64), RingError) << "a count that is not a power of two";
}

TEST(Errors, ExplainCoversTheUsualCauses) {
    EXPECT_TRUE(contains(explain("io_uring_register(REGISTER_BUFFERS)", ENOMEM), "RLIMIT_MEMLOCK"));
    EXPECT_TRUE(contains(explain("io_uring_setup", -EPERM), "io_uring_disabled")) << "negative errno accepted";
    EXPECT_TRUE(contains(explain("io_uring_register(REGISTER_FILES)", EMFILE), "ulimit -n"));
    EXPECT_TRUE(explain("io_uring_setup", ENOENT).empty()) << "nothing made up for an unusual errno";
    EXPECT_EQ(errno_code(-EBADF).value(), EBADF);
    EXPECT_EQ(errno_code(EBADF), errno_code(-EBADF));
}

TEST(Errors, HotPathReturnsTheKernelsResultInsteadOfThrowing) {
    Ring ring(2);
    char b[1];
    ring.prepare(op::Read(Fd{-1}, b, 1, 0)).user_data(1);
    EXPECT_EQ(reap_one(ring).res, -EBADF);
}
