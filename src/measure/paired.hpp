// Paired comparisons: is a faster (or cheaper) than b, beyond the run's own
// noise?  Two engines are compared by the ratio of their runs in the same
// round, which cancels the machine's drift between rounds; the median of
// those ratios gets an order-statistic interval (interval.hpp) at a
// confidence corrected for the number of comparisons a run makes
// (Bonferroni), so that across all of them a false "faster" happens with
// probability at most 1 - confidence.  Pure functions: nothing here measures.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace uringkit::measure {

// A run of fewer I/Os gives no figure worth comparing: a run's IOPS is
// uncertain by about one batch in its I/O count, and its CPU time by the
// accounting granularity of getrusage.
constexpr std::uint64_t kMinIosPerRun = 1000;

enum class Metric { iops, cpu_us_per_io };
// For iops, faster means more I/Os per second; for cpu_us_per_io it means
// less CPU per I/O (a is the better of the two on that metric).
enum class Judgement { faster, slower, same, too_few_samples };

std::string_view metric_name(Metric m) noexcept;
std::string_view judgement_name(Judgement j) noexcept;

// One comparison: a against b in one cell on one metric.
struct Comparison {
    std::string a, b;
    // Where: bench's I/O depth; bench net's workload and a replay's
    // (mode, depth) cell, as an index into the run's list of them.
    unsigned iodepth = 0;
    Metric metric = Metric::iops;
    double ratio = 0, ratio_low = 0, ratio_high = 0;  // a / b: median and its interval
    unsigned pairs = 0;                               // rounds (or runs) behind the ratio
    Judgement verdict = Judgement::too_few_samples;
    std::string why;  // too_few_samples: what was missing
};

// The verdict of an interval of a/b: for IOPS above 1 is better, for CPU below.
Judgement judge_interval(double low, double high, Metric metric) noexcept;

// Judges a sample of ratios a/b with an interval at `confidence` (already
// corrected for the number of comparisons).  `min_ios_ok` false: some run had
// fewer than kMinIosPerRun I/Os.
Comparison judge(std::vector<double> ratios, double confidence, Metric metric, bool min_ios_ok);

// Each comparison's own confidence: 1 - (1 - family) / count (Bonferroni).
double confidence_each(double family, std::size_t comparisons) noexcept;

// One engine's figure on one metric in one round, and the I/Os behind it.
struct RoundFigure {
    double value = 0;
    std::uint64_t ios = 0;
};
using ByRound = std::map<unsigned, RoundFigure>;  // round -> figure

// a/b for every round both ran (where b's figure is positive), and whether
// each paired run did at least `min_ios` I/Os.
struct PairedRatios {
    std::vector<double> ratios;
    bool min_ios_ok = true;
};
PairedRatios paired_ratios(const ByRound& a, const ByRound& b, std::uint64_t min_ios);

}  // namespace uringkit::measure
