// NVMe through every path the kernel offers, checked by the data: blocks
// written through one path read back identical through the others (the
// block device with O_DIRECT, an IOPOLL ring, passthrough commands on a
// BigRing with and without registered buffers).  These tests overwrite the
// namespace, so they run only on one named in URINGKIT_TEST_NVME (make
// test-kernels sets it to qemu's emulated drive); anywhere else they skip
// with the reason.  Every wait is bounded: a command that never completes
// fails the test instead of hanging it.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/big_ring.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/nvme.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

using namespace uringkit;
using namespace std::chrono_literals;
using util::UniqueFd;

namespace {

constexpr std::uint32_t kBlocks = 16;  // per test, from LBA 0

struct FreeDeleter {
    void operator()(void* p) const noexcept { std::free(p); }
};
using Aligned = std::unique_ptr<unsigned char[], FreeDeleter>;
Aligned aligned(std::size_t n) {
    void* p = nullptr;
    if (::posix_memalign(&p, 4096, n) != 0) throw std::bad_alloc();
    std::memset(p, 0, n);
    return Aligned(static_cast<unsigned char*>(p));
}
void fill(unsigned char* p, std::size_t n, unsigned seed) {
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(i * 31 + seed + i / 4096);
}

// The namespace under test, or the reason there is none.
std::optional<nvme::Namespace> namespace_under_test(std::string& why) {
    const char* dev = std::getenv("URINGKIT_TEST_NVME");
    if (!dev || !*dev) {
        why =
            "URINGKIT_TEST_NVME names no NVMe namespace these tests may overwrite (make "
            "test-kernels runs them on qemu's emulated drive)";
        return std::nullopt;
    }
    return nvme::find_namespace(dev, why);
}

#define REQUIRE_NAMESPACE(ns)                   \
    std::string why_;                           \
    const auto ns = namespace_under_test(why_); \
    if (!ns) GTEST_SKIP() << why_;              \
    if (ns->lba_count < 2 * kBlocks) GTEST_SKIP() << "namespace too small"

// One completion of `ring`, or a failure after 10 s.
template <class R, class C>
std::optional<C> reap_bounded(R& ring, Ring& base) {
    std::optional<C> got;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!got && std::chrono::steady_clock::now() < deadline) {
        ring.for_each_completion([&](const C& c) { got = c; });
        if (!got) base.submit_and_wait_for(1, 100ms);
    }
    return got;
}

void pwrite_direct(const nvme::Namespace& ns, const unsigned char* p, std::size_t n) {
    UniqueFd fd(::open(ns.block_device.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC));
    ASSERT_GE(fd.get(), 0) << ns.block_device << ": " << std::strerror(errno);
    ASSERT_EQ(::pwrite(fd.get(), p, n, 0), static_cast<ssize_t>(n));
    ASSERT_EQ(::fsync(fd.get()), 0);
}

TEST(NvmePassthrough, FindsTheCharDeviceAndBlockSize) {
    REQUIRE_NAMESPACE(ns);
    EXPECT_EQ(ns->char_device.rfind("/dev/ng", 0), 0u) << ns->char_device;
    EXPECT_GE(ns->nsid, 1u);
    EXPECT_TRUE(ns->lba_size == 512 || ns->lba_size == 4096) << ns->lba_size;
    std::string why;
    EXPECT_FALSE(nvme::find_namespace("/dev/null", why));
    EXPECT_NE(why.find("not an NVMe namespace"), std::string::npos) << why;
}

// Written through the block device, read through passthrough (plain and
// from a registered buffer); written through passthrough, read through the
// block device.
TEST(NvmePassthrough, EveryPathReadsWhatAnotherWrote) {
    REQUIRE_NAMESPACE(ns);
    const std::size_t bytes = std::size_t{kBlocks} * ns->lba_size;
    // Every buffer a command names is made before the ring, so a failed
    // assertion that leaves a command in flight tears the ring down first.
    Aligned want = aligned(bytes), got = aligned(bytes), fixed = aligned(bytes);
    fill(want.get(), bytes, 1);
    pwrite_direct(*ns, want.get(), bytes);

    UniqueFd ng(::open(ns->char_device.c_str(), O_RDWR | O_CLOEXEC));
    ASSERT_GE(ng.get(), 0) << ns->char_device << ": " << std::strerror(errno);
    BigRing big(8);
    big.prepare(op::NvmeCmd::read(Fd{ng.get()}, ns->nsid, 0, kBlocks, got.get(),
                                  static_cast<std::uint32_t>(bytes)))
        .user_data(1);
    auto c = reap_bounded<BigRing, BigCompletion>(big, big.ring());
    ASSERT_TRUE(c) << "no completion within 10 s";
    ASSERT_EQ(c->res, 0) << nvme::status_text(c->res);
    EXPECT_EQ(std::memcmp(got.get(), want.get(), bytes), 0) << "passthrough read";

    // The same read from a registered buffer (IORING_URING_CMD_FIXED).
    const iovec iov{fixed.get(), bytes};
    big.ring().register_buffers({&iov, 1});
    big.prepare(op::NvmeCmd::read(Fd{ng.get()}, ns->nsid, 0, kBlocks, fixed.get(),
                                  static_cast<std::uint32_t>(bytes))
                    .fixed_buffer(0))
        .user_data(2);
    c = reap_bounded<BigRing, BigCompletion>(big, big.ring());
    ASSERT_TRUE(c);
    ASSERT_EQ(c->res, 0) << nvme::status_text(c->res);
    EXPECT_EQ(std::memcmp(fixed.get(), want.get(), bytes), 0) << "passthrough read, fixed buffer";

    // Passthrough writes new bytes; the block device reads them.
    fill(want.get(), bytes, 7);
    big.prepare(op::NvmeCmd::write(Fd{ng.get()}, ns->nsid, 0, kBlocks, want.get(),
                                   static_cast<std::uint32_t>(bytes)))
        .user_data(3);
    c = reap_bounded<BigRing, BigCompletion>(big, big.ring());
    ASSERT_TRUE(c);
    ASSERT_EQ(c->res, 0) << nvme::status_text(c->res);
    big.prepare(op::NvmeCmd::flush(Fd{ng.get()}, ns->nsid)).user_data(4);
    c = reap_bounded<BigRing, BigCompletion>(big, big.ring());
    ASSERT_TRUE(c);
    EXPECT_EQ(c->res, 0) << nvme::status_text(c->res);
    UniqueFd blk(::open(ns->block_device.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
    ASSERT_GE(blk.get(), 0);
    std::memset(got.get(), 0, bytes);
    ASSERT_EQ(::pread(blk.get(), got.get(), bytes, 0), static_cast<ssize_t>(bytes));
    EXPECT_EQ(std::memcmp(got.get(), want.get(), bytes), 0)
        << "block device read after passthrough write";
}

// Past the last block, passthrough returns the NVMe error (LBA Out of Range)
// where the block device gives a short read; neither hangs.
TEST(NvmePassthrough, AReadPastTheEndIsTheNvmeError) {
    REQUIRE_NAMESPACE(ns);
    Aligned buf = aligned(ns->lba_size * 2);
    UniqueFd ng(::open(ns->char_device.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_GE(ng.get(), 0);
    BigRing big(4);
    big.prepare(op::NvmeCmd::read(Fd{ng.get()}, ns->nsid, ns->lba_count - 1, 2, buf.get(),
                                  ns->lba_size * 2))
        .user_data(1);
    const auto c = reap_bounded<BigRing, BigCompletion>(big, big.ring());
    ASSERT_TRUE(c) << "no completion within 10 s";
    EXPECT_GT(c->res, 0) << "an NVMe status, not " << c->res;
    EXPECT_EQ(c->res & 0x7ff, 0x80) << nvme::status_text(c->res);
    EXPECT_NE(nvme::status_text(c->res).find("LBA Out of Range"), std::string::npos);

    UniqueFd blk(::open(ns->block_device.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
    ASSERT_GE(blk.get(), 0);
    const off_t last = static_cast<off_t>((ns->lba_count - 1) * ns->lba_size);
    EXPECT_EQ(::pread(blk.get(), buf.get(), ns->lba_size * 2, last),
              static_cast<ssize_t>(ns->lba_size))
        << "the block path stops short at the end";
}

// Interrupts taken by the I/O queues of NVMe controller `ctrl` ("nvme0"),
// all CPUs together, from /proc/interrupts (the admin queue, q0, left out).
std::uint64_t io_queue_interrupts(const std::string& ctrl) {
    std::ifstream in("/proc/interrupts");
    std::string line;
    std::getline(in, line);                                                        // the CPU header
    const int cpus = static_cast<int>(std::count(line.begin(), line.end(), 'U'));  // "CPUn"
    std::uint64_t total = 0;
    while (std::getline(in, line)) {
        const std::size_t q = line.rfind(ctrl + "q");
        if (q == std::string::npos || line.compare(q, ctrl.size() + 2, ctrl + "q0") == 0 ||
            !std::isdigit(static_cast<unsigned char>(line[q + ctrl.size() + 1])))
            continue;
        std::istringstream fields(line.substr(line.find(':') + 1));
        std::uint64_t n = 0;
        for (int i = 0; i < cpus && fields >> n; ++i) total += n;
    }
    return total;
}

// IOPOLL reads and writes go to the poll queues, which have no interrupt at
// all: the controller's I/O-queue interrupts do not move while a ring of
// polled reads runs, and do for the same reads on an interrupt-driven ring.
// Both read the right bytes, through the block device and through
// passthrough.
TEST(NvmePassthrough, IopollCompletesByPollingNotInterrupts) {
    REQUIRE_NAMESPACE(ns);
    const std::string name = ns->block_device.substr(ns->block_device.rfind('/') + 1);
    const std::string ctrl = name.substr(0, name.rfind('n'));
    int io_poll = 0;
    std::ifstream("/sys/block/" + name + "/queue/io_poll") >> io_poll;
    if (!io_poll) GTEST_SKIP() << ns->block_device << " has no poll queues (nvme poll_queues=0)";
    const std::size_t bytes = std::size_t{4} * ns->lba_size;
    Aligned want = aligned(bytes), got = aligned(bytes);
    fill(want.get(), bytes, 3);
    pwrite_direct(*ns, want.get(), bytes);
    UniqueFd blk(::open(ns->block_device.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
    ASSERT_GE(blk.get(), 0);

    auto read_many = [&](Ring& ring, int times) {
        for (int i = 0; i < times; ++i) {
            std::memset(got.get(), 0, bytes);
            ring.prepare(op::Read(Fd{blk.get()}, got.get(), static_cast<std::uint32_t>(bytes), 0))
                .user_data(static_cast<std::uint64_t>(i));
            const auto c = reap_bounded<Ring, Completion>(ring, ring);
            ASSERT_TRUE(c) << "read " << i << " never completed";
            ASSERT_EQ(c->res, static_cast<int>(bytes));
            ASSERT_EQ(std::memcmp(got.get(), want.get(), bytes), 0) << "read " << i;
        }
    };
    const std::uint64_t before = io_queue_interrupts(ctrl);
    Ring polled(4, RingOptions{.iopoll = true});
    read_many(polled, 32);
    const std::uint64_t after_polled = io_queue_interrupts(ctrl);
    EXPECT_EQ(after_polled, before) << "32 polled reads took I/O-queue interrupts";
    Ring plain(4);
    read_many(plain, 32);
    EXPECT_GT(io_queue_interrupts(ctrl), after_polled)
        << "32 interrupt-driven reads took none: /proc/interrupts has no " << ctrl << "qN lines?";

    // Passthrough on a polled BigRing (6.1: nvme's uring_cmd_iopoll).
    UniqueFd ng(::open(ns->char_device.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_GE(ng.get(), 0);
    BigRing big(4, RingOptions{.iopoll = true});
    std::memset(got.get(), 0, bytes);
    big.prepare(op::NvmeCmd::read(Fd{ng.get()}, ns->nsid, 0, 4, got.get(),
                                  static_cast<std::uint32_t>(bytes)))
        .user_data(3);
    const auto b = reap_bounded<BigRing, BigCompletion>(big, big.ring());
    ASSERT_TRUE(b) << "a polled passthrough read never completed";
    ASSERT_EQ(b->res, 0) << nvme::status_text(b->res);
    EXPECT_EQ(std::memcmp(got.get(), want.get(), bytes), 0) << "polled passthrough read";
}

// Identify Namespace through the controller: its first field, NSZE, is the
// namespace's size in logical blocks, which sysfs gave too.
TEST(NvmePassthrough, IdentifyGivesTheNamespaceSize) {
    REQUIRE_NAMESPACE(ns);
    UniqueFd ctrl(::open(ns->controller.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_GE(ctrl.get(), 0) << ns->controller << ": " << std::strerror(errno);
    Aligned id = aligned(4096);
    BigRing big(4);
    big.prepare(op::NvmeCmd::identify(Fd{ctrl.get()}, ns->nsid, 0, id.get())).user_data(1);
    const auto c = reap_bounded<BigRing, BigCompletion>(big, big.ring());
    ASSERT_TRUE(c) << "no completion within 10 s";
    ASSERT_EQ(c->res, 0) << nvme::status_text(c->res);
    std::uint64_t nsze = 0;
    std::memcpy(&nsze, id.get(), sizeof nsze);  // little-endian, as x86
    EXPECT_EQ(nsze, ns->lba_count);
}

TEST(NvmeStatus, NamesTheStatusAndTheDnrBit) {
    EXPECT_EQ(nvme::status_text(0), "success");
    EXPECT_EQ(nvme::status_text(-EIO), std::strerror(EIO));
    EXPECT_EQ(nvme::status_text(0x4080), "LBA Out of Range (SCT 0, SC 0x80), do not retry");
    EXPECT_EQ(nvme::status_text(0x281), "Unrecovered Read Error (SCT 2, SC 0x81)");
    EXPECT_EQ(nvme::status_text(0x1ff), "NVMe status (SCT 1, SC 0xff)");
}

}  // namespace

// bench on the drive: every engine that reads a block device gives an `ok`
// row, passthrough (plain and from a registered buffer) and IOPOLL included.
TEST(NvmeBench, EveryBlockEngineRunsOnTheDrive) {
    REQUIRE_NAMESPACE(ns);
    const std::string out = "/tmp/uringkit-nvme-bench.json";
    const std::string cmd =
        std::string(URINGKIT_CLI) + " bench --filename " + ns->block_device +
        " --direct --engines pread,threadpool,libaio,uring,uring-async,uring-reg,uring-sqpoll,"
        "uring-iopoll,uring-hybrid,uring-cmd,uring-cmd-reg,auto "
        "--iodepth 1,8 --rounds 1 --ios 300 --json " +
        out + " >/dev/null 2>/tmp/uringkit-nvme-bench.err";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::ifstream in(out);
    const auto j = nlohmann::json::parse(in);
    std::remove(out.c_str());
    ASSERT_EQ(j.at("rows").size(), 24u);
    for (const auto& row : j.at("rows")) {
        const std::string engine = row.at("engine");
        // Neither test kernel (6.1, 6.12) has HYBRID_IOPOLL (6.13): it must say so.
        if (engine == "uring-hybrid" && row.at("status") != "ok") {
            EXPECT_EQ(row.at("status"), "unavailable") << row.dump();
            EXPECT_NE(row.at("reason").get<std::string>().find("HYBRID_IOPOLL (Linux 6.13)"),
                      std::string::npos)
                << row.dump();
            continue;
        }
        EXPECT_EQ(row.at("status"), "ok") << row.dump();
        EXPECT_EQ(row.at("io_path"),
                  engine.rfind("uring-cmd", 0) == 0 ? "nvme-passthrough" : "block")
            << engine;
        std::string completion = "interrupt";
        if (engine == "uring-iopoll" || engine == "uring-hybrid") completion = "polled";
        if (engine == "pread" || engine == "threadpool") completion = "blocking";
        EXPECT_EQ(row.at("completion"), completion) << engine;
    }
}
