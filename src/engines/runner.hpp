// Runs the benchmark matrix in rounds: each round runs every engine at every
// depth once, engines interleaved and their order rotated (or shuffled) from
// round to round, so slow drift on a shared machine and the cost of running
// first or last hit every engine alike.  Engines are compared by the ratio of
// their runs in the same round (verdict.hpp); each figure is a median with
// its interval (stats.hpp).
#pragma once

#include "engines/target.hpp"
#include "engines/workload.hpp"
#include "measure/histogram.hpp"
#include "measure/interval.hpp"
#include "measure/paired.hpp"
#include "measure/steady.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace uringkit::engines {

// The measurement layer's figures, which every run records.
using measure::Estimate;
using measure::LatencyHistogram;
using measure::Steadiness;
using measure::Window;

enum class Cache { warm, cold };

// The order of the engines within each round.
enum class Order {
    rotate,  // rounds in pairs, the second reversed; each pair starts one engine later: each engine
             // runs before and after every other equally often, and in each position in turn
    shuffle,  // a random permutation per round, from `order_seed`
    fixed,    // the order given, every round
};
std::string_view order_name(Order o) noexcept;
std::optional<Order> parse_order(std::string_view text) noexcept;

// Rounds whose min-max of paired ratios reaches a family-wise 95% over the
// default run's 32 comparisons (16 pairs x IOPS and CPU): 1 - 2^(1-n) >=
// 1 - 0.05/32 needs n >= 11.  docs/bench.md derives it.
constexpr unsigned kDefaultRounds = 11;
using measure::kMinIosPerRun;  // runs shorter than this are not compared

// Labels for the engines as listed: an engine listed twice gets "#2" on its
// second occurrence ("uring", "uring#2"), so A/A runs can be told apart.
std::vector<std::string> engine_labels(const std::vector<std::string>& engines);
// "uring#2" -> "uring".
std::string_view engine_base(std::string_view label) noexcept;

struct BenchSpec {
    Workload workload;
    std::vector<std::string> engines;  // engine names; one may appear more than once (A/A)
    std::vector<unsigned> depths{1};
    unsigned batch = 0;  // 0: the depth (one enter per full queue)
    unsigned numjobs = 1;
    double runtime_s = 0;   // 0: no time limit (then ios must be set)
    double ramp_s = 0;      // warm-up excluded from the figures
    std::uint64_t ios = 0;  // total I/Os per run over all jobs; 0: no limit
    Cache cache = Cache::warm;
    unsigned rounds = 1;
    Order order = Order::rotate;
    std::uint64_t order_seed = 1;  // for Order::shuffle
    double confidence = 0.95;      // of each interval, and family-wise for the verdict
    // Record each I/O's latency (a clock read per I/O and a histogram
    // update); false (--no-latency) for a pure-throughput figure.
    bool latency = true;
    unsigned ring_entries = 0;       // JobContext::ring_entries (--ring-entries)
    unsigned sq_thread_idle_ms = 0;  // JobContext::sq_thread_idle_ms (--sq-thread-idle)

    unsigned batch_for(unsigned depth) const noexcept {
        const unsigned b = batch ? batch : depth;
        return b < depth ? b : depth;
    }
};

// Where an engine's time went besides its own thread (docs/bench.md,
// "Attribution"): per run, or a row's medians.
struct Attribution {
    // Requests handed to io-wq workers per I/O, from the tracepoint counter;
    // negative: not counted (Results::offload_not_counted says why).
    double offload_per_io = -1;
    // The io-wq workers' CPU and context switches (iou-wrk-* threads).
    double offload_cpu_us_per_io = 0;
    double offload_ctx_per_kio = 0;
    unsigned io_workers = 0;          // workers that ran during the run
    unsigned io_workers_started = 0;  // of them, started during it
    unsigned io_workers_exited = 0;   // of them, gone at its end (figures to their last sample)
    double sqpoll_cpu_us_per_io = 0;  // the SQPOLL thread (iou-sqp-*)
    double sq_wakeups_per_kio = 0;    // enters that woke it, per 1000 I/Os
    std::uint64_t cq_overflows = 0;   // reaps that found completions in the overflow list
    std::uint64_t enter_retries = 0;  // enters answered -EAGAIN/-EBUSY/-EINTR
};

// The figures of one engine at one depth (medians over the rounds, each with
// its interval at the spec's confidence).
struct Row {
    std::string engine;  // its label: "uring", or "uring#2" when listed twice
    unsigned iodepth = 0;
    unsigned batch = 0;
    enum Status { ok, unavailable, failed } status = ok;
    std::string reason;        // why unavailable or failed
    std::string note;          // e.g. which path auto took
    std::string ran;           // auto: the engine it ran at this depth ("pread", "uring")
    bool interrupted = false;  // cut short by Ctrl-C: figures cover the part measured
    unsigned runs = 0;

    std::uint64_t ios = 0;
    std::uint64_t writes = 0;  // of `ios`, the writes (median run)
    double seconds = 0;
    double iops = 0, iops_min = 0, iops_max = 0;
    double iops_low = 0, iops_high = 0;  // interval of the median
    bool interval_covered = false;  // false: too few rounds for the confidence; low-high = min-max
    double bw_bytes = 0;
    struct Latency {
        double mean = 0, p50 = 0, p90 = 0, p99 = 0, p99_9 = 0, max = 0;
    } lat_ns;
    double cpu_usr = 0, cpu_sys = 0;  // percent of one core
    double cpu_us_per_io = 0, cpu_us_per_io_low = 0, cpu_us_per_io_high = 0;
    double ctx_per_kio = 0, ctx_vol_per_kio = 0, ctx_invol_per_kio = 0;
    double syscalls_per_io = 0;
    double ios_per_submit = 0;
    std::uint64_t syscalls = 0;  // counted by the engine (median run), for cross-checks
    std::uint64_t submits = 0;
    Attribution attribution;  // medians over the runs
};

std::string_view status_name(Row::Status s) noexcept;

struct Progress {
    std::string_view engine;
    unsigned iodepth;
    unsigned run, runs;  // 1-based index of this run among all runs
    unsigned round, rounds;
    bool ramp;         // in the warm-up
    double elapsed_s;  // in this run
    double run_s;      // planned length of this run (0: unknown, I/O count bound)
    double iops;       // over the last interval
    double eta_s;      // for the whole benchmark (negative: unknown)
};

// What one run (one engine at one depth in one round) measured.
struct RunRecord {
    std::string engine;  // label
    unsigned iodepth = 0;
    unsigned round = 0;     // 1-based
    unsigned position = 0;  // 1-based place of the engine in its round's order
    Row::Status status = Row::ok;
    std::string reason;
    std::string ran;  // auto: the engine it ran
    bool interrupted = false;
    std::uint64_t ios = 0;
    double seconds = 0, iops = 0, bw_bytes = 0, cpu_us_per_io = 0;
    double lat_p50_ns = 0, lat_p99_ns = 0;
    std::uint64_t syscalls = 0, submits = 0;
    Steadiness steady;
    // Fraction of the file's used range in the page cache when measuring
    // started (after the ramp, and after the drop with --cache cold); -1:
    // not known (O_DIRECT, or neither cachestat nor mincore could tell).
    double cached_at_start = -1;
    Attribution attribution;
};

struct Results {
    std::vector<Row> rows;                         // by depth, then engine in the order asked
    std::vector<RunRecord> runs;                   // in the order they ran
    std::vector<std::vector<std::string>> orders;  // each round's engine order (labels)
    double confidence = 0.95;
    bool latency = true;  // the spec's: false, the rows carry no latency
    bool interrupted = false;
    long peak_rss_kib = 0;  // getrusage ru_maxrss at the end
    // Why the io-wq hand-offs were not counted ("tracefs not mounted", ...);
    // empty when they were.
    std::string offload_not_counted;
    double wall_s = 0;
};

using ProgressFn = std::function<void(const Progress&)>;

// Runs `spec` on `target`.  `stop` (set from a signal handler) ends the
// current run early; what was measured so far is returned.  Engines that
// cannot run give rows with status unavailable and the others still run.
Results run_bench(const BenchSpec& spec, const Target& target, const std::atomic<bool>* stop,
                  const ProgressFn& progress = {});

}  // namespace uringkit::engines
