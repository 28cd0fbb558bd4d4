// bench's verdict: which engine was faster or cheaper than which, said only
// where the run's own noise allows it.  Which engines a run compares, at
// each depth, and the plain words; the statistics of a paired comparison
// are the measurement layer's (measure/paired.hpp).  Pure functions:
// nothing here measures.
#pragma once

#include "engines/runner.hpp"
#include "measure/paired.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace uringkit::engines {

// The comparison vocabulary is the measurement layer's (measure/paired.hpp).
using measure::Comparison;
using measure::confidence_each;
using measure::judge;
using measure::Judgement;
using measure::judgement_name;
using measure::Metric;
using measure::metric_name;

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
    // For the causes the verdict names (attribution): the file system of
    // the benchmarked file (Host::filesystem), and the ring set-up asked.
    std::string filesystem;
    unsigned ring_entries = 0;
    unsigned sq_thread_idle_ms = 0;
};

// The causes the attribution shows for one row, in plain words, one line
// each ("at depth 1 uring handed 99% of its reads to kernel worker threads
// (tmpfs files ...): ..."); none when it explains nothing.  `comparisons`
// supply how much the loss was where a comparison judged one.
std::vector<std::string> cause_lines(const Row& row, const std::vector<Comparison>& comparisons,
                                     const VerdictContext& context);

// The verdict in plain words, one line per comparison pair, grouped by depth.
std::vector<std::string> verdict_lines(const Results& results,
                                       const std::vector<Comparison>& comparisons,
                                       const VerdictContext& context);

}  // namespace uringkit::engines
