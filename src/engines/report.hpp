// What `uringkit bench` prints and writes: the aligned table, the verdict in
// plain words, JSON (schema in docs/bench.md), CSV, an SVG chart and the live
// progress line.  Pure formatting: nothing here measures.
#pragma once

#include "cli/output_file.hpp"
#include "engines/host.hpp"
#include "engines/runner.hpp"
#include "engines/verdict.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace uringkit::engines {

struct Report {
    const BenchSpec& spec;
    const Results& results;
    const Host& host;
    std::string filename;  // the benchmarked file (a temporary one is already gone)
    bool temporary = false;
    std::uint64_t size = 0;           // bytes used
    const SavedRun* saved = nullptr;  // --compare: the earlier run judged against
};

// The table of rows; with `against_saved` (compare_saved's comparisons for
// --compare) a last column gives each row's IOPS against the saved run: the
// ratio of the medians and the verdict of the noise rule.  `width` > 0: at
// most that many characters a line, the less important columns left out
// first (engine, depth, batch and IOPS always stay) and named in a last
// line; 0: every column.  An engine that keeps fewer I/Os in flight than the
// row's depth (pread) reads "1 at a time" in its depth and batch cells.
std::string format_table(const Results& results, const std::vector<Comparison>& against_saved = {},
                         std::size_t width = 0);
// Where the job of --compare's saved run differs from this one (--rw, --bs,
// --size, --direct, --cache, the file system), one item each: "--bs 64 KiB
// here, 4 KiB in old.json".  A field the file does not record is a difference.
std::vector<std::string> saved_job_differences(const Report& report);
// compare_saved() against the saved run when it measured the same job; none
// otherwise (and none without --compare).
std::vector<Comparison> against_saved(const Report& report);
// Every comparison the run makes (verdict.hpp), and against the saved run.
std::vector<Comparison> comparisons(const Report& report);
// Why the machine counts as busy (load above the CPU count, or a
// single-threaded engine short of a core), or nothing.
std::optional<std::string> busy_machine(const Report& report);
// The verdict in plain words (verdict.hpp's rule).
std::vector<std::string> verdict(const Report& report);
// What the figures include and how they were taken (SQPOLL CPU, buffered libaio, cache),
// and what --compare could not judge: another job, or rows the saved run has no runs of.
std::vector<std::string> notes(const Report& report);
std::string to_json(const Report& report);
// Reads the runs of an earlier `--json` file for `--compare`; throws
// OutputError naming the file when it cannot be read or is not one.
SavedRun load_saved(const std::string& path);
std::string to_csv(const Results& results);
std::string to_svg(const Report& report);
// "uring      depth 32  run 5/16  1.2/2.0 s  812.3k IOPS  ETA 23 s" (no newline).
std::string progress_line(const Progress& p);

// A file bench cannot read or write (util/output_file.hpp writes the outputs).
using cli::OutputError;

}  // namespace uringkit::engines
