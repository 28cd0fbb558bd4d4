// The verdict: which engine was faster or cheaper than which, said only
// where the run's own noise allows it.  Engines are compared by the ratio of
// their runs in the same round (paired), which cancels the machine's drift;
// the median of those ratios gets an order-statistic interval (stats.hpp) at
// a confidence corrected for the number of comparisons the run makes
// (Bonferroni), so that across all of them a false "faster" happens with
// probability at most 1 - confidence.  Pure functions: nothing here measures.
#pragma once

#include "engines/runner.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace uringkit::engines {

enum class Metric { iops, cpu_us_per_io };
// For iops, faster means more I/Os per second; for cpu_us_per_io it means
// less CPU per I/O (a is the better of the two on that metric).
enum class Judgement { faster, slower, same, too_few_samples };

std::string_view metric_name(Metric m) noexcept;
std::string_view judgement_name(Judgement j) noexcept;

// One comparison: a against b at one depth on one metric.
struct Comparison {
    std::string a, b;
    unsigned iodepth = 0;
    Metric metric = Metric::iops;
    double ratio = 0, ratio_low = 0, ratio_high = 0;  // a / b: median and its interval
    unsigned pairs = 0;                               // rounds (or runs) behind the ratio
    Judgement verdict = Judgement::too_few_samples;
    std::string why;  // too_few_samples: what was missing
};

// A pair of engines to compare at one depth, and why this pair.
struct Pairing {
    std::string a, b;
    unsigned iodepth = 0;
};

// The comparisons a run makes, at each depth: every engine against pread (or
// the first engine listed when pread did not run); an engine listed twice
// against its first listing (A/A); auto against the engine it did NOT run at
// that depth (comparing it with itself says nothing); uring against liburing.
// Only pairs whose rows both ran.
std::vector<Pairing> pairings(const Results& results);

// Judges a sample of ratios a/b with an interval at `confidence` (already
// corrected for the number of comparisons).  `min_ios_ok` false: some run had
// fewer than kMinIosPerRun I/Os.
Comparison judge(std::vector<double> ratios, double confidence, Metric metric, bool min_ios_ok);

// Each comparison's own confidence: 1 - (1 - family) / count (Bonferroni).
double confidence_each(double family, std::size_t comparisons) noexcept;

// Every pairing of the run on IOPS and on CPU per I/O, from paired rounds.
std::vector<Comparison> compare_engines(const Results& results);

// Figures of an earlier run (`--compare OLD.json`): its runs per engine and
// depth, and the job they measured, which must be this run's for a
// comparison to mean anything (report.hpp: saved_job_differences).
struct SavedRun {
    std::string name;  // the file, for the wording
    std::vector<RunRecord> runs;
    // The saved "job" and host.filesystem; empty where the file does not say.
    std::optional<std::string> rw, cache, filesystem;
    std::optional<std::uint64_t> bs, size;
    std::optional<bool> direct;
};
// Each engine x depth present in both against the saved run (b = "saved").
// The runs are not paired, so the ratio of the medians gets the interval
// that both medians' intervals imply (each at half the risk): conservative.
std::vector<Comparison> compare_saved(const Results& now, const SavedRun& saved);

struct VerdictContext {
    RwMode rw = RwMode::randread;
    std::optional<std::string> busy;  // why the machine counts as busy: rank by CPU per I/O
    std::string saved_name;           // --compare: the saved run's file
};

// The verdict in plain words, one line per comparison pair, grouped by depth.
std::vector<std::string> verdict_lines(const Results& results,
                                       const std::vector<Comparison>& comparisons,
                                       const VerdictContext& context);

}  // namespace uringkit::engines
