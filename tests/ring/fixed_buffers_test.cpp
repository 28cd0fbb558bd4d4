// Registered buffers: write_fixed and read_fixed move the right bytes at the
// right offsets, a range outside the registered buffer is refused, and a
// registration over RLIMIT_MEMLOCK fails with an explanation naming the limit.
#include "tools/memlock_limit.hpp"
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/sys/error.hpp"

#include <sys/mman.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>

using namespace uringkit;
using namespace uringkit::testing;

namespace {
struct Mapped {
    std::byte* p;
    std::size_t n;
    explicit Mapped(std::size_t size) : n(size) {
        void* m = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) throw std::runtime_error("mmap");
        p = static_cast<std::byte*>(m);
    }
    ~Mapped() { ::munmap(p, n); }
};
}  // namespace

TEST(FixedBuffers, WriteFixedThenReadFixedRoundTrip) {
    Ring ring(8);
    Mapped a(64 * 1024), b(64 * 1024);
    const iovec regs[2] = {{a.p, a.n}, {b.p, b.n}};
    ring.register_buffers(regs);

    const auto data = pattern(a.n, 4);
    std::memcpy(a.p, data.data(), a.n);
    TempFile file;
    ring.prepare(op::WriteFixed(Fd{file.fd()}, a.p, 64 * 1024, 8192, 0)).user_data(1);
    ASSERT_EQ(reap_one(ring).res, 64 * 1024);
    const auto on_disk = file.contents();
    ASSERT_EQ(on_disk.size(), 8192u + a.n);
    EXPECT_EQ(std::memcmp(on_disk.data() + 8192, data.data(), a.n), 0);

    // Two reads into different parts of buffer 1, from different file offsets.
    std::memset(b.p, 0xAA, b.n);
    ring.prepare(op::ReadFixed(Fd{file.fd()}, b.p, 4096, 8192, 1)).user_data(2);
    ring.prepare(op::ReadFixed(Fd{file.fd()}, b.p + 10000, 3000, 8192 + 50000, 1)).user_data(3);
    const auto cs = reap(ring, 2);
    EXPECT_EQ(find(cs, 2).res, 4096);
    EXPECT_EQ(find(cs, 3).res, 3000);
    EXPECT_EQ(std::memcmp(b.p, data.data(), 4096), 0);
    EXPECT_EQ(std::memcmp(b.p + 10000, data.data() + 50000, 3000), 0);
    EXPECT_EQ(b.p[4096], std::byte{0xAA}) << "read_fixed wrote past its length";
    EXPECT_EQ(b.p[9999], std::byte{0xAA});
    ring.unregister_buffers();
}

TEST(FixedBuffers, RangeOutsideTheRegisteredBufferIsRefused) {
    Ring ring(4);
    Mapped a(8192), other(8192);
    const iovec reg{a.p, 4096};  // only the first page is registered
    ring.register_buffers({&reg, 1});
    TempFile file(16384);
    ring.prepare(op::ReadFixed(Fd{file.fd()}, a.p + 4000, 200, 0, 0))
        .user_data(1);                                                            // crosses the end
    ring.prepare(op::ReadFixed(Fd{file.fd()}, other.p, 100, 0, 0)).user_data(2);  // another buffer
    ring.prepare(op::ReadFixed(Fd{file.fd()}, a.p, 100, 0, 5)).user_data(3);      // no such index
    const auto cs = reap(ring, 3);
    EXPECT_EQ(find(cs, 1).res, -EFAULT);
    EXPECT_EQ(find(cs, 2).res, -EFAULT);
    EXPECT_LT(find(cs, 3).res, 0);
}

TEST(FixedBuffers, RegisteringTwiceIsBusy) {
    Ring ring(4);
    Mapped a(4096);
    const iovec reg{a.p, a.n};
    ring.register_buffers({&reg, 1});
    try {
        ring.register_buffers({&reg, 1});
        FAIL() << "a second registration succeeded";
    } catch (const RingError& e) {
        EXPECT_EQ(e.code().value(), EBUSY);
        EXPECT_NE(std::string(e.what()).find("REGISTER_BUFFERS"), std::string::npos) << e.what();
    }
}

// Registered buffers are pinned and charged to RLIMIT_MEMLOCK, but only for a
// ring created without CAP_IPC_LOCK (the kernel skips the accounting for
// privileged users).  A forked child drops the capability, lowers the limit
// to 64 KiB, then registers 1 MiB.
TEST(FixedBuffers, MemlockLimitGivesExplainedEnomem) {
    Pipe report;
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        auto say = [&](const std::string& s) {
            (void)!::write(report.write_end.get(), s.data(), s.size());
            ::_exit(0);
        };
        if (const char* why = limit_memlock_without_ipc_lock(64 * 1024))
            say(std::string("SKIP ") + why);
        try {
            Ring ring(4);
            Mapped big(1 << 20);
            const iovec reg{big.p, big.n};
            ring.register_buffers({&reg, 1});
            say("REGISTERED");
        } catch (const RingError& e) {
            say(std::string("ERROR ") + std::to_string(e.code().value()) + " " + e.what());
        }
        say("NOTHING");
    }
    report.write_end.reset();
    std::string got;
    char buf[512];
    ssize_t n;
    while ((n = ::read(report.read_end.get(), buf, sizeof buf)) > 0) got.append(buf, n);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (got.rfind("SKIP", 0) == 0) GTEST_SKIP() << "cannot inject the limit: " << got;
    if (got == "REGISTERED")
        GTEST_SKIP() << "this kernel did not charge registered buffers to RLIMIT_MEMLOCK "
                        "for a process without CAP_IPC_LOCK (user namespace or accounting off)";
    ASSERT_EQ(got.rfind("ERROR ", 0), 0u) << got;
    EXPECT_EQ(got.rfind("ERROR 12 ", 0), 0u) << "expected ENOMEM: " << got;
    EXPECT_NE(got.find("REGISTER_BUFFERS"), std::string::npos) << got;
    EXPECT_NE(got.find("RLIMIT_MEMLOCK"), std::string::npos) << got;
}
