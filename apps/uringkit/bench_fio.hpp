// `uringkit bench` in fio's language: a job file (`bench job.fio`, `--job`),
// fio's option names on the command line (`--ioengine=io_uring`,
// `--name=JOB` starting a job) and fio's JSON (`--output-format=json`,
// `--output=FILE`).  This file turns them into bench's own options, one set
// per job; src/engines/fio_job.cpp holds the rules, docs/bench.md the table.
#pragma once

#include "bench_options.hpp"

#include "engines/report.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace uringkit::cli {

// A job file that cannot be read (status 4, as any input bench cannot use).
struct FioInputError {
    std::string message;
};

struct FioCli {
    std::string job_file, positional;
    std::string output_format = "normal", output;
    std::vector<std::string> names;  // the fio options this command line may carry
};

// Adds the job file operand, --job, --output-format, --output and fio's
// option names to bench's `app`.
void add_fio_options(CLI::App& app, FioCli& fio);

// One workload to run: bench's options for it, which of them the job set,
// and what the fio-shaped JSON says of it.
struct FioRun {
    std::string name;
    BenchOptions options;
    std::vector<std::string> given;  // bench option names the job set ("--batch")
    std::vector<std::pair<std::string, std::string>> job_options;
};

// The workloads the command line asks for: one per job of the job file and
// per --name, or one when only fio's options are given (they then change
// only what they name); none when the command line is bench's own.  Throws
// UsageError (one line: the file:line or option, and why).
std::vector<FioRun> fio_runs(const CLI::App& app, const FioCli& fio, const BenchOptions& o);

// What bench.cpp's run() does differently for a fio workload: where the
// table goes and who receives the report.
struct RunHooks {
    std::FILE* human = nullptr;  // null: bench's own choice (stdout, or stderr under `--json -`)
    std::string title;           // printed before the header: "job NAME"
    std::function<void(const engines::Report&)> report;
};

// Runs `runs` one after another through `run_one` and writes the outputs
// --output-format and --output ask for.  Returns the exit status.
int run_fio(const std::vector<FioRun>& runs, const FioCli& fio,
            const std::function<int(const FioRun&, const RunHooks&)>& run_one);

}  // namespace uringkit::cli
