// `uringkit bench --replay TRACE`: bench.cpp adds the options and hands the
// options it shares with the file benchmark over (bench_replay.cpp runs it).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace uringkit::cli {

struct ReplayOptions {
    std::string trace, modes = "as-recorded,batched", scratch;
    unsigned loops = 1;
    bool lenient = false;
};

// The options of the file benchmark that also shape a replay.
struct SharedBenchOptions {
    std::string engines, iodepth, cache, json;
    unsigned rounds = 0;  // 0: not given
    double confidence = 0.95;
    bool allow_write = false, verify = false;
};

// Adds --replay and its own options to bench's `app`.
void add_replay_options(CLI::App& app, ReplayOptions& o);
// Runs the replay; `app` tells which of bench's options were given (those
// that do not apply to a replay are refused).
int run_replay(const CLI::App& app, const ReplayOptions& o, const SharedBenchOptions& shared);

}  // namespace uringkit::cli
