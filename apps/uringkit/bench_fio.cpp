// fio's language on bench's command line (bench_fio.hpp).
#include "bench_fio.hpp"

#include "command.hpp"
#include "console.hpp"
#include "manual.hpp"

#include "cli/size.hpp"
#include "engines/fio_job.hpp"
#include "engines/report_fio_json.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

namespace uringkit::cli {
namespace {

using engines::FioJob;
using engines::FioSetting;
using engines::FioWorkload;

// fio's options bench takes on its command line besides its own; flags
// take no value unless written with '=' (`--fixedbufs`, `--fixedbufs=0`).
struct FioOptionName {
    const char* name;
    bool flag;
    const char* help;
};
constexpr FioOptionName kFioOptions[] = {
    {"name", false, "fio: start a new job of this name (options after it are its own)"},
    {"ioengine", false,
     "fio: psync (bench's pread), libaio or io_uring (uring; with the options below "
     "uring-reg, uring-sqpoll or uring-iopoll)"},
    {"fixedbufs", true, "fio io_uring: registered buffers (with --registerfiles: uring-reg)"},
    {"registerfiles", true, "fio io_uring: a registered file (with --fixedbufs: uring-reg)"},
    {"sqthread_poll", true, "fio io_uring: a kernel SQ polling thread (uring-sqpoll)"},
    {"hipri", true, "fio io_uring: polled completions (uring-iopoll)"},
    {"ramp_time", false, "fio: warm-up excluded from the figures (bench's --ramp)"},
    {"randseed", false, "fio: seed of the random offsets (bench's --seed)"},
    {"randrepeat", false, "fio: 0 draws a new sequence each run"},
    {"norandommap", true, "fio: accepted; bench always draws offsets with replacement"},
    {"time_based", true, "fio: run for --runtime, not to the end of --size"},
    {"iodepth_batch_submit", false, "fio: I/Os per submit (bench's --batch)"},
    {"iodepth_batch", false, "fio: as --iodepth_batch_submit"},
    {"iodepth_batch_complete_min", false,
     "fio: completions waited for per reap; bench waits for its batch, so the same value"},
    {"iodepth_batch_complete", false, "fio: as --iodepth_batch_complete_min"},
    {"offset", false, "fio: where the used range of the file starts"},
    {"filesize", false, "fio: the file's size (as --size with one file)"},
    {"io_size", false, "fio: bytes to transfer per job (bench's --ios over --bs)"},
    {"number_ios", false, "fio: I/Os per job (bench's --ios is over all jobs)"},
    {"rwmixwrite", false, "fio: percent writes with randrw"},
    {"buffered", false, "fio: 0 is --direct"},
    {"thread", true, "fio: accepted; bench's jobs are threads"},
    {"group_reporting", true, "fio: accepted; bench reports each engine's jobs together"},
    {"stonewall", true, "fio: accepted; bench runs each job after the one before"},
    {"new_group", true, "fio: accepted, as --stonewall"},
};
// bench's own options that are also fio's, with fio's meaning in a job.
constexpr const char* kShared[] = {"filename", "size",    "rw",     "rwmixread", "bs",
                                   "iodepth",  "numjobs", "direct", "runtime"};

bool is_fio_only(std::string_view name) {
    for (const FioOptionName& f : kFioOptions)
        if (name == f.name) return true;
    return false;
}
bool is_shared(std::string_view name) {
    for (const char* s : kShared)
        if (name == s) return true;
    return false;
}

// The command line's fio-spelled settings in the order typed (CLI11 keeps
// each option's values apart; its parse order puts them back in sequence).
std::vector<FioSetting> command_line_settings(const CLI::App& app, bool with_shared) {
    std::vector<FioSetting> out;
    std::vector<std::pair<const CLI::Option*, std::size_t>> seen;
    for (const CLI::Option* opt : app.parse_order()) {
        if (opt->get_lnames().empty()) continue;
        const std::string& name = opt->get_lnames().front();
        std::size_t index = 0;
        for (auto& [o, n] : seen)
            if (o == opt) index = ++n;
        if (index == 0) seen.emplace_back(opt, 0);
        if (!is_fio_only(name) && !(with_shared && is_shared(name))) continue;
        if (index >= opt->results().size()) continue;
        out.push_back(FioSetting{name, opt->results()[index], "--" + name});
    }
    return out;
}

std::string read_job_file(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    if (!in || !(text << in.rdbuf()))
        throw FioInputError{fmt::format("{}: cannot read the job file: {}", path,
                                        std::strerror(errno ? errno : EIO))};
    return text.str();
}

std::string format_seconds(double s) {
    return fmt::format("{}", s);
}

// I/Os for a job that stops at the end of its file's size (no size=).
std::uint64_t ios_from_file(const FioWorkload& w) {
    struct stat st {};
    if (!w.filename || ::stat(w.filename->c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        throw UsageError{fmt::format(
            "job {}: give size= (or time_based with runtime=): fio would stop at the end of the "
            "file, whose size bench cannot tell here",
            w.name)};
    const std::uint64_t bytes = static_cast<std::uint64_t>(st.st_size) - w.offset.value_or(0);
    return bytes / w.bs * w.loops * w.numjobs;
}

// A job file or --name job: fio's defaults for what it leaves out, except
// where bench's own option (not fio's) is given on the command line.
FioRun full_run(const CLI::App& app, const FioWorkload& w, const BenchOptions& o) {
    FioRun run{w.name, o, {}, w.options};
    BenchOptions& b = run.options;
    auto own = [&](const char* name) {
        if (app.count(name)) return false;
        run.given.emplace_back(name);
        return true;
    };
    if (w.filename) b.filename = *w.filename;
    if (w.size) b.size = std::to_string(*w.size);
    if (w.offset) b.offset = std::to_string(*w.offset);
    b.rw = w.rw;
    b.rwmixread = w.rwmixread;
    b.bs = std::to_string(w.bs);
    b.iodepth = w.iodepth;
    b.numjobs = w.numjobs;
    b.direct = w.direct;
    b.runtime = w.runtime_s ? format_seconds(*w.runtime_s) : std::string();
    // fio's defaults: no ramp, and the file's cached pages dropped before
    // the job (invalidate=1), which is bench's --cache cold.
    if (own("--ramp")) b.ramp = format_seconds(w.ramp_s.value_or(0));
    if (own("--cache")) b.cache = "cold";
    if (w.batch && own("--batch")) b.batch = w.batch;
    const std::optional<std::uint64_t> ios = w.ios_from_file ? ios_from_file(w) : w.ios;
    if (ios && own("--ios")) b.ios = static_cast<long long>(*ios);
    if ((w.seed || w.fresh_seed) && own("--seed"))
        b.seed = w.seed ? *w.seed : std::random_device{}();
    if (!w.engines.empty() && own("--engines")) b.engines = w.engines.front();
    return run;
}

// fio's options on bench's own command line: each changes what it names.
FioRun plain_run(const CLI::App& app, const FioWorkload& w, const BenchOptions& o) {
    FioRun run{w.name, o, {}, w.options};
    BenchOptions& b = run.options;
    auto own = [&](const char* name) {
        if (app.count(name))
            throw UsageError{
                fmt::format("{} and fio's spelling of it are both given; give one", name)};
        run.given.emplace_back(name);
    };
    if (!w.engines.empty()) {
        own("--engines");
        b.engines = w.engines.front();
    }
    if (w.gave("ramp_time")) {
        own("--ramp");
        b.ramp = format_seconds(*w.ramp_s);
    }
    if (w.gave("randseed") || w.fresh_seed) {
        own("--seed");
        b.seed = w.seed ? *w.seed : std::random_device{}();
    }
    if (w.gave("iodepth_batch_submit") || w.gave("iodepth_batch_complete_min")) {
        own("--batch");
        b.batch = w.batch;
    }
    if (w.offset) b.offset = std::to_string(*w.offset);
    if (w.gave("filesize")) {
        own("--size");
        b.size = std::to_string(*w.size);
    }
    if (w.gave("rwmixwrite")) {
        own("--rwmixread");
        b.rwmixread = w.rwmixread;
    }
    if (w.gave("buffered")) b.direct = w.direct;
    if (w.time_based && !app.count("--runtime"))
        throw UsageError{"--time_based: give --runtime too (fio would run until stopped)"};
    if (w.number_ios || w.io_size) {
        own("--ios");
        const std::uint64_t bs = parse_size(b.bs).value_or(4096);
        std::uint64_t per_job = w.number_ios ? *w.number_ios : UINT64_MAX;
        if (w.io_size) per_job = std::min(per_job, *w.io_size / (bs ? bs : 1));
        if (per_job == 0) throw UsageError{"--io_size: less than one block (--bs)"};
        b.ios = static_cast<long long>(per_job * b.numjobs);
    }
    return run;
}

}  // namespace

void add_fio_options(CLI::App& app, FioCli& fio) {
    app.add_option("jobfile", fio.positional,
                   "A fio job file to run, as --job (the engines side by side for each job)");
    app.add_option("--job", fio.job_file,
                   "A fio job file ([global] and job sections, fio's option names): each job "
                   "runs as its own workload through every engine, or the one its ioengine names");
    app.add_option("--output-format", fio.output_format,
                   "normal (the table) or json (fio's JSON shape: jobs[].read.iops, "
                   "clat_ns.percentile, usr_cpu...; docs/json.md)")
        ->capture_default_str();
    app.add_option("--output", fio.output,
                   "Write the --output-format output to this file (as fio's --output)");
    for (const FioOptionName& f : kFioOptions) {
        fio.names.emplace_back(f.name);
        if (f.flag)
            app.add_flag("--" + std::string(f.name), f.help);
        else
            app.add_option("--" + std::string(f.name), f.help);
    }
    group_options(app, "fio",
                  {"jobfile",
                   "--job",
                   "--output-format",
                   "--output",
                   "--name",
                   "--ioengine",
                   "--fixedbufs",
                   "--registerfiles",
                   "--sqthread_poll",
                   "--hipri",
                   "--ramp_time",
                   "--randseed",
                   "--randrepeat",
                   "--norandommap",
                   "--time_based",
                   "--iodepth_batch_submit",
                   "--iodepth_batch",
                   "--iodepth_batch_complete_min",
                   "--iodepth_batch_complete",
                   "--offset",
                   "--filesize",
                   "--io_size",
                   "--number_ios",
                   "--rwmixwrite",
                   "--buffered",
                   "--thread",
                   "--group_reporting",
                   "--stonewall",
                   "--new_group"});
    name_values(app, {{"jobfile", "[JOBFILE]"},
                      {"--job", "JOBFILE"},
                      {"--output", "FILE"},
                      {"--name", "JOB"},
                      {"--ioengine", "ENGINE"},
                      {"--randseed", "N"},
                      {"--randrepeat", "0|1"},
                      {"--iodepth_batch_submit", "N"},
                      {"--iodepth_batch", "N"},
                      {"--iodepth_batch_complete_min", "N"},
                      {"--iodepth_batch_complete", "N"},
                      {"--number_ios", "N"},
                      {"--rwmixwrite", "PERCENT"},
                      {"--buffered", "0|1"},
                      {"--offset", "SIZE"},
                      {"--filesize", "SIZE"},
                      {"--io_size", "SIZE"},
                      {"--ramp_time", "TIME"}});
    complete_with(app.get_option("--ioengine"), {"psync", "libaio", "io_uring"});
    complete_with(app.get_option("--output-format"), {"normal", "json"});
}

std::vector<FioRun> fio_runs(const CLI::App& app, const FioCli& fio, const BenchOptions& o) {
    if (!fio.job_file.empty() && !fio.positional.empty() && fio.job_file != fio.positional)
        throw UsageError{
            fmt::format("{} and --job {}: give one job file", fio.positional, fio.job_file)};
    if (fio.output_format != "normal" && fio.output_format != "json")
        throw UsageError{fmt::format(
            "--output-format {}: use normal or json (fio's json+ and terse are not written)",
            fio.output_format)};
    const std::string file = fio.job_file.empty() ? fio.positional : fio.job_file;
    bool fio_only = false, named = false;
    for (const std::string& n : fio.names) {
        fio_only = fio_only || app.count("--" + n) > 0;
        named = named || (n == "name" && app.count("--name") > 0);
    }
    const bool full = !file.empty() || named;
    if (!full && !fio_only && fio.output_format == "normal" && fio.output.empty()) return {};
    if (fio.output_format == "json" && (fio.output.empty() || is_standard_output(fio.output)))
        for (const std::string* path : {&o.json, &o.csv, &o.plot})
            if (is_standard_output(*path))
                throw UsageError{
                    "--output-format json writes to standard output already; give "
                    "--output FILE, or a file name for --json, --csv or --plot"};

    std::vector<FioJob> jobs;
    try {
        if (!file.empty())
            jobs = engines::parse_fio_job_file(
                read_job_file(file), file,
                [](const std::string& var) -> std::optional<std::string> {
                    const char* v = std::getenv(var.c_str());
                    return v ? std::optional<std::string>(v) : std::nullopt;
                });
        std::vector<FioSetting> cli = command_line_settings(app, full);
        // Without a job, only fio's own options (and --runtime, which
        // time_based needs) go through fio's rules.
        if (!full && app.count("--runtime"))
            cli.push_back(FioSetting{"runtime", o.runtime, "--runtime"});
        jobs = engines::join_command_line(std::move(jobs), cli);
        std::vector<FioRun> runs;
        for (const FioJob& job : jobs) {
            const FioWorkload w = engines::map_fio_job(job);
            runs.push_back(full ? full_run(app, w, o) : plain_run(app, w, o));
        }
        return runs;
    } catch (const engines::FioJobError& e) {
        throw UsageError{e.what()};
    }
}

int run_fio(const std::vector<FioRun>& runs, const FioCli& fio,
            const std::function<int(const FioRun&, const RunHooks&)>& run_one) {
    const bool json = fio.output_format == "json";
    const std::string& out = fio.output;
    if (!out.empty() && !is_standard_output(out))
        if (const int status = check_output(out)) return status;
    // The table goes to the file with --output (normal), to stderr when
    // the JSON takes standard output, else to standard output.
    char* text = nullptr;
    std::size_t text_size = 0;
    std::FILE* human = stdout;
    if (json && (out.empty() || is_standard_output(out)))
        human = stderr;
    else if (!json && !out.empty() && !is_standard_output(out))
        human = ::open_memstream(&text, &text_size);
    if (!human) return kFailure;
    engines::FioDocument doc;
    int status = kOk;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        RunHooks hooks;
        hooks.human = human;
        if (runs.size() > 1 || !runs[i].job_options.empty() || runs[i].name != "bench")
            hooks.title = fmt::format("job {} ({} of {})", runs[i].name, i + 1, runs.size());
        hooks.report = [&, i](const engines::Report& r) {
            doc.add(r, runs[i].name, static_cast<unsigned>(i), runs[i].job_options);
        };
        const int s = run_one(runs[i], hooks);
        if (status == kOk) status = s;
        if (s == kUsage || s >= kInterrupted) break;
    }
    int saved = kOk;
    if (json)
        saved = save_output(out.empty() ? "-" : out, doc.str());
    else if (text) {
        std::fclose(human);
        saved = save_output(out, std::string_view(text, text_size));
        std::free(text);
    }
    return status == kOk ? saved : status;
}

}  // namespace uringkit::cli
