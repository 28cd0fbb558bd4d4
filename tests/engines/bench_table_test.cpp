// bench's text table on synthetic rows: every column when no width is
// given, at most the width asked otherwise with the least important
// columns left out first and named, and "1 at a time" in the depth and
// batch cells of an engine that never has more in flight (pread at depth 32).
#include "engines/report.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

using namespace uringkit::engines;

namespace {

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

// Columns on a terminal: UTF-8 continuation bytes ("µ") take none.
std::size_t columns(const std::string& line) {
    std::size_t n = 0;
    for (char c : line) n += (c & 0xC0) != 0x80;
    return n;
}

Row row(const std::string& engine, unsigned depth) {
    Row r;
    r.engine = engine;
    r.iodepth = depth;
    r.batch = depth;
    r.runs = 11;
    r.iops = 250000;
    r.iops_low = 240000;
    r.iops_high = 260000;
    r.interval_covered = true;
    r.bw_bytes = 1e9;
    r.lat_ns = {3000, 2500, 4000, 9000, 20000, 150000};
    r.cpu_usr = 40;
    r.cpu_sys = 60;
    r.cpu_us_per_io = 4;
    r.ctx_vol_per_kio = 1;
    r.ctx_invol_per_kio = 2;
    r.syscalls_per_io = 1;
    r.ios_per_submit = depth;
    return r;
}

Results sweep() {
    Results res;
    for (unsigned depth : {1u, 32u})
        for (const char* engine : {"pread", "uring", "uring#2"})
            res.rows.push_back(row(engine, depth));
    return res;
}

const std::string* line_of(const std::vector<std::string>& lines, const std::string& start,
                           std::size_t nth = 0) {
    for (const std::string& l : lines)
        if (l.rfind(start + " ", 0) == 0 && nth-- == 0) return &l;
    return nullptr;
}

TEST(BenchTable, NoWidthPrintsEveryColumn) {
    const std::string t = format_table(sweep());
    for (const char* head :
         {"engine", "depth",  "batch", "IOPS",    "(95% interval)",
          "MiB/s",  "mean",   "p50",   "p99",     "p99.9",
          "max",    "usr%",   "sys%",  "CPU/IO",  "ctx/kIO",
          "sys/IO", "IO/sub", "kthr%", "offl/IO", "latency, µs (submit to reap)"})
        EXPECT_TRUE(contains(t, head)) << head << " missing:\n" << t;
    EXPECT_FALSE(contains(t, "--wide")) << t;
}

TEST(BenchTable, PreadAtDepth32SaysOneAtATime) {
    const std::vector<std::string> lines = lines_of(format_table(sweep()));
    const std::string* pread1 = line_of(lines, "pread", 0);
    const std::string* pread32 = line_of(lines, "pread", 1);
    const std::string* uring32 = line_of(lines, "uring", 1);
    ASSERT_TRUE(pread1 && pread32 && uring32);
    // Depth 1 is what pread has: the plain cells.
    EXPECT_EQ(pread1->substr(0, 25), "pread             1     1") << *pread1;
    // At depth 32 it still has one I/O in flight: no "32 32" pretending otherwise.
    EXPECT_EQ(pread32->substr(0, 25), "pread         1 at a time") << *pread32;
    EXPECT_EQ(uring32->substr(0, 25), "uring            32    32") << *uring32;
}

TEST(BenchTable, AutoThatRanPreadSaysOneAtATimeAndAnUnavailableRowToo) {
    Results res;
    Row a = row("auto", 8);
    a.ran = "pread";
    res.rows.push_back(a);
    Row p = row("pread", 8);
    p.status = Row::unavailable;
    p.reason = "not here";
    res.rows.push_back(p);
    const std::vector<std::string> lines = lines_of(format_table(res));
    ASSERT_TRUE(line_of(lines, "auto") && line_of(lines, "pread"));
    EXPECT_EQ(line_of(lines, "auto")->substr(0, 25), "auto          1 at a time");
    EXPECT_EQ(*line_of(lines, "pread"), "pread         1 at a time  unavailable: not here");
}

TEST(BenchTable, EveryLineFitsTheWidthAndTheLeftOutColumnsAreNamed) {
    for (std::size_t width : {120u, 100u, 80u, 60u}) {
        const std::string t = format_table(sweep(), {}, width);
        for (const std::string& l : lines_of(t))
            EXPECT_LE(columns(l), width) << "at width " << width << ":\n" << t;
        EXPECT_TRUE(contains(t, "--wide shows every column")) << t;
        // What answers "which is faster" stays longest.
        for (const char* head : {"engine", "depth", "batch", "IOPS"})
            EXPECT_TRUE(contains(t, head)) << head << " at width " << width << ":\n" << t;
    }
    // The least important go first: at 80 the switch counts and max latency are
    // gone, the interval, p99 and CPU per I/O still there.
    const std::string t80 = format_table(sweep(), {}, 80);
    const std::string head80 = lines_of(t80)[0];
    EXPECT_FALSE(contains(head80, "ctx/kIO")) << t80;
    EXPECT_FALSE(contains(head80, " max")) << t80;
    for (const char* head : {"(95% interval)", "p99", "CPU/IO"})
        EXPECT_TRUE(contains(head80, head)) << head << ":\n" << t80;
    // The attribution columns explain least, so they go before everything.
    EXPECT_TRUE(contains(t80,
                         "(left out to fit 80 columns, --wide shows every column: offl/IO, kthr%, "
                         "ctx/kIO,"))
        << t80;
}

TEST(BenchTable, AWidthThatFitsEverythingChangesNothing) {
    const std::string all = format_table(sweep());
    std::size_t widest = 0;
    for (const std::string& l : lines_of(all)) widest = std::max(widest, columns(l));
    EXPECT_EQ(format_table(sweep(), {}, widest), all);
    EXPECT_NE(format_table(sweep(), {}, widest - 1), all);
}

TEST(BenchTable, TooNarrowForAnythingKeepsEngineDepthBatchAndIops) {
    const std::vector<std::string> lines = lines_of(format_table(sweep(), {}, 20));
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(lines[0], "engine        depth batch      IOPS");
}

}  // namespace
