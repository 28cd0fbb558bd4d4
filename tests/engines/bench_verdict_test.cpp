// The verdict's rule on synthetic rounds: faster, slower, the same within
// the noise, too few rounds or I/Os, auto against the engine it did not run,
// an engine listed twice (A/A), writes, a busy machine, a run that was not
// steady, and a saved run; plus the order statistics behind the intervals.
#include "engines/verdict.hpp"
#include "measure/interval.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace uringkit::engines;
using namespace uringkit::measure;

namespace {

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

// Rounds of synthetic runs: add(engine, depth, per-round IOPS, per-round CPU
// µs per I/O); rows are filled from them so the verdict sees what the runner gives.
struct Synthetic {
    Results res;
    std::uint64_t ios = 100000;

    void add(const std::string& engine, unsigned depth, const std::vector<double>& iops,
             const std::vector<double>& cpu, const std::string& ran = {}) {
        Row row;
        row.engine = engine;
        row.iodepth = depth;
        row.ran = ran;
        row.runs = static_cast<unsigned>(iops.size());
        res.rows.push_back(row);
        for (std::size_t i = 0; i < iops.size(); ++i) {
            RunRecord r;
            r.engine = engine;
            r.iodepth = depth;
            r.round = static_cast<unsigned>(i + 1);
            r.ios = ios;
            r.seconds = static_cast<double>(ios) / iops[i];
            r.iops = iops[i];
            r.cpu_us_per_io = cpu[i];
            r.ran = ran;
            res.runs.push_back(r);
        }
    }
};

// n values around `base`, alternating +-`spread` (a fraction): noise with no trend.
std::vector<double> around(double base, double spread, unsigned n = 11) {
    std::vector<double> v;
    for (unsigned i = 0; i < n; ++i)
        v.push_back(base * (1 + (i % 2 ? spread : -spread) * (1 + 0.1 * i)));
    return v;
}

const Comparison* find(const std::vector<Comparison>& cs, const std::string& a,
                       const std::string& b, unsigned depth, Metric m) {
    for (const Comparison& c : cs)
        if (c.a == a && c.b == b && c.iodepth == depth && c.metric == m) return &c;
    return nullptr;
}

std::string line_for(const std::vector<std::string>& lines, const std::string& part) {
    for (const std::string& l : lines)
        if (contains(l, part)) return l;
    return {};
}

}  // namespace

TEST(BenchStats, OrderStatisticIntervals) {
    EXPECT_DOUBLE_EQ(order_interval_coverage(3, 1), 0.75);
    EXPECT_DOUBLE_EQ(order_interval_coverage(5, 1), 1 - 1.0 / 16);  // 94%
    EXPECT_DOUBLE_EQ(order_interval_coverage(11, 1), 1 - 1.0 / 1024);
    EXPECT_NEAR(order_interval_coverage(11, 2), 1 - 24.0 / 2048, 1e-12);
    EXPECT_EQ(order_interval_coverage(4, 3), 0);  // empty interval
    EXPECT_EQ(samples_needed(0.95), 6u);
    EXPECT_EQ(samples_needed(1 - 0.05 / 32), 11u) << "the default rounds";
    EXPECT_EQ(samples_needed(1 - 0.05 / 32), kDefaultRounds);
    EXPECT_EQ(order_interval_rank(11, 0.95), 2u);
    EXPECT_EQ(order_interval_rank(5, 0.95), 0u);

    const Estimate e = median_interval({5, 1, 4, 2, 3, 9, 7, 8, 6, 10, 11}, 0.95);
    EXPECT_TRUE(e.covered);
    EXPECT_EQ(e.median, 6);
    EXPECT_EQ(e.low, 2);  // second smallest and second largest
    EXPECT_EQ(e.high, 10);
    const Estimate few = median_interval({3, 1, 2}, 0.95);
    EXPECT_FALSE(few.covered);
    EXPECT_EQ(few.low, 1);
    EXPECT_EQ(few.high, 3);
    EXPECT_DOUBLE_EQ(confidence_each(0.95, 32), 1 - 0.05 / 32);
}

TEST(BenchVerdict, FasterWithLessCpu) {
    Synthetic s;
    s.add("pread", 32, around(100e3, 0.03), around(2.0, 0.03));
    s.add("uring", 32, around(150e3, 0.03), around(1.4, 0.03));
    const auto cs = compare_engines(s.res);
    ASSERT_EQ(cs.size(), 2u);
    const Comparison* c = find(cs, "uring", "pread", 32, Metric::iops);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->verdict, Judgement::faster);
    EXPECT_EQ(c->pairs, 11u);
    EXPECT_GT(c->ratio_low, 1.0);
    EXPECT_NEAR(c->ratio, 1.5, 0.05);
    const Comparison* cpu = find(cs, "uring", "pread", 32, Metric::cpu_us_per_io);
    ASSERT_NE(cpu, nullptr);
    EXPECT_EQ(cpu->verdict, Judgement::faster) << "less CPU per I/O is the better side";
    EXPECT_LT(cpu->ratio_high, 1.0);
    const auto lines = verdict_lines(s.res, cs, {});
    const std::string l = line_for(lines, "at depth 32 uring against pread");
    EXPECT_TRUE(contains(l, "faster: 1.5")) << l;
    EXPECT_TRUE(contains(l, "reads per second")) << l;
    EXPECT_TRUE(contains(l, "less CPU per read")) << l;
    EXPECT_TRUE(contains(lines.front(), "95% confidence over the run's 2 comparisons")) << lines[0];
}

TEST(BenchVerdict, SlowerWithMoreCpu) {
    Synthetic s;
    s.add("pread", 1, around(300e3, 0.02), around(1.5, 0.02));
    s.add("threadpool", 1, around(60e3, 0.02), around(9.0, 0.02));
    const auto cs = compare_engines(s.res);
    const Comparison* c = find(cs, "threadpool", "pread", 1, Metric::iops);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->verdict, Judgement::slower);
    EXPECT_LT(c->ratio_high, 1.0);
    EXPECT_EQ(find(cs, "threadpool", "pread", 1, Metric::cpu_us_per_io)->verdict,
              Judgement::slower);
    const std::string l = line_for(verdict_lines(s.res, cs, {}), "threadpool against pread");
    EXPECT_TRUE(contains(l, "slower: 0.20x")) << l;
    EXPECT_TRUE(contains(l, "more CPU per read")) << l;
}

TEST(BenchVerdict, NoiseIsTheSame) {
    Synthetic s;
    // The same level, a few percent of noise either way: no round order wins.
    s.add("pread", 1, around(100e3, 0.04), around(2.0, 0.04));
    s.add("uring", 1, around(100e3, -0.04), around(2.0, -0.04));
    const auto cs = compare_engines(s.res);
    const Comparison* c = find(cs, "uring", "pread", 1, Metric::iops);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->verdict, Judgement::same);
    EXPECT_LT(c->ratio_low, 1.0);
    EXPECT_GT(c->ratio_high, 1.0);
    const std::string l = line_for(verdict_lines(s.res, cs, {}), "uring against pread");
    EXPECT_TRUE(contains(l, "the same reads per second within this machine's noise (±")) << l;
    EXPECT_TRUE(contains(l, "the same CPU per read")) << l;
}

TEST(BenchVerdict, TooFewRounds) {
    Synthetic s;
    // 1.5x in every round, but 3 rounds cannot reach 95% (75% at best).
    s.add("pread", 1, {100e3, 101e3, 99e3}, {2, 2, 2});
    s.add("uring", 1, {150e3, 151e3, 149e3}, {1, 1, 1});
    const auto cs = compare_engines(s.res);
    const Comparison* c = find(cs, "uring", "pread", 1, Metric::iops);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->verdict, Judgement::too_few_samples);
    EXPECT_TRUE(contains(c->why, "3 rounds")) << c->why;
    const std::string l = line_for(verdict_lines(s.res, cs, {}), "uring against pread");
    EXPECT_TRUE(contains(l, "too few samples to compare")) << l;
    EXPECT_FALSE(contains(l, "faster")) << l;
}

TEST(BenchVerdict, TooFewIos) {
    Synthetic s;
    s.ios = 10;  // --ios 10: a confident verdict from this would be noise
    s.add("pread", 1, around(100e3, 0.01), around(2.0, 0.01));
    s.add("uring", 1, around(300e3, 0.01), around(1.0, 0.01));
    const auto cs = compare_engines(s.res);
    for (const Comparison& c : cs) {
        EXPECT_EQ(c.verdict, Judgement::too_few_samples);
        EXPECT_TRUE(contains(c.why, "fewer than 1000 I/Os")) << c.why;
    }
}

TEST(BenchVerdict, CorrectionForManyComparisonsNeedsMoreRounds) {
    // Six rounds all 1.5x: enough for one comparison at 95% (6 needed), not
    // once the run makes 16 (11 needed).
    EXPECT_EQ(judge({1.5, 1.5, 1.5, 1.5, 1.5, 1.5}, 0.95, Metric::iops, true).verdict,
              Judgement::faster);
    EXPECT_EQ(judge({1.5, 1.5, 1.5, 1.5, 1.5, 1.5}, confidence_each(0.95, 16), Metric::iops, true)
                  .verdict,
              Judgement::too_few_samples);
    EXPECT_EQ(judge({1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5},
                    confidence_each(0.95, 16), Metric::iops, true)
                  .verdict,
              Judgement::faster);
}

TEST(BenchVerdict, AutoIsComparedWithTheEngineItDidNotRun) {
    Synthetic s;
    for (unsigned d : {1u, 32u}) {
        s.add("pread", d, around(100e3, 0.02), around(2.0, 0.02));
        s.add("uring", d, around(d == 1 ? 90e3 : 150e3, 0.02), around(1.5, 0.02));
        s.add("auto", d, around(d == 1 ? 100e3 : 150e3, 0.02), around(1.5, 0.02),
              d == 1 ? "pread" : "uring");
    }
    const auto ps = pairings(s.res);
    auto paired = [&](const std::string& a, const std::string& b, unsigned d) {
        for (const Pairing& p : ps)
            if (p.a == a && p.b == b && p.iodepth == d) return true;
        return false;
    };
    EXPECT_TRUE(paired("auto", "uring", 1)) << "auto ran pread at depth 1";
    EXPECT_FALSE(paired("auto", "pread", 1)) << "never against itself";
    EXPECT_TRUE(paired("auto", "pread", 32)) << "auto ran uring at depth 32";
    EXPECT_FALSE(paired("auto", "uring", 32));
    const auto lines = verdict_lines(s.res, compare_engines(s.res), {});
    EXPECT_FALSE(
        line_for(lines, "at depth 1 auto ran pread, so it is compared only with uring").empty());
    EXPECT_FALSE(
        line_for(lines, "at depth 32 auto ran uring, so it is compared only with pread").empty());
    const std::string l1 = line_for(lines, "at depth 1 auto against uring");
    EXPECT_TRUE(contains(l1, "faster")) << l1;
}

TEST(BenchVerdict, EngineListedTwiceIsComparedWithItself) {
    EXPECT_EQ(engine_labels({"uring", "pread", "uring", "uring"}),
              (std::vector<std::string>{"uring", "pread", "uring#2", "uring#3"}));
    EXPECT_EQ(engine_base("uring#2"), "uring");
    Synthetic s;
    s.add("uring", 8, around(100e3, 0.05), around(2.0, 0.05));
    s.add("uring#2", 8, around(100e3, -0.05), around(2.0, -0.05));
    const auto cs = compare_engines(s.res);
    ASSERT_EQ(cs.size(), 2u);
    EXPECT_EQ(cs[0].a, "uring#2");
    EXPECT_EQ(cs[0].b, "uring");
    EXPECT_EQ(cs[0].verdict, Judgement::same);
}

TEST(BenchVerdict, WritesAreWordedAsWrites) {
    Synthetic s;
    s.add("pread", 32, around(50e3, 0.02), around(4.0, 0.02));
    s.add("uring", 32, around(80e3, 0.02), around(3.0, 0.02));
    VerdictContext ctx;
    ctx.rw = RwMode::randwrite;
    const std::string l = line_for(verdict_lines(s.res, compare_engines(s.res), ctx), "uring");
    EXPECT_TRUE(contains(l, "writes per second")) << l;
    EXPECT_TRUE(contains(l, "CPU per write")) << l;
    EXPECT_FALSE(contains(l, "reads") || contains(l, "per read")) << l;
    ctx.rw = RwMode::randrw;
    const std::string m = line_for(verdict_lines(s.res, compare_engines(s.res), ctx), "uring");
    EXPECT_TRUE(contains(m, "I/Os per second")) << m;
}

TEST(BenchVerdict, BusyMachineRanksByCpu) {
    Synthetic s;
    s.add("pread", 32, around(50e3, 0.02), around(4.0, 0.02));
    s.add("threadpool", 32, around(80e3, 0.02), around(6.0, 0.02));
    VerdictContext ctx;
    ctx.busy = "load average 12.00 on 2 CPUs";
    const auto lines = verdict_lines(s.res, compare_engines(s.res), ctx);
    EXPECT_FALSE(line_for(lines,
                          "busy machine (load average 12.00 on 2 CPUs): ranked by CPU per "
                          "read")
                     .empty());
    const std::string l = line_for(lines, "threadpool against pread");
    EXPECT_EQ(l.find("more CPU per read"), l.find(": ") + 2) << "CPU comes first: " << l;
    EXPECT_TRUE(contains(l, "faster")) << l;
}

TEST(BenchVerdict, NotSteadyRunsAreNamed) {
    Synthetic s;
    s.add("pread", 1, around(100e3, 0.02), around(2.0, 0.02));
    s.add("uring", 1, around(150e3, 0.02), around(2.0, 0.02));
    for (RunRecord& r : s.res.runs)
        if (r.engine == "uring" && r.round == 3) {
            r.steady.kind = Steadiness::trending;
            r.steady.change = 0.14;
            r.steady.slope = 0.35;
        }
    const std::string l =
        line_for(verdict_lines(s.res, compare_engines(s.res), {}), "uring against pread");
    EXPECT_TRUE(contains(l, "not steady: uring in round 3 (+14% over the run, +35.0%/s)")) << l;
}

TEST(BenchVerdict, AgainstASavedRun) {
    Synthetic now, before;
    now.add("uring", 32, around(150e3, 0.02), around(1.0, 0.02));
    now.add("pread", 32, around(100e3, 0.02), around(2.0, 0.02));
    before.add("uring", 32, around(100e3, 0.02), around(1.0, 0.02));
    before.add("pread", 32, around(100e3, 0.02), around(2.0, 0.02));
    SavedRun saved;
    saved.name = "old.json";
    saved.runs = before.res.runs;
    const auto cs = compare_saved(now.res, saved);
    const Comparison* u = find(cs, "uring", "saved", 32, Metric::iops);
    ASSERT_NE(u, nullptr);
    EXPECT_EQ(u->verdict, Judgement::faster);
    EXPECT_NEAR(u->ratio, 1.5, 0.05);
    EXPECT_EQ(find(cs, "pread", "saved", 32, Metric::iops)->verdict, Judgement::same);
    EXPECT_EQ(find(cs, "uring", "saved", 32, Metric::cpu_us_per_io)->verdict, Judgement::same);
    VerdictContext ctx;
    ctx.saved_name = "old.json";
    const std::string l =
        line_for(verdict_lines(now.res, cs, ctx), "uring against the saved run (old.json)");
    EXPECT_TRUE(contains(l, "faster: 1.5")) << l;
}

TEST(BenchSteadiness, FlatTrendingAndTooShort) {
    std::vector<Window> flat, rising, short_run, thin;
    for (int i = 0; i < 20; ++i) {
        flat.push_back({0.05, static_cast<std::uint64_t>(5000 + (i % 2 ? 100 : -100))});
        rising.push_back({0.05, static_cast<std::uint64_t>(3000 + 150 * i + (i % 2 ? 20 : -20))});
        thin.push_back({0.05, 20});
    }
    for (int i = 0; i < 3; ++i) short_run.push_back({0.05, 5000});
    EXPECT_EQ(assess_steadiness(flat).kind, Steadiness::steady);
    const Steadiness r = assess_steadiness(rising);
    EXPECT_EQ(r.kind, Steadiness::trending);
    EXPECT_GT(r.change, 0.5);  // 3000 -> 5850 over the run
    EXPECT_GT(r.slope, 0);
    const Steadiness s = assess_steadiness(short_run);
    EXPECT_EQ(s.kind, Steadiness::not_assessed);
    EXPECT_TRUE(contains(s.why, "shorter than 8 windows of 50 ms")) << s.why;
    const Steadiness t = assess_steadiness(thin);
    EXPECT_EQ(t.kind, Steadiness::not_assessed);
    EXPECT_TRUE(contains(t.why, "fewer than 100 I/Os")) << t.why;
}
