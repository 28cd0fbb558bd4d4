// bench's `auto` on a file system whose reads io_uring hands to io-wq
// workers (tmpfs): pread at every depth, the note saying why, one pread64
// per I/O and the data verified; on ext4 the ring once several I/Os are in
// flight, as before.
#include "engines/engine.hpp"
#include "engines/target.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <memory>
#include <string>

using namespace uringkit::engines;

namespace {

constexpr std::uint32_t kBs = 4096;

bool is_fs(const char* dir, unsigned long magic) {
    struct statfs sf {};
    return ::statfs(dir, &sf) == 0 && static_cast<unsigned long>(sf.f_type) == magic;
}

struct AutoRun {
    std::string ran, note;
    PhaseResult result;
};

// Starts `auto` at `depth` on a temporary 2 MiB file in `dir` and reads 1001
// blocks with verification (each block carries its own offset).
AutoRun run_auto(const char* dir, unsigned depth) {
    TargetSpec spec;
    spec.size = 2 << 20;
    spec.bs = kBs;
    spec.tmpdir = dir;
    Target t(spec);
    Workload w;
    w.bs = kBs;
    w.size = t.size();
    w.verify = true;
    const int fd = t.open_job_fd();
    JobContext ctx;
    ctx.fd = fd;
    ctx.workload = &w;
    ctx.depth = depth;
    ctx.batch = depth;
    const EngineInfo* info = find_engine("auto");
    EXPECT_NE(info, nullptr);
    std::unique_ptr<EngineJob> job = info->start(ctx);
    Phase ph;
    ph.max_ios = 1001;
    AutoRun r{std::string(job->ran()), job->note(), job->run(ph)};
    job.reset();
    ::close(fd);
    return r;
}

class AutoOnTmpfs : public ::testing::TestWithParam<unsigned> {};

TEST_P(AutoOnTmpfs, RunsPreadAndSaysWhy) {
    if (!is_fs("/dev/shm", TMPFS_MAGIC)) GTEST_SKIP() << "/dev/shm is not a tmpfs here";
    const AutoRun r = run_auto("/dev/shm", GetParam());
    EXPECT_EQ(r.ran, "pread");
    if (GetParam() > 1) {
        EXPECT_EQ(r.note, "auto: pread (tmpfs: reads would go to io-wq workers)");
    }
    EXPECT_EQ(r.result.error, 0) << describe_error(r.result, kBs);
    EXPECT_EQ(r.result.ios, 1001u);
    EXPECT_EQ(r.result.syscalls, 1001u) << "one pread per I/O: no ring was used";
}

INSTANTIATE_TEST_SUITE_P(Depths, AutoOnTmpfs, ::testing::Values(1u, 2u, 32u, 128u));

TEST(AutoOnExt4, KeepsTheRingOnceSeveralAreInFlight) {
    if (!is_fs("/tmp", EXT4_SUPER_MAGIC)) GTEST_SKIP() << "/tmp is not ext4 here";
    const AutoRun one = run_auto("/tmp", 1);
    EXPECT_EQ(one.ran, "pread");
    EXPECT_EQ(one.note, "auto: pread (one I/O in flight)");
    const AutoRun r = run_auto("/tmp", 32);
    if (r.note == "auto: pread (io_uring unavailable)") GTEST_SKIP() << "no io_uring here";
    EXPECT_EQ(r.ran, "uring");
    EXPECT_EQ(r.note, "auto: ring");
    EXPECT_EQ(r.result.error, 0) << describe_error(r.result, kBs);
    EXPECT_EQ(r.result.ios, 1001u);
    EXPECT_LT(r.result.syscalls, 1001u / 8) << "the ring batches: far fewer calls than I/Os";
}

}  // namespace
