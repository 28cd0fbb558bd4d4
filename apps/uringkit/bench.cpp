// `uringkit bench`: every submission engine side by side on the same file.
// This file parses options, calls the engines layer and prints; measuring,
// engines and formatting live in src/engines/.
#include "bench_fio.hpp"
#include "bench_net.hpp"
#include "bench_options.hpp"
#include "bench_replay.hpp"
#include "command.hpp"
#include "console.hpp"
#include "interrupt.hpp"
#include "manual.hpp"

#include "cli/duration.hpp"
#include "cli/output_file.hpp"
#include "cli/size.hpp"
#include "cli/terminal.hpp"
#include "engines/engine.hpp"
#include "engines/host.hpp"
#include "engines/report.hpp"
#include "engines/runner.hpp"
#include "engines/target.hpp"

#include <fmt/core.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace uringkit::cli {
namespace {

using namespace uringkit::engines;
using Options = BenchOptions;

int exit_for(TargetError::Kind k) {
    switch (k) {
        case TargetError::usage:
            return kUsage;
        case TargetError::bad_input:
            return kBadInput;
        case TargetError::no_space:
            return kNoSpace;
        case TargetError::interrupted:
            return kInterrupted;
    }
    return kFailure;
}

int run(const GivenOptions& given, const Options& o, const RunHooks* hooks = nullptr) {
    TargetSpec tspec;
    BenchSpec spec;
    try {
        spec = make_spec(given, o, tspec);
    } catch (const UsageError& e) {
        return usage_error("bench", e.message);
    }
    std::optional<SavedRun> saved;
    try {
        if (!o.compare.empty()) saved = load_saved(o.compare);
    } catch (const OutputError& e) {
        emit(stderr, "uringkit bench: {}\n", e.what());
        return kBadInput;
    }
    const std::pair<const char*, const std::string*> outputs[] = {
        {"--json", &o.json}, {"--csv", &o.csv}, {"--plot", &o.plot}};
    const char* to_stdout = nullptr;
    for (const auto& [opt, path] : outputs) {
        if (cli::is_standard_output(*path)) {
            if (to_stdout) {
                emit(stderr,
                     "uringkit bench: {} -: {} already writes to standard output; give a "
                     "file name for one of them\n",
                     opt, to_stdout);
                return kUsage;
            }
            to_stdout = opt;
        } else if (!path->empty() && !o.filename.empty() && cli::same_file(*path, o.filename)) {
            emit(stderr,
                 "uringkit bench: {} {}: is the input file (--filename {}); give another "
                 "name for the output\n",
                 opt, *path, o.filename);
            return kUsage;
        }
    }
    for (const auto& [opt, path] : outputs)
        if (!path->empty())
            if (const int status = check_output(*path)) return status;
    // With an output on standard output the table and verdict go to stderr,
    // so `--json - | jq` reads JSON only.
    std::FILE* const human = to_stdout ? stderr : hooks && hooks->human ? hooks->human : stdout;
    if (hooks && !hooks->title.empty()) emit(human, "{}\n", hooks->title);

    // SIGINT/SIGTERM end the runs early (the stop flag), print what was
    // measured and remove the temporary file; then bench ends by the signal.
    InterruptScope interrupt;
    tspec.stop = interrupt.flag();

    std::optional<Target> target;
    try {
        target.emplace(tspec);
    } catch (const TargetError& e) {
        emit(stderr, "uringkit bench: {}\n", e.what());
        return interrupt.exit_status(exit_for(e.kind()));
    }
    if (target->size() <= spec.workload.offset)
        return usage_error(
            "bench", fmt::format("--offset {}: at or past the end of {} ({})", spec.workload.offset,
                                 target->path(), cli::format_bytes(target->size())));
    spec.workload.size = target->size() - spec.workload.offset;
    Host host = describe_host(target->path());
    host.ceiling = measure_ceiling(*target, spec.workload);

    const Workload& w = spec.workload;
    std::string depths;
    for (unsigned d : spec.depths) depths += (depths.empty() ? "" : ",") + std::to_string(d);
    const bool batch_capped = spec.batch && std::any_of(spec.depths.begin(), spec.depths.end(),
                                                        [&](unsigned d) { return d < spec.batch; });
    emit(human,
         "uringkit bench: {} {}, {}, {} {} ({} on {}), depth {}{}, {} job{}, {} engine{}, {}\n",
         cli::format_bytes(w.bs), rw_name(w.rw),
         w.direct ? "O_DIRECT" : (spec.cache == Cache::warm ? "warm cache" : "cold cache"),
         cli::format_bytes(w.size) +
             (w.offset ? fmt::format(" at offset {} of", cli::format_bytes(w.offset)) : "") +
             (target->temporary() ? " temporary file"
              : w.offset          ? ""
                                  : " of"),
         target->path(), host.filesystem, host.device, depths,
         spec.batch
             ? fmt::format(" batch {}{}", spec.batch, batch_capped ? " (at most the depth)" : "")
             : std::string(" batch=depth"),
         spec.numjobs, spec.numjobs > 1 ? "s" : "", spec.engines.size(),
         spec.engines.size() > 1 ? "s" : "",
         spec.runtime_s > 0
             ? fmt::format("{:g} s per run after {:g} s ramp{}", spec.runtime_s, spec.ramp_s,
                           spec.ios ? fmt::format(" (or {} I/Os)", spec.ios) : "")
             : fmt::format("{} I/Os per run", spec.ios));
    emit(human, "{} round{}, engine order {}{}\n", spec.rounds, spec.rounds > 1 ? "s" : "",
         order_name(spec.order),
         spec.order == Order::shuffle ? fmt::format(" (--order-seed {})", spec.order_seed)
                                      : std::string());
    if (host.ceiling.measured())
        emit(human,
             "ceiling: a system call costs {} and a {} {} here; removing every system call "
             "would give about {:.2f}x\n",
             format_ns(host.ceiling.syscall_ns), host.ceiling.unit,
             format_ns(host.ceiling.pread_ns), host.ceiling.gain());
    // Standard output refused the header (a full disk, a reader gone): the
    // table could not be printed either, so the run is not started.
    if (!flush(human) && output_lost()) return kFailure;

    // On a terminal a live line, redrawn in place; elsewhere (a log, CI) a
    // plain line every 10 s, so a long run shows it is alive without
    // filling the log.
    const bool live = ::isatty(STDERR_FILENO);
    ProgressFn progress;
    if (live) {
        progress = [](const Progress& p) {
            emit(stderr, "\r\033[K{}", progress_line(p));
            flush(stderr);
        };
    } else {
        progress = [last = std::chrono::steady_clock::now()](const Progress& p) mutable {
            const auto now = std::chrono::steady_clock::now();
            if (now - last < std::chrono::seconds(10)) return;
            last = now;
            emit(stderr, "uringkit bench: {}\n", progress_line(p));
        };
    }
    const Results results = run_bench(spec, *target, interrupt.flag(), progress);
    if (live) emit(stderr, "\r\033[K");

    const Report report{spec,
                        results,
                        host,
                        target->path(),
                        target->temporary(),
                        spec.workload.size,
                        saved ? &*saved : nullptr};
    if (hooks && hooks->report) hooks->report(report);
    target.reset();  // the temporary file goes before printing, so nothing is left if stdout blocks
    const std::size_t width = o.wide ? 0 : cli::terminal_columns(::fileno(human));
    emit(human, "\n{}\n", format_table(results, against_saved(report), width));
    for (const std::string& line : verdict(report)) emit(human, "{}\n", line);
    emit(human, "\n");
    for (const std::string& line : notes(report)) emit(human, "note: {}\n", line);
    flush(human);

    int status = kOk;
    if (!o.json.empty()) status = save_output(o.json, to_json(report));
    if (status == kOk && !o.csv.empty()) status = save_output(o.csv, to_csv(results));
    if (status == kOk && !o.plot.empty()) status = save_output(o.plot, to_svg(report));
    // A --compare that judged nothing (another job, no engine and depth in
    // common; the notes say which) has not done what it was asked.
    if (status == kOk && saved && against_saved(report).empty()) status = kFailure;
    if (results.interrupted) return interrupt.exit_status(kInterrupted);
    const bool any_ok = std::any_of(results.rows.begin(), results.rows.end(),
                                    [](const Row& r) { return r.status == Row::ok; });
    if (!any_ok) {
        emit(stderr, "uringkit bench: no engine could run (see the reasons in the table)\n");
        return kFailure;
    }
    return interrupt.exit_status(status);
}

const Register reg{Command{
    "bench", "Benchmark pread, threads, libaio and io_uring engines side by side on one file", 20,
    [](CLI::App& app) -> std::function<int()> {
        auto o = std::make_shared<Options>();
        auto replay = std::make_shared<ReplayOptions>();
        auto fio = std::make_shared<FioCli>();
        app.add_option(
            "--filename", o->filename,
            "File or block device to read (default: a temporary file of --size in $TMPDIR, removed "
            "afterwards)");
        app.add_option("--size", o->size,
                       "Bytes of the file to use, with k/m/g suffixes and fio's decimals (1.5m); "
                       "at most the --filename file's size (temporary file: 256m)");
        app.add_option("--rw", o->rw, "randread | read | randwrite | write | randrw")
            ->capture_default_str();
        app.add_option("--rwmixread", o->rwmixread, "Percent reads with --rw randrw")
            ->capture_default_str();
        app.add_option("--bs", o->bs, "Block size per I/O")->capture_default_str();
        app.add_option("--iodepth", o->iodepth, "I/Os in flight per job; a list sweeps: 1,8,32")
            ->capture_default_str();
        app.add_option(
            "--batch", o->batch,
            "I/Os per submit and completions waited for per reap (default: the depth; at "
            "most the largest depth, and each depth uses min(batch, depth))");
        app.add_option("--numjobs", o->numjobs,
                       "Threads, each with its own ring and file descriptor")
            ->capture_default_str();
        app.add_flag("--direct", o->direct, "O_DIRECT: bypass the page cache");
        app.add_option("--runtime", o->runtime,
                       "Measured time per run (default 0.15 s: 2, 500ms, 1m)");
        app.add_option("--ios", o->ios,
                       "I/Os per run over all jobs (with --runtime: whichever first)");
        app.add_option("--ramp", o->ramp,
                       "Warm-up before measuring, excluded from the figures (default 0.05 s)");
        app.add_option("--engines", o->engines,
                       "Engines to run: "
                       "pread,threadpool,libaio,uring,uring-reg,uring-sqpoll,uring-iopoll,liburing,"
                       "auto (default: all but uring-iopoll)");
        app.add_option("--cache", o->cache,
                       "warm: load the file into the page cache first; cold: drop it "
                       "(POSIX_FADV_DONTNEED) before each run and again after its ramp")
            ->capture_default_str();
        app.add_option("--rounds,--repeat", o->rounds,
                       "Rounds: each runs every engine at every depth once, engines interleaved; "
                       "figures are medians with their interval, engines are compared by the "
                       "ratio of their runs in the same round")
            ->capture_default_str();
        app.add_option("--order", o->order,
                       "Engine order within a round: rotate (each round starts one engine "
                       "later), shuffle (random, seed printed) or fixed")
            ->capture_default_str();
        app.add_option("--order-seed", o->order_seed,
                       "Seed of --order shuffle (default: a fresh one, printed)");
        app.add_option("--confidence", o->confidence,
                       "Confidence of each interval, and family-wise for the verdict over all "
                       "its comparisons")
            ->capture_default_str();
        app.add_option("--compare", o->compare,
                       "Judge each engine and depth against an earlier run saved with --json, of "
                       "the same job (--rw, --bs, --size, --direct, --cache, file system)");
        app.add_option("--seed", o->seed, "Seed of the random offsets (the same for every engine)")
            ->capture_default_str();
        app.add_option("--threads", o->threads,
                       "Most workers of the threadpool engine (it uses min(depth, this))")
            ->capture_default_str();
        app.add_option("--ring-entries", o->ring_entries,
                       "SQ and CQ entries of the uring, uring-async and uring-sqpoll rings "
                       "(default: the depth, CQ twice that); below the depth the CQ overflows");
        app.add_option("--sq-thread-idle", o->sq_thread_idle,
                       "Milliseconds the uring-sqpoll thread polls without work before it "
                       "sleeps (default 50)");
        app.add_flag("--allow-write", o->allow_write,
                     "Allow a write workload on the file given with --filename");
        app.add_flag("--verify", o->verify,
                     "Check that every block read carries its own offset (temporary file only)");
        app.add_option("--json", o->json,
                       "Write every figure as JSON (docs/json.md); - is standard output "
                       "(the table then goes to stderr)");
        app.add_flag("--no-latency", o->no_latency,
                     "Take no clock read per I/O and keep no latency histogram: a "
                     "pure-throughput figure, without the latency columns (their cost is in "
                     "docs/bench.md)");
        app.add_flag("--wide", o->wide,
                     "Print every column of the table; without it a terminal gets the columns "
                     "that fit its width (TIOCGWINSZ, else $COLUMNS), the least important left "
                     "out first, and a pipe or file always gets every column");
        app.add_option("--csv", o->csv, "Write the table as CSV; - is standard output");
        app.add_option("--plot", o->plot,
                       "Write an SVG chart: IOPS and CPU per I/O against depth, each with its 95% "
                       "interval and its verdict marked; - is standard "
                       "output. A regular file is replaced whole through a temporary beside it; "
                       "a symlink, FIFO or device is written in place");
        describe(
            app,
            Manual{
                .description =
                    "Runs the same blocks of the same file through each engine: pread (one at a "
                    "time), a thread pool of pread workers, libaio, io_uring plain, with "
                    "registered "
                    "files and buffers, with SQPOLL and with IOPOLL, liburing, and auto (pread or "
                    "the "
                    "ring, chosen per run).  Without --filename a temporary file of --size is made "
                    "in "
                    "$TMPDIR and removed afterwards.\n\n"
                    "Each round runs every engine at every depth once, engines interleaved and "
                    "their "
                    "order rotated, so that a slow moment of the machine lands on every engine "
                    "alike.  "
                    "The table gives each row's median over the rounds with its interval; the "
                    "verdict "
                    "compares engines by the ratio of their runs in the same round and calls a "
                    "difference faster or slower only when the interval of those ratios excludes "
                    "1, "
                    "else the same.  Run an engine against itself (--engines uring,uring) to see "
                    "what "
                    "noise looks like on the machine.\n\n"
                    "System calls per I/O are counted by the engines and CPU per I/O comes from "
                    "getrusage of the run; on a terminal a live line shows the engine, depth, "
                    "round "
                    "and an estimate of the time left.\n\n"
                    "Replay (--replay TRACE): record your program with strace -f -ttt -T -y "
                    "--seccomp-bpf -o trace.txt -e "
                    "trace=openat,open,creat,close,close_range,dup,dup2,"
                    "dup3,fcntl,clone,clone3,fork,vfork,read,write,pread64,pwrite64,readv,writev,"
                    "preadv,pwritev,preadv2,pwritev2,lseek,fsync,fdatasync,sync_file_range,"
                    "fallocate,"
                    "ftruncate PROGRAM ARGS, or with fio's write_iolog (versions 2 and 3), then "
                    "run "
                    "uringkit bench --replay trace.txt.  Each thread's reads, writes and syncs are "
                    "replayed on a thread of their own through each engine (default pread,uring): "
                    "as "
                    "recorded (one at a time, the program's own shape), batched (up to --iodepth "
                    "in "
                    "flight per thread, a step waiting for earlier overlapping writes and syncs of "
                    "its file: an upper bound), timed (each at its recorded time).  Files are read "
                    "where the trace names them, read-only; a trace that writes needs "
                    "--allow-write "
                    "(those files are written) or --scratch DIR (copies of the recorded sizes are "
                    "made there and removed).  Time the program spent computing is not replayed; "
                    "the "
                    "header states it.",
                .examples =
                    {{"uringkit bench",
                      "A 256 MiB temporary file, 4 KiB random reads from a warm cache, depths 1 "
                      "and "
                      "32, every engine but IOPOLL (about 35 s)."},
                     {"uringkit bench --engines uring,uring",
                      "A/A: one engine against itself, to see how much this machine's noise moves "
                      "it."},
                     {"uringkit bench --filename /data/big --iodepth 1,8,32 --json out.json --plot "
                      "out.svg",
                      "Your own file at three depths, every figure saved as JSON and drawn as "
                      "SVG."},
                     {"uringkit bench job.fio --output-format=json --output fio.json",
                      "A fio job file: each job through every engine (or the one its ioengine "
                      "names), written in fio's JSON shape; the full manual's \"fio users\" "
                      "section has the table of fio's options."},
                     {"uringkit bench --replay trace.txt",
                      "Your program's recorded I/O replayed through pread and io_uring."}},
                .exits =
                    {{0, "at least one engine ran (with --replay: replayed)"},
                     {1,
                      "no engine could run, a run failed, --compare compared nothing (a note "
                      "says why), or an output could not be written"},
                     {2,
                      "bad option or value (an unknown engine, a zero size or depth, an empty "
                      "list, --size beyond the file, a write to your file without "
                      "--allow-write)"},
                     {4,
                      "the file, an output path, the --compare file or the trace (or a file "
                      "it names) cannot be used; the message says which and why"},
                     {5, "no room for the temporary file"},
                     {130,
                      "interrupted by SIGINT (SIGTERM: 143): what was measured is printed, the "
                      "temporary file removed, then bench ends by the signal"}},
                .see_also = "fio(1), strace(1), uringkit-bench-net(1), uringkit-probe(1)",
                .doc = "bench.md"});
        add_replay_options(app, *replay);
        group_options(app, "Workload",
                      {"--filename", "--size", "--rw", "--rwmixread", "--bs", "--iodepth",
                       "--batch", "--numjobs", "--direct", "--runtime", "--ios", "--ramp",
                       "--cache", "--seed", "--allow-write", "--verify"});
        group_options(app, "Engines", {"--engines", "--threads"});
        group_options(app, "Statistics",
                      {"--rounds", "--order", "--order-seed", "--confidence", "--compare"});
        group_options(app, "Output", {"--json", "--csv", "--plot", "--wide", "--no-latency"});
        group_options(app, "Replay", {"--replay", "--mode", "--scratch", "--loops", "--lenient"});
        name_values(app, {{"--filename", "FILE"},
                          {"--size", "SIZE"},
                          {"--bs", "SIZE"},
                          {"--iodepth", "LIST"},
                          {"--runtime", "TIME"},
                          {"--ramp", "TIME"},
                          {"--engines", "LIST"},
                          {"--compare", "FILE"},
                          {"--json", "FILE"},
                          {"--csv", "FILE"},
                          {"--plot", "FILE"},
                          {"--replay", "TRACE"},
                          {"--mode", "LIST"},
                          {"--scratch", "DIR"}});
        {
            std::vector<std::string> engine_names;
            for (const engines::EngineInfo& e : engines::all_engines())
                engine_names.emplace_back(e.name);
            complete_with(app.get_option("--engines"), std::move(engine_names));
            complete_with(app.get_option("--rw"),
                          {"randread", "read", "randwrite", "write", "randrw"});
            complete_with(app.get_option("--cache"), {"warm", "cold"});
            complete_with(app.get_option("--order"), {"rotate", "shuffle", "fixed"});
            complete_with(app.get_option("--mode"), {"as-recorded", "batched", "timed"});
        }
        add_fio_options(app, *fio);  // after bench's own groups: its group comes last in --help
        CLI::App* net = app.add_subcommand("net",
                                           "serve's socket engines side by side on loopback "
                                           "(uring, uring-coro, epoll), with a verdict");
        auto net_action = setup_bench_net(*net);
        CLI::App* const bench = &app;
        return [o, net, net_action, replay, bench, fio] {
            if (net->parsed()) return net_action();
            std::vector<FioRun> runs;
            try {
                runs = fio_runs(*bench, *fio, *o);
            } catch (const UsageError& e) {
                return usage_error("bench", e.message);
            } catch (const FioInputError& e) {
                emit(stderr, "uringkit bench: {}\n", e.message);
                return static_cast<int>(kBadInput);
            }
            if (!runs.empty() && !replay->trace.empty())
                return usage_error("bench",
                                   "--replay runs a trace, not a fio job or fio's options");
            if (!runs.empty())
                return run_fio(runs, *fio, [&](const FioRun& r, const RunHooks& hooks) {
                    return run(GivenOptions{*bench, r.given}, r.options, &hooks);
                });
            if (replay->trace.empty()) return run(GivenOptions{*bench, {}}, *o);
            const SharedBenchOptions shared{o->engines,
                                            o->iodepth,
                                            o->cache,
                                            o->json,
                                            bench->count("--rounds") ? o->rounds : 0u,
                                            o->confidence,
                                            o->allow_write,
                                            o->verify};
            return run_replay(*bench, *replay, shared);
        };
    }}};

}  // namespace
}  // namespace uringkit::cli
