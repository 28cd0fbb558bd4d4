// Every engine reads the blocks it asked for and writes what it meant to:
// a temporary file whose sectors carry their own offsets is read with
// verification on, and written blocks are read back.  Also: the timed loop
// allocates nothing (global operator new is replaced and counted), every I/O
// completes exactly once (the counts are exact), and the system-call counts
// follow the batching rule.
#include "engines/engine.hpp"
#include "engines/target.hpp"
#include "uringkit/sys/page_cache.hpp"

#include "count_allocations.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <ostream>
#include <string>
#include <vector>

using namespace uringkit::engines;
using namespace uringkit::measure;

namespace {

constexpr std::uint32_t kBs = 4096;
constexpr std::uint64_t kSize = 2 << 20;

struct Case {
    std::string engine;
    unsigned depth;
};
void PrintTo(const Case& c, std::ostream* os) {
    *os << c.engine << " at depth " << c.depth;
}

class BenchEngines : public ::testing::TestWithParam<Case> {
protected:
    std::unique_ptr<EngineJob> start(const Target& t, Workload& w, int fd, unsigned depth,
                                     unsigned batch) {
        const EngineInfo* info = find_engine(GetParam().engine);
        EXPECT_NE(info, nullptr);
        JobContext ctx;
        ctx.fd = fd;
        ctx.workload = &w;
        ctx.depth = depth;
        ctx.batch = batch;
        ctx.buffer_align = std::max<std::uint32_t>(t.direct_align(), 4096);
        try {
            return info->start(ctx);
        } catch (const EngineUnavailable& e) {
            skip_reason_ = e.what();
            return nullptr;
        }
    }
    std::string skip_reason_;
};

TargetSpec temp_spec(bool write, bool direct = false) {
    TargetSpec s;
    s.size = kSize;
    s.bs = kBs;
    s.write = write;
    s.direct = direct;
    return s;
}

TEST_P(BenchEngines, ReadsCarryTheirOwnOffsetAndNothingAllocates) {
    const bool direct = GetParam().engine == "uring-iopoll";
    std::unique_ptr<Target> t;
    try {
        t = std::make_unique<Target>(temp_spec(false, direct));
    } catch (const TargetError& e) {
        GTEST_SKIP() << e.what();
    }
    Workload w;
    w.bs = kBs;
    w.size = t->size();
    w.verify = true;
    w.direct = direct;
    const int fd = t->open_job_fd();
    const unsigned depth = GetParam().depth;
    auto job = start(*t, w, fd, depth, depth);
    if (!job) {
        ::close(fd);
        GTEST_SKIP() << GetParam().engine << " unavailable here: " << skip_reason_;
    }
    LatencyHistogram lat;
    std::atomic<std::uint64_t> progress{0};
    Phase ph;
    ph.max_ios = 3001;  // not a multiple of the depth: the last batch is partial
    ph.latency = &lat;
    ph.progress = &progress;
    g_allocations = 0;
    g_counting = true;
    const PhaseResult r = job->run(ph);
    g_counting = false;
    if (kAllocationsCounted) {
        EXPECT_EQ(g_allocations.load(), 0u) << "the timed loop allocated";
    }
    EXPECT_EQ(r.error, 0) << describe_error(r, kBs);
    EXPECT_EQ(r.ios, 3001u) << "every I/O completes exactly once";
    EXPECT_EQ(r.bytes, 3001u * kBs);
    EXPECT_EQ(lat.count(), 3001u);
    EXPECT_EQ(progress.load(), 3001u);
    EXPECT_GT(r.syscalls, 0u);
    const std::string& e = GetParam().engine;
    if (e == "pread" || (e == "auto" && depth == 1)) {
        EXPECT_EQ(r.syscalls, 3001u);
    }
    if ((e == "uring" || e == "uring-reg" || e == "liburing" || (e == "auto" && depth > 1)) &&
        depth == 32) {
        // One io_uring_enter per batch of 32 (+1 for the partial last batch).
        EXPECT_LE(r.syscalls, 3001u / 32 + 2);
        EXPECT_LE(static_cast<double>(r.syscalls) / static_cast<double>(r.ios), 0.04);
    }
    job.reset();
    ::close(fd);
}

TEST_P(BenchEngines, WritesLandWhereTheySay) {
    if (GetParam().engine == "uring-iopoll")
        GTEST_SKIP() << "IOPOLL needs O_DIRECT (covered by the read test)";
    Target t(temp_spec(true));
    Workload w;
    w.bs = kBs;
    w.size = t.size();
    w.rw = RwMode::write;  // sequential from 0: the first N blocks get written
    const int fd = t.open_job_fd();
    // The file's bytes before: random filler between the offset stamps.
    std::vector<unsigned char> before(kSize), after(kSize);
    ASSERT_EQ(::pread(fd, before.data(), kSize, 0), static_cast<ssize_t>(kSize));
    const unsigned depth = GetParam().depth;
    auto job = start(t, w, fd, depth, depth);
    if (!job) {
        ::close(fd);
        GTEST_SKIP() << GetParam().engine << " unavailable here: " << skip_reason_;
    }
    Phase ph;
    const unsigned blocks = 100;
    ph.max_ios = blocks;
    const PhaseResult r = job->run(ph);
    job.reset();
    EXPECT_EQ(r.error, 0) << describe_error(r, kBs);
    EXPECT_EQ(r.ios, blocks);
    ASSERT_EQ(::pread(fd, after.data(), kSize, 0), static_cast<ssize_t>(kSize));
    ::close(fd);
    for (std::uint64_t off = 0; off < kSize; off += kStampSector)
        ASSERT_TRUE(stamp_ok(after.data() + off, off)) << "sector at " << off << " lost its stamp";
    for (unsigned b = 0; b < blocks; ++b) {
        const std::size_t at = std::size_t{b} * kBs;
        // The filler bytes changed: the engine's buffer was written there.
        EXPECT_NE(0, std::memcmp(before.data() + at + 8, after.data() + at + 8, kStampSector - 8))
            << "block " << b << " was not written";
    }
    EXPECT_EQ(0, std::memcmp(before.data() + blocks * kBs, after.data() + blocks * kBs,
                             kSize - blocks * kBs))
        << "bytes past the written blocks changed";
}

// --cache cold: the runner drops the cache after the ramp and the measured
// phase restarts the offsets, so every engine and round reads the same,
// uncached blocks.  Checked through the page cache: after a ramp of 300
// reads, a drop, and a measured phase of 40, the 40 blocks now cached are
// the first 40 of a fresh offset sequence (not the 301st to 340th).
TEST_P(BenchEngines, MeasuredPhaseRestartsTheOffsets) {
    if (GetParam().engine == "uring-iopoll") GTEST_SKIP() << "IOPOLL needs O_DIRECT: no page cache";
    Target t(temp_spec(false));
    Workload w;
    w.bs = kBs;
    w.size = t.size();
    const int fd = t.open_job_fd();
    const unsigned depth = GetParam().depth;
    auto job = start(t, w, fd, depth, depth);
    if (!job) {
        ::close(fd);
        GTEST_SKIP() << GetParam().engine << " unavailable here: " << skip_reason_;
    }
    t.drop_cache();
    Phase ramp;
    ramp.max_ios = 300;
    EXPECT_EQ(job->run(ramp).ios, 300u);
    t.drop_cache();
    uringkit::sys::PageCacheStat none;
    ASSERT_EQ(uringkit::sys::page_cache_stat(fd, 0, kSize, none), 0);
    EXPECT_EQ(none.cached, 0u) << "the drop after the ramp left pages cached";
    Phase measured;
    measured.max_ios = 40;
    measured.restart_offsets = true;
    EXPECT_EQ(job->run(measured).ios, 40u);
    job.reset();
    IoPattern fresh(w, 0, 1);
    unsigned cached = 0;
    for (int i = 0; i < 40; ++i) {
        uringkit::sys::PageCacheStat pc;
        ASSERT_EQ(uringkit::sys::page_cache_stat(fd, fresh.next().offset, kBs, pc), 0);
        cached += pc.cached == 1;
    }
    ::close(fd);
    EXPECT_EQ(cached, 40u) << "the measured phase did not start from the first offset";
}

std::vector<Case> cases() {
    std::vector<Case> c;
    for (const EngineInfo& e : all_engines())
        for (unsigned d : {1u, 32u}) c.push_back({std::string(e.name), d});
    return c;
}

INSTANTIATE_TEST_SUITE_P(AllEngines, BenchEngines, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                             std::string n =
                                 i.param.engine + "_depth" + std::to_string(i.param.depth);
                             for (char& ch : n)
                                 if (ch == '-') ch = '_';
                             return n;
                         });

TEST(BenchEnginesStop, StopFlagEndsARunAndDrainsWhatIsInFlight) {
    TargetSpec s = temp_spec(false);
    Target t(s);
    Workload w;
    w.bs = kBs;
    w.size = t.size();
    const int fd = t.open_job_fd();
    JobContext ctx;
    ctx.fd = fd;
    ctx.workload = &w;
    ctx.depth = 8;
    ctx.batch = 8;
    std::unique_ptr<EngineJob> job;
    try {
        job = find_engine("uring")->start(ctx);
    } catch (const EngineUnavailable& e) {
        ::close(fd);
        GTEST_SKIP() << e.what();
    }
    std::atomic<bool> stop{true};
    Phase ph;
    ph.stop = &stop;
    const PhaseResult r = job->run(ph);
    EXPECT_EQ(r.ios, 0u) << "a stop set before the run issues nothing";
    stop = false;
    ph.max_ios = 16;
    EXPECT_EQ(job->run(ph).ios, 16u) << "the job is still usable after a stopped phase";
    job.reset();
    ::close(fd);
}

}  // namespace
