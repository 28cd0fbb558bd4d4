// fio's language for `uringkit bench`: a job file (INI: [global] and job
// sections) or fio's options on the command line, turned into the workload
// bench runs.  Pure: the caller reads the file and hands in the environment,
// so every rule here is unit-tested without a disk.  What fio means by each
// option is fio(1)'s, checked against fio 3.33; the table of what maps where
// is docs/bench.md, "fio users".
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace uringkit::engines {

// One `key=value` (or a bare `key` flag) as written, and where it was
// written: "job.fio:12" or "command line".
struct FioSetting {
    std::string key, value, where;
};

// One job: its name, the settings of the [global] sections before it, then
// its own (in the order they apply: the last of a key wins, as in fio).
struct FioJob {
    std::string name;
    std::vector<FioSetting> global;
    std::vector<FioSetting> own;
};

// A job file or option set bench cannot run as written; what() is one line
// naming the place and the option ("job.fio:4: bsrange=...: why").
class FioJobError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// $VAR's value, or nothing when it is unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// Parses a job file's text (`path` only names it in messages): `;` and `#`
// start comments (also after a value, as fio strips them), a [global]
// section's settings apply to the jobs after it, `${VAR}` is replaced by the
// environment's value.  An unset variable is refused: fio keeps the text and
// then fails to parse the value.  Throws FioJobError.
std::vector<FioJob> parse_fio_job_file(std::string_view text, const std::string& path,
                                       const EnvLookup& env);

// Joins a job file's jobs with the command line's fio settings, in their
// order: those before the first `name` apply to every job (after the file's
// own, so the command line wins); each `name=X` starts a job X, as fio's
// --name does.  No file and no name: one job named "bench".
std::vector<FioJob> join_command_line(std::vector<FioJob> file_jobs,
                                      const std::vector<FioSetting>& command_line);

// fio's size suffixes with its default kb_base=1024: k, m, g, t (any case,
// with or without a following b) are powers of 1024; KiB, MiB, GiB, TiB are
// powers of 1000 (fio's compatibility mode: `size=1MiB` is 1,000,000
// bytes).  Nothing for anything else.
std::optional<std::uint64_t> parse_fio_size(std::string_view text) noexcept;

// What one job asks of bench, in bench's terms; unset: the job did not say.
struct FioWorkload {
    std::string name;
    std::optional<std::string> filename;
    std::optional<std::uint64_t> size, offset;
    std::string rw = "read";  // fio's default
    unsigned rwmixread = 50;
    std::uint32_t bs = 4096;
    std::string iodepth = "1";  // one depth; bench's list extension where given
    unsigned batch = 1;         // fio's iodepth_batch_submit and _complete_min default
    unsigned numjobs = 1;
    bool direct = false;
    std::optional<double> runtime_s, ramp_s;
    // I/Os per run over all jobs: number_ios, io_size/bs or size/bs times
    // loops (fio stops at the end of the size without time_based); unset
    // while `ios_from_file` says the file's size decides.
    std::optional<std::uint64_t> ios;
    bool ios_from_file = false;  // size/bs of the file given (no size=) times loops x numjobs
    unsigned loops = 1;
    bool time_based = false;
    std::optional<std::uint64_t> number_ios, io_size;  // as given (per job)
    std::optional<std::uint64_t> seed;
    bool fresh_seed = false;           // randrepeat=0: a new sequence each run
    std::vector<std::string> engines;  // from ioengine; empty: every engine
    // The settings as given, for the fio-shaped JSON's "job options".
    std::vector<std::pair<std::string, std::string>> options;
    // The options the job set (fio's names, aliases resolved): on a plain
    // bench command line only these change bench's own defaults.
    std::vector<std::string> given;
    bool gave(std::string_view key) const {
        for (const std::string& g : given)
            if (g == key) return true;
        return false;
    }
};

// Maps one job; every option bench cannot run faithfully is named, all in
// one FioJobError ("job.fio:4: bsrange: ...; job.fio:7: ...").
FioWorkload map_fio_job(const FioJob& job);

// The engine fio's ioengine (and its io_uring options) names, or the reason
// none does exactly that; `flags` are fixedbufs, registerfiles,
// sqthread_poll, hipri as set.
struct IoEngineFlags {
    bool fixedbufs = false, registerfiles = false, sqthread_poll = false, hipri = false;
};
std::string engine_for_ioengine(std::string_view ioengine, const IoEngineFlags& flags,
                                std::string& why);

}  // namespace uringkit::engines
