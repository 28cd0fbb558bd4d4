// `uringkit bench net`: serve's socket engines side by side on loopback,
// loaded by `uringkit load`'s client, with a verdict (src/netbench).
#include "bench_net.hpp"
#include "command.hpp"
#include "console.hpp"
#include "interrupt.hpp"
#include "manual.hpp"

#include "cli/duration.hpp"
#include "cli/output_file.hpp"
#include "netbench/netbench.hpp"

#include <unistd.h>

#include <fmt/core.h>

#include <cmath>
#include <cstdio>
#include <memory>

namespace uringkit::cli {
namespace {

std::string default_workloads() {
    std::string out;
    for (const netbench::Workload& w : netbench::default_workloads())
        out += (out.empty() ? "" : ",") + w.name();
    return out;
}

struct Options {
    std::string engines = "uring,uring-coro,uring-bundle,uring-inc,epoll",
                workloads = default_workloads();
    std::string duration = "500ms", json;
    unsigned rounds = 0;
    double confidence = 0.95;
    bool no_pin = false;
};

netbench::Config make_config(const Options& o) {
    netbench::Config c;
    c.engines = split_option("--engines", o.engines, "uring,epoll");
    for (const std::string& e : c.engines)
        if (!netbench::known_engine(e))
            throw UsageError{fmt::format("--engines {}: unknown engine '{}'; give {}", o.engines, e,
                                         netbench::kEngineNames)};
    c.workloads.clear();
    for (const std::string& w : split_option("--workloads", o.workloads, "echo:64:64,http:64:16")) {
        std::string why;
        const auto parsed = netbench::parse_workload(w, why);
        if (!parsed) throw UsageError{fmt::format("--workloads {}: {}", w, why)};
        c.workloads.push_back(*parsed);
    }
    const auto s = cli::parse_seconds(o.duration);
    if (!s || *s < 0.05)
        throw UsageError{fmt::format(
            "--duration {}: give a time of at least 50ms, like 1s or 500ms", o.duration)};
    c.duration = std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(*s * 1e9)));
    if (o.rounds > 1000) throw UsageError{fmt::format("--rounds {}: at most 1000", o.rounds)};
    c.rounds = o.rounds;
    if (!(o.confidence >= 0.5 && o.confidence < 1))
        throw UsageError{fmt::format(
            "--confidence {}: give a probability from 0.5 to below 1, like 0.95", o.confidence)};
    c.confidence = o.confidence;
    c.pin = !o.no_pin;
    return c;
}

int run(const Options& o) {
    set_tool_name("bench net");
    netbench::Config config;
    try {
        config = make_config(o);
    } catch (const UsageError& e) {
        return usage_error("bench net", e.message);
    }
    if (!o.json.empty())
        if (const int status = check_output(o.json)) return status;
    const bool json_to_stdout = cli::is_standard_output(o.json);
    std::FILE* const human = json_to_stdout ? stderr : stdout;
    InterruptScope interrupt;
    const bool live = ::isatty(STDERR_FILENO);
    netbench::ProgressFn progress;
    if (live)
        progress = [](const netbench::Progress& p) {
            emit(stderr, "\r\033[Kbench net: run {}/{}: {} on {}", p.done + 1, p.total, p.engine,
                 p.workload);
            flush(stderr);
        };
    netbench::Result result;
    try {
        result = netbench::run(config, interrupt.flag(), progress);
    } catch (const std::exception& e) {
        if (live) emit(stderr, "\r\033[K");
        emit(stderr, "uringkit bench net: {}\n", e.what());
        return interrupt.exit_status(kFailure);
    }
    if (live) emit(stderr, "\r\033[K");
    const auto comparisons = netbench::compare(result);
    emit(human, "{}", netbench::format_report(result, comparisons));
    flush(human);
    bool any_usable = false, any_failed = false;
    for (const netbench::Run& r : result.runs) {
        any_usable = any_usable || r.usable();
        any_failed = any_failed || !r.error.empty();
    }
    int status = any_usable && !any_failed ? kOk : kFailure;
    if (!o.json.empty())
        if (const int failed = save_output(o.json, netbench::to_json(result, comparisons)))
            status = failed;
    if (result.interrupted) return interrupt.exit_status(kInterrupted);
    return status;
}

}  // namespace

std::function<int()> setup_bench_net(CLI::App& app) {
    auto o = std::make_shared<Options>();
    app.add_option(
           "--engines", o->engines,
           "Engines to compare: serve's uring, uring-coro and epoll; uring-bundle (the uring "
           "engine with recv "
           "bundles, Linux 6.10) and uring-inc (an incremental ring of 64 KiB buffers, Linux "
           "6.12), each "
           "listed as unsupported with the reason where the kernel lacks it; uring-calls (the "
           "uring engine making file: workloads' opens and reads as system calls, as serve "
           "--file-io calls; the same as uring on the other workloads), uring-splice (file: "
           "bodies spliced file->pipe->socket on the ring, as serve --body-path splice) and "
           "epoll-read (epoll reading file: bodies into its output instead of sendfile); nginx "
           "(the peer, where installed: one process, sendfile on, tcp_nopush on; http: and file: "
           "workloads only, its system calls not counted).  One listed twice "
           "(epoll,epoll) "
           "is compared with itself: an A/A run that shows what \"the same\" looks like here")
        ->capture_default_str();
    app.add_option("--workloads", o->workloads,
                   "Traffic shapes: echo:CONNECTIONS:SIZE (ping-pong of SIZE bytes) and "
                   "http:CONNECTIONS:PIPELINE (keep-alive GETs of serve's 128-byte body, PIPELINE "
                   "in flight) and file:CONNECTIONS:SIZE (GETs of one file of SIZE bytes, served "
                   "by serve --root from a directory the run makes in /var/tmp: file:64:4k, "
                   "file:64:64k, file:64:1m)")
        ->capture_default_str();
    app.add_option(
        "--rounds", o->rounds,
        "Rounds; each runs every engine on every workload, in an order rotated per round "
        "(default: the fewest that can give a verdict at --confidence)");
    app.add_option("-d,--duration", o->duration, "Load time per run: 1s, 500ms")
        ->capture_default_str();
    app.add_option(
           "--confidence", o->confidence,
           "Family-wise confidence of the verdict: the chance that no \"cheaper\" or \"costlier\" "
           "in the run is noise")
        ->capture_default_str();
    app.add_flag(
        "--no-pin", o->no_pin,
        "Do not pin the server and the client to CPUs of their own (by default the first two CPUs "
        "this process may use)");
    app.add_option("--json", o->json,
                   "Write every run and comparison as JSON (docs/json.md); - is standard output");
    name_values(app, {{"--engines", "LIST"}, {"--workloads", "LIST"}, {"--json", "FILE"}});
    complete_with(app.get_option("--engines"),
                  {"uring", "uring-coro", "epoll", "uring-bundle", "uring-inc", "uring-calls",
                   "uring-splice", "epoll-read", "nginx"});
    describe(
        app,
        Manual{
            .description =
                "Each run starts a fresh server (one engine thread) in a child process and loads "
                "it "
                "from this one (one client thread on io_uring, as uringkit load), each on its own "
                "CPU, on 127.0.0.1 only.\n\n"
                "Engines are ranked by the server's CPU per request (its getrusage over the load, "
                "divided by the requests it served): on loopback the client pays for much of both "
                "sides' TCP work, so requests/s are reported beside it and flagged client-bound "
                "when "
                "the client's thread was saturated.  A difference is named only when its interval, "
                "from the per-round ratios, excludes 1.",
            .examples = {{"uringkit bench net",
                          "Every engine on every workload shape, 11 rounds (about 160 s)."},
                         {"uringkit bench net --engines uring,epoll --workloads "
                          "echo:256:64,http:256:16 -d 1s",
                          "Two engines on two shapes, one second per run."},
                         {"uringkit bench net --engines epoll,epoll",
                          "A/A: what the same looks like on this machine."}},
            .exits = {{0, "every run worked"},
                      {1,
                       "a run failed (listed under the tables) or none could run, or an output "
                       "could not be written"},
                      {2, "bad option or value"},
                      {4, "an unusable --json path"},
                      {130,
                       "interrupted by SIGINT (SIGTERM: 143): what was measured is printed, then "
                       "bench ends by the signal"}},
            .see_also = "wrk(1), uringkit-serve(1), uringkit-load(1)",
            .doc = "bench_net.md"});
    return [o] { return run(*o); };
}

}  // namespace uringkit::cli
