// `uringkit bench --replay TRACE`: a program's own recorded I/O replayed
// through pread and the ring engines (src/replaybench), with the verdict.
#include "bench_replay.hpp"
#include "command.hpp"
#include "console.hpp"
#include "interrupt.hpp"

#include "cli/output_file.hpp"
#include "replaybench/replaybench.hpp"

#include <unistd.h>

#include <fmt/core.h>

#include <cstdio>
#include <system_error>

namespace uringkit::cli {

void add_replay_options(CLI::App& app, ReplayOptions& o) {
    app.add_option(
        "--replay", o.trace,
        "Replay a recorded trace (strace -f -ttt -T output, or a fio iolog) through the engines "
        "instead of the synthetic workload (man uringkit-bench shows the strace command)");
    app.add_option(
           "--mode", o.modes,
           "Replay modes: as-recorded, batched, timed (a list runs each); timed needs timestamps")
        ->capture_default_str();
    app.add_option("--scratch", o.scratch,
                   "Replay into copies of the trace's files made in this directory (and removed "
                   "afterwards) instead of the files themselves");
    app.add_option("--loops", o.loops,
                   "Passes over the trace per run (a short trace needs several for a verdict)")
        ->capture_default_str();
    app.add_flag("--lenient", o.lenient,
                 "Count and skip trace lines that cannot be parsed instead of stopping");
}

namespace {

// bench's options with no meaning for a replay: the trace decides them.
constexpr const char* kNotForReplay[] = {
    "--filename", "--size",    "--rw",      "--rwmixread", "--bs",    "--batch",
    "--numjobs",  "--direct",  "--runtime", "--ios",       "--ramp",  "--csv",
    "--plot",     "--compare", "--seed",    "--threads",   "--order", "--order-seed"};

replaybench::Config make_config(const CLI::App& app, const ReplayOptions& o,
                                const SharedBenchOptions& s) {
    for (const char* opt : kNotForReplay)
        if (app.count(opt))
            throw UsageError{
                fmt::format("{} does not apply to --replay: the trace gives the I/O", opt)};
    replaybench::Config c;
    if (app.count("--engines")) {
        c.engines = split_option("--engines", s.engines, "pread,uring");
        for (const std::string& e : c.engines)
            if (!replaybench::replay_engine_known(e))
                throw UsageError{
                    fmt::format("--engines: '{}' does not replay traces; replay engines: {}", e,
                                replaybench::kReplayEngines)};
    }
    c.modes.clear();
    for (const std::string& m : split_option("--mode", o.modes, "as-recorded,batched")) {
        const auto mode = replaybench::parse_mode(m);
        if (!mode) throw UsageError{fmt::format("--mode {}: use as-recorded, batched or timed", m)};
        c.modes.push_back(*mode);
    }
    if (app.count("--iodepth")) {
        c.depths.clear();
        for (const std::string& d : split_option("--iodepth", s.iodepth, "1,32")) {
            char* end = nullptr;
            const long v = std::strtol(d.c_str(), &end, 10);
            if (end == d.c_str() || *end || v < 1 || v > 4096)
                throw UsageError{
                    fmt::format("--iodepth {}: give whole numbers from 1 to 4096, like 1,32", d)};
            c.depths.push_back(static_cast<unsigned>(v));
        }
    }
    if (o.loops < 1 || o.loops > 100000)
        throw UsageError{fmt::format("--loops {}: give 1 to 100000", o.loops)};
    c.loops = o.loops;
    if (s.rounds > 1000) throw UsageError{fmt::format("--rounds {}: give 1 to 1000", s.rounds)};
    c.rounds = s.rounds;
    if (!(s.confidence >= 0.5 && s.confidence < 1))
        throw UsageError{
            fmt::format("--confidence {}: give a probability from 0.5 to below 1", s.confidence)};
    c.confidence = s.confidence;
    if (s.cache == "cold")
        c.cache = replaybench::Cache::cold;
    else if (s.cache != "warm")
        throw UsageError{fmt::format("--cache {}: use warm or cold", s.cache)};
    c.allow_write = s.allow_write;
    c.scratch = o.scratch;
    c.verify = s.verify;
    return c;
}

int exit_for(replaybench::ReplayError::Kind k) {
    switch (k) {
        case replaybench::ReplayError::usage:
            return kUsage;
        case replaybench::ReplayError::bad_input:
            return kBadInput;
        case replaybench::ReplayError::failure:
            break;
    }
    return kFailure;
}

}  // namespace

int run_replay(const CLI::App& app, const ReplayOptions& o, const SharedBenchOptions& s) {
    replaybench::Config config;
    try {
        config = make_config(app, o, s);
    } catch (const UsageError& e) {
        return usage_error("bench", e.message);
    }
    if (!s.json.empty())
        if (const int status = check_output(s.json)) return status;
    const bool json_to_stdout = cli::is_standard_output(s.json);
    std::FILE* const human = json_to_stdout ? stderr : stdout;
    InterruptScope interrupt;
    replaybench::Program program;
    try {
        auto reader = replaybench::TraceReader::open(o.trace, replaybench::Options{o.lenient});
        program = replaybench::compile(reader);
    } catch (const replaybench::TraceError& e) {
        emit(stderr, "uringkit bench: --replay {}: {}\n", o.trace, e.what());
        return kBadInput;
    } catch (const std::system_error& e) {
        emit(stderr, "uringkit bench: --replay {}: {}\n", o.trace, e.code().message());
        return kBadInput;
    }
    const bool live = ::isatty(STDERR_FILENO);
    replaybench::ProgressFn progress;
    if (live)
        progress = [](const replaybench::Progress& p) {
            emit(stderr, "\r\033[Kreplay: run {}/{}: {} {} depth {}", p.done, p.total, p.engine,
                 replaybench::mode_name(p.mode), p.depth);
            flush(stderr);
        };
    replaybench::Result result;
    try {
        result = replaybench::run(program, config, interrupt.flag(), progress);
    } catch (const replaybench::ReplayError& e) {
        if (live) emit(stderr, "\r\033[K");
        emit(stderr, "uringkit bench: --replay {}: {}\n", o.trace, e.what());
        return interrupt.exit_status(exit_for(e.kind()));
    } catch (const std::exception& e) {
        if (live) emit(stderr, "\r\033[K");
        emit(stderr, "uringkit bench: --replay {}: {}\n", o.trace, e.what());
        return interrupt.exit_status(kFailure);
    }
    if (live) emit(stderr, "\r\033[K");
    const auto comparisons = replaybench::compare(result);
    emit(human, "uringkit bench --replay {}\n{}", o.trace,
         replaybench::format_report(program, result, comparisons));
    flush(human);
    bool any_ok = false, any_failed = false;
    for (const replaybench::Run& r : result.runs) {
        any_ok = any_ok || r.error.empty();
        any_failed = any_failed || !r.error.empty();
    }
    int status = any_ok && !any_failed ? kOk : kFailure;
    if (!s.json.empty())
        if (const int failed =
                save_output(s.json, replaybench::to_json(program, result, comparisons)))
            status = failed;
    if (result.interrupted) return interrupt.exit_status(kInterrupted);
    return interrupt.exit_status(status);
}

}  // namespace uringkit::cli
