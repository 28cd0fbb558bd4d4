// One run: one engine at one depth in one round, on `numjobs` threads, and
// what it measured (Outcome); then what the runner keeps of it (a RunRecord)
// and a row's medians over the rounds (aggregate).  Internal to the runner.
#pragma once

#include "engines/engine.hpp"
#include "engines/runner.hpp"
#include "measure/io_workers.hpp"

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace uringkit::engines::detail {

// What one run of one engine at one depth measured.
struct Outcome {
    Row::Status status = Row::ok;
    std::string reason, note, ran;
    std::vector<Window> windows;
    double cached_at_start = -1;  // fraction of the used range in the page cache; -1 unknown
    bool interrupted = false;
    std::uint64_t ios = 0, bytes = 0, writes = 0, syscalls = 0, submits = 0;
    double seconds = 0;
    double utime_s = 0, stime_s = 0;
    long nvcsw = 0, nivcsw = 0;
    Row::Latency lat;
    // Where the time went (docs/bench.md, "Attribution"): hand-offs to io-wq
    // counted by the tracepoint (-1: not counted, `offload_why` says why),
    // what the io-wq workers and the SQPOLL thread cost, and the engine's own
    // counts of where the kernel pushed back.
    std::int64_t offloads = -1;
    std::string offload_why;
    measure::KernelThreadCost workers, sq_poll;
    std::uint64_t sq_wakeups = 0, cq_overflows = 0, enter_retries = 0;
};

inline double iops_of(const Outcome& o) {
    return static_cast<double>(o.ios) / o.seconds;
}
inline double cpu_us_per_io_of(const Outcome& o) {
    return 1e6 * (o.utime_s + o.stime_s) / static_cast<double>(o.ios);
}

// A run's attribution (runner.hpp) from what it measured.
Attribution attribution_of(const Outcome& o);

struct RunContext {
    const BenchSpec& spec;
    const Target& target;
    const std::atomic<bool>* stop;
    const ProgressFn& progress;
    unsigned run = 0, runs = 0;
    std::string_view label;
    unsigned round = 0, rounds = 0;  // 1-based, for the progress line
    std::uint64_t start_ns = 0;      // when the benchmark started: its ETA counts set-up too
};

// Runs `engine` at `depth` once: set-up, ramp, measured phase, on every job
// at once; samples the completions for the steady-state check and the
// progress line.
Outcome run_once(RunContext& rc, const EngineInfo& engine, unsigned depth);

// The figures of one run as the results keep them.
RunRecord record(const Outcome& o, const std::string& label, unsigned depth, unsigned round,
                 unsigned position);

// One row: the medians of an engine's runs at one depth over the rounds,
// each with its interval at `confidence`.
Row aggregate(const std::string& label, unsigned depth, unsigned batch,
              const std::vector<Outcome>& runs, double confidence);

}  // namespace uringkit::engines::detail
