// bench's options as parsed, shared by bench.cpp (which runs them) and
// bench_fio.cpp (which fills them from a fio job file or fio's options).
#pragma once

#include "engines/runner.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace uringkit::cli {

struct BenchOptions {
    std::string filename, size, rw = "randread", bs = "4k", iodepth = "1,32", engines,
                                cache = "warm";
    std::string runtime, ramp, json, csv, plot, compare, order = "rotate";
    std::string offset;  // fio's offset=: where the used range starts
    unsigned rwmixread = 50, batch = 0, numjobs = 1, rounds = engines::kDefaultRounds, threads = 64;
    unsigned ring_entries = 0, sq_thread_idle = 0;
    std::optional<std::uint64_t> order_seed;
    double confidence = 0.95;
    long long ios = 0;
    std::uint64_t seed = 1;
    bool direct = false, allow_write = false, verify = false, wide = false, no_latency = false;
};

// Which options were given: on the command line, or set by a fio job in
// bench's name ("--batch").  A value of 0 given differs from one left out.
struct GivenOptions {
    const CLI::App& app;
    std::vector<std::string> by_job;
    bool operator()(std::string_view name) const {
        return app.count(std::string(name)) > 0 ||
               std::find(by_job.begin(), by_job.end(), name) != by_job.end();
    }
};

// Checks every option (a UsageError names the first bad one) and returns the
// benchmark's spec; `target` gets the file to run on.
engines::BenchSpec make_spec(const GivenOptions& given, const BenchOptions& o,
                             engines::TargetSpec& target);

}  // namespace uringkit::cli
