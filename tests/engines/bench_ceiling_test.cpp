// The system-call ceiling: measured on a real file (a bare call costs less
// than a read of a block, the estimate follows from both), and the verdict's
// line, on synthetic comparisons: which engine it names at each depth, how
// much of the estimate it reached, and when it says nothing.
#include "engines/ceiling.hpp"
#include "engines/target.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

using namespace uringkit::engines;
using uringkit::measure::Comparison;
using uringkit::measure::Judgement;
using uringkit::measure::Metric;

namespace {

Ceiling ceiling_of(double syscall_ns, double pread_ns) {
    Ceiling c;
    c.syscall_ns = syscall_ns;
    c.pread_ns = pread_ns;
    c.unit = "4 KiB pread of a cached block";
    return c;
}

struct PreadComparisons {
    Results results;
    std::vector<Comparison> comparisons;

    // `engine` at `depth` against pread: the verdict `v` at `ratio`.
    void against_pread(const std::string& engine, unsigned depth, double ratio, Judgement v,
                       const std::string& ran = {}) {
        Row row;
        row.engine = engine;
        row.iodepth = depth;
        row.ran = ran;
        results.rows.push_back(row);
        Comparison c;
        c.a = engine;
        c.b = "pread";
        c.iodepth = depth;
        c.metric = Metric::iops;
        c.ratio = ratio;
        c.verdict = v;
        comparisons.push_back(c);
    }
};

}  // namespace

TEST(BenchCeiling, EstimateIsTheReadWithoutItsSystemCall) {
    const Ceiling c = ceiling_of(206, 1430);
    EXPECT_NEAR(c.gain(), 1430.0 / 1224.0, 1e-9);  // 1.17x
    EXPECT_EQ(Ceiling{}.gain(), 0);
    EXPECT_FALSE(ceiling_of(500, 400).measured()) << "a read cheaper than a bare call is noise";
    EXPECT_EQ(format_ns(206.4), "206 ns");
    EXPECT_EQ(format_ns(1430), "1.43 µs");
    EXPECT_EQ(format_ns(103697), "104 µs");
}

TEST(BenchCeiling, MeasuredOnTheFileAsTheJobReadsIt) {
    TargetSpec spec;
    spec.size = 1 << 20;
    spec.tmpdir = "/tmp";
    const Target target(spec);
    Workload w;
    w.bs = 4096;
    w.size = target.size();
    const Ceiling c = measure_ceiling(target, w);
    ASSERT_TRUE(c.measured()) << c.syscall_ns << " ns per call, " << c.pread_ns << " ns per read";
    EXPECT_GT(c.syscall_ns, 0);
    EXPECT_GT(c.pread_ns, c.syscall_ns);
    EXPECT_GT(c.gain(), 1);
    EXPECT_EQ(c.unit, "4 KiB pread of a cached block");
}

TEST(BenchCeiling, NamesTheBestRingEngineAndHowMuchOfTheEstimateItReached) {
    PreadComparisons run;
    run.against_pread("uring", 32, 1.05, Judgement::faster);
    run.against_pread("uring-reg", 32, 1.10, Judgement::faster);
    run.against_pread("threadpool", 32, 1.15, Judgement::faster);  // no fewer calls: not a ring
    run.against_pread("uring", 1, 0.98, Judgement::same);
    const std::vector<std::string> lines =
        ceiling_lines(run.results, run.comparisons, ceiling_of(206, 1430), RwMode::randread);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0].find("uring at depth 1 is 0.98x pread; removing every system call would "
                            "give about 1.17x here (a system call costs 206 ns, a 4 KiB pread of "
                            "a cached block 1.43 µs): it is the same as pread within this run's "
                            "noise."),
              0u)
        << lines[0];
    // (1.10 - 1) / (1.168 - 1) = 59%
    EXPECT_NE(lines[1].find("uring-reg at depth 32 is 1.10x pread"), std::string::npos) << lines[1];
    EXPECT_NE(lines[1].find("it reaches 59% of that"), std::string::npos) << lines[1];
}

TEST(BenchCeiling, BeyondTheEstimateSaysWhatItLeavesOut) {
    PreadComparisons run;
    run.against_pread("auto", 32, 2.4, Judgement::faster, "uring");
    const auto lines =
        ceiling_lines(run.results, run.comparisons, ceiling_of(206, 1430), RwMode::randread);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("auto at depth 32 is 2.40x pread"), std::string::npos);
    EXPECT_NE(lines[0].find("goes beyond that estimate"), std::string::npos) << lines[0];
}

TEST(BenchCeiling, SaysNothingForWritesSlowerRingsOrAnUnmeasuredCeiling) {
    PreadComparisons run;
    run.against_pread("uring", 32, 1.05, Judgement::faster);
    EXPECT_TRUE(
        ceiling_lines(run.results, run.comparisons, ceiling_of(206, 1430), RwMode::randwrite)
            .empty());
    EXPECT_TRUE(ceiling_lines(run.results, run.comparisons, Ceiling{}, RwMode::randread).empty());
    PreadComparisons slower;
    slower.against_pread("uring", 32, 0.45, Judgement::slower);
    slower.against_pread("auto", 1, 1.2, Judgement::faster, "pread");  // auto ran pread
    EXPECT_TRUE(
        ceiling_lines(slower.results, slower.comparisons, ceiling_of(206, 1430), RwMode::randread)
            .empty());
}
