// Runs the benchmark matrix: every engine at every depth, `repeat` times,
// interleaved round-robin (engine A, B, C, then A, B, C again) so slow drift
// on a shared machine hits every engine alike; reports medians.
#pragma once

#include "uringkit/engines/histogram.hpp"
#include "uringkit/engines/target.hpp"
#include "uringkit/engines/workload.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace uringkit::engines {

enum class Cache { warm, cold };

struct BenchSpec {
    Workload workload;
    std::vector<std::string> engines;
    std::vector<unsigned> depths{1};
    unsigned batch = 0;  // 0: the depth (one enter per full queue)
    unsigned numjobs = 1;
    double runtime_s = 0;   // 0: no time limit (then ios must be set)
    double ramp_s = 0;      // warm-up excluded from the figures
    std::uint64_t ios = 0;  // total I/Os per run over all jobs; 0: no limit
    Cache cache = Cache::warm;
    unsigned repeat = 1;

    unsigned batch_for(unsigned depth) const noexcept {
        const unsigned b = batch ? batch : depth;
        return b < depth ? b : depth;
    }
};

// The figures of one engine at one depth (medians over the repeats).
struct Row {
    std::string engine;
    unsigned iodepth = 0;
    unsigned batch = 0;
    enum Status { ok, unavailable, failed } status = ok;
    std::string reason;        // why unavailable or failed
    std::string note;          // e.g. which path auto took
    bool interrupted = false;  // cut short by Ctrl-C: figures cover the part measured
    unsigned runs = 0;

    std::uint64_t ios = 0;
    double seconds = 0;
    double iops = 0, iops_min = 0, iops_max = 0;
    double bw_bytes = 0;
    struct Latency {
        double mean = 0, p50 = 0, p90 = 0, p99 = 0, p99_9 = 0, max = 0;
    } lat_ns;
    double cpu_usr = 0, cpu_sys = 0;  // percent of one core
    double cpu_us_per_io = 0;
    double ctx_per_kio = 0, ctx_vol_per_kio = 0, ctx_invol_per_kio = 0;
    double syscalls_per_io = 0;
    double ios_per_submit = 0;
    std::uint64_t syscalls = 0;  // counted by the engine (median run), for cross-checks
    std::uint64_t submits = 0;
};

std::string_view status_name(Row::Status s) noexcept;

struct Progress {
    std::string_view engine;
    unsigned iodepth;
    unsigned run, runs;  // 1-based index of this run among all runs
    bool ramp;           // in the warm-up
    double elapsed_s;    // in this run
    double run_s;        // planned length of this run (0: unknown, I/O count bound)
    double iops;         // over the last interval
    double eta_s;        // for the whole benchmark (negative: unknown)
};

struct Results {
    std::vector<Row> rows;  // by depth, then engine in the order asked
    bool interrupted = false;
    long peak_rss_kib = 0;  // getrusage ru_maxrss at the end
    double wall_s = 0;
};

using ProgressFn = std::function<void(const Progress&)>;

// Runs `spec` on `target`.  `stop` (set from a signal handler) ends the
// current run early; what was measured so far is returned.  Engines that
// cannot run give rows with status unavailable and the others still run.
Results run_bench(const BenchSpec& spec, const Target& target, const std::atomic<bool>* stop,
                  const ProgressFn& progress = {});

}  // namespace uringkit::engines
