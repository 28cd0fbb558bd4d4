// `uringkit load`: an HTTP/1.1 keep-alive (or TCP echo) load generator on
// io_uring.  Parses options, calls uringkit::load::run_load, prints.
#include "command.hpp"
#include "console.hpp"
#include "interrupt.hpp"
#include "load_paths.hpp"
#include "manual.hpp"

#include "cli/duration.hpp"
#include "cli/output_file.hpp"
#include "cli/size.hpp"
#include "load/load.hpp"
#include "load/request.hpp"
#include "net/server.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace uringkit::cli {
namespace {

struct Options {
    std::string target, mode = "http", duration = "5s", timeout = "2s", size = "64", json;
    std::string method = "GET";
    std::vector<std::string> headers;
    std::optional<std::string> body;
    std::optional<std::string> script;  // wrk's -s: refused, named, with what to use
    bool latency = false;               // wrk's --latency: the percentiles are always printed
    std::string paths, verify;          // --paths FILE, --verify DIR
    bool random_paths = false;
    unsigned connections = 64, threads = 1, pipeline = 1;
    double rate = 0;
};

std::chrono::nanoseconds duration_of(const char* opt, const std::string& text, bool zero_ok) {
    const auto s = cli::parse_seconds(text);
    if (!s || (!zero_ok && *s <= 0))
        throw UsageError{
            fmt::format("{} {}: give a time above 0, like 5s, 500ms or 1m", opt, text)};
    return std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(*s * 1e9)));
}

constexpr std::size_t kMaxBody = 16u << 20;

// -b @FILE: a regular file's bytes (16 MiB at most), read once; -b TEXT: the text.
std::string body_of(const std::string& arg) {
    if (arg.empty() || arg.front() != '@') {
        if (arg.size() > kMaxBody) throw UsageError{"--body: over 16 MiB"};
        return arg;
    }
    const std::string path = arg.substr(1);
    if (path.empty()) throw UsageError{"--body @: no file name after the '@'"};
    std::string why;
    std::string out = read_regular_file(path, kMaxBody, why);
    if (why == "not a regular file") why += " (give a file, or the text itself without '@')";
    if (!why.empty()) throw UsageError{fmt::format("--body {}: {}", arg, why)};
    return out;
}

load::LoadConfig make_config(const Options& o) {
    load::LoadConfig c;
    c.mode = o.mode == "echo" ? load::Mode::Echo : load::Mode::Http;
    if (o.script)
        throw UsageError{fmt::format(
            "--script {}: wrk's Lua scripts have no counterpart here; the request is shaped "
            "with -m, -H and -b, pipelining with --pipeline, the rate with -R",
            *o.script)};
    if (o.connections == 0) throw UsageError{"--connections 0: give at least 1 connection"};
    if (o.connections > 100000)
        throw UsageError{fmt::format("--connections {}: at most 100000", o.connections)};
    c.connections = o.connections;
    if (o.threads == 0 || o.threads > 256)
        throw UsageError{fmt::format("--threads {}: give 1 to 256", o.threads)};
    if (o.threads > o.connections)
        throw UsageError{
            fmt::format("--threads {}: more threads than --connections {}; each thread needs one",
                        o.threads, o.connections)};
    c.threads = o.threads;
    if (o.pipeline == 0 || o.pipeline > 1024)
        throw UsageError{fmt::format(
            "--pipeline {}: give 1 to 1024 requests in flight per connection", o.pipeline)};
    c.pipeline = o.pipeline;
    if (!(o.rate >= 0) || std::isinf(o.rate))
        throw UsageError{fmt::format(
            "--rate {}: give requests per second above 0 (or 0 for a closed loop)", o.rate)};
    c.rate = o.rate;
    if (c.mode == load::Mode::Echo) {
        const char* http_only = !o.headers.empty()  ? "--header"
                                : o.body            ? "--body"
                                : o.method != "GET" ? "--method"
                                                    : nullptr;
        if (http_only)
            throw UsageError{fmt::format(
                "{}: an option of HTTP requests; --mode echo sends --size bytes per message",
                http_only)};
    }
    try {
        load::check_method(o.method);
        c.method = o.method;
        for (const std::string& h : o.headers) c.headers.push_back(load::parse_header(h));
    } catch (const load::RequestError& e) {
        throw UsageError{e.what()};
    }
    if (o.body) c.body = body_of(*o.body);
    c.duration = duration_of("--duration", o.duration, false);
    c.timeout = duration_of("--timeout", o.timeout, false);
    const auto size = cli::parse_size(o.size);
    if (!size || *size == 0 || *size > (16u << 20))
        throw UsageError{fmt::format("--size {}: give 1 byte to 16m, like 64 or 4k", o.size)};
    c.size = *size;
    if (c.mode == load::Mode::Echo &&
        static_cast<double>(c.size) * c.pipeline * c.connections > static_cast<double>(1u << 30))
        throw UsageError{
            "--size x --pipeline x --connections: over 1 GiB of echo messages in flight"};
    try {
        c.target = load::parse_target(o.target);
    } catch (const load::TargetError& e) {
        if (e.kind() == load::TargetError::usage) throw UsageError{e.what()};
        throw;
    }
    if (c.mode == load::Mode::Echo && c.target.url)
        throw UsageError{fmt::format("{}: --mode echo takes HOST:PORT, not a URL", o.target)};
    if ((o.random_paths || !o.verify.empty()) && o.paths.empty())
        throw UsageError{fmt::format("{}: an option of --paths",
                                     o.random_paths ? "--random-paths" : "--verify")};
    if (!o.paths.empty()) {
        if (c.mode == load::Mode::Echo)
            throw UsageError{"--paths: an option of HTTP requests, not of --mode echo"};
        c.paths = read_paths(o.paths);
        c.random_paths = o.random_paths;
        if (!o.verify.empty()) c.expected = read_expected(o.verify, c.paths);
        for (const std::string& p : c.paths)
            if (static_cast<double>(load::http_request(c, p).size()) * c.pipeline >
                static_cast<double>(1u << 30))
                throw UsageError{"--body x --pipeline: over 1 GiB of requests in one write"};
    }
    if (c.mode == load::Mode::Http &&
        static_cast<double>(load::http_request(c).size()) * c.pipeline >
            static_cast<double>(1u << 30))
        throw UsageError{"--body x --pipeline: over 1 GiB of requests in one write"};
    return c;
}

int run(const Options& o) {
    load::LoadConfig config;
    try {
        config = make_config(o);
    } catch (const UsageError& e) {
        return usage_error("load", e.message);
    } catch (const load::TargetError& e) {
        emit(stderr, "uringkit load: {}\n", e.what());
        return kBadInput;
    }
    if (!o.json.empty())
        if (const int status = check_output(o.json)) return status;
    const bool json_to_stdout = cli::is_standard_output(o.json);
    if (const std::string why = net::uring_unavailable_reason(); !why.empty()) {
        emit(stderr, "uringkit load: io_uring is not usable here: {}\n", why);
        return kNoUring;
    }
    try {
        load::check_reachable(config.target, std::chrono::milliseconds(3000));
    } catch (const load::TargetError& e) {
        emit(stderr, "uringkit load: {}\n", e.what());
        return kBadInput;
    }

    std::FILE* const human = json_to_stdout ? stderr : stdout;
    InterruptScope interrupt;
    const bool live = ::isatty(STDERR_FILENO);
    load::ProgressFn progress;
    if (live)
        progress = [](const load::Progress& p) {
            emit(stderr, "\r\033[K{}", load::progress_line(p));
            flush(stderr);
        };
    load::LoadResult result;
    try {
        result = load::run_load(config, interrupt.flag(), progress);
    } catch (const std::exception& e) {
        if (live) emit(stderr, "\r\033[K");
        emit(stderr, "uringkit load: {}\n", e.what());
        return interrupt.exit_status(kFailure);
    }
    if (live) emit(stderr, "\r\033[K");
    emit(human, "{}", load::format_report(config, result));
    flush(human);
    int status = result.total_errors() > 0 || result.requests == 0 ? kFailure : kOk;
    if (!o.json.empty())
        if (const int failed = save_output(o.json, load::to_json(config, result))) status = failed;
    if (result.interrupted) return interrupt.exit_status(kInterrupted);
    return status;
}

const Register reg{Command{
    "load", "Load an HTTP/1.1 or TCP echo server from io_uring: requests/s, latency, client CPU",
    55, [](CLI::App& app) -> std::function<int()> {
        auto o = std::make_shared<Options>();
        app.add_option("target", o->target,
                       "http://HOST[:PORT][/PATH] (keep-alive GETs of PATH) or HOST:PORT; IPv6 as "
                       "[::1]:8080")
            ->required();
        app.add_option("-c,--connections", o->connections,
                       "Connections, kept open and spread evenly over the threads")
            ->capture_default_str();
        app.add_option("-t,--threads", o->threads,
                       "Threads, each with its own ring (at most --connections)")
            ->capture_default_str();
        app.add_option("-d,--duration", o->duration, "Measured time: 5, 5s, 500ms, 1m")
            ->capture_default_str();
        app.add_option("--pipeline", o->pipeline,
                       "Requests in flight per connection.  Closed loop: written together, the "
                       "next write once "
                       "all are answered (as wrk's pipelining script); open loop: at most this "
                       "many outstanding")
            ->capture_default_str();
        app.add_option("--mode", o->mode,
                       "http: GET requests, responses framed and checked; echo: --size "
                       "bytes per message, the echoed bytes compared with those sent")
            ->check(CLI::IsMember({"http", "echo"}))
            ->capture_default_str();
        app.add_option("--size", o->size, "Echo mode: bytes per message (1 to 16m)")
            ->capture_default_str();
        app.add_option("-R,--rate", o->rate,
                       "Requests per second over all connections, at fixed intervals: an open loop "
                       "(as wrk2) whose latency counts from the moment each request was scheduled, "
                       "not from when it was sent, so a server's stall shows in the percentiles "
                       "(coordinated omission corrected as wrk2 does); 0: closed loop (as wrk)")
            ->capture_default_str();
        app.add_option("--timeout", o->timeout,
                       "A connection with requests outstanding that receives nothing for this long "
                       "counts a timeout (as wrk's timeout count) and is closed and opened again; "
                       "also the connect timeout")
            ->capture_default_str();
        app.add_option("-m,--method", o->method,
                       "HTTP method of every request (GET, HEAD, POST...; a HEAD response ends "
                       "with its head)")
            ->capture_default_str();
        app.add_option("-H,--header", o->headers,
                       "'Name: value' added to every HTTP request (repeat for more; a Host field "
                       "replaces the one made from the URL)")
            ->allow_extra_args(false)
            ->take_all();
        app.add_option("-b,--body", o->body,
                       "Body of every HTTP request, sent with its Content-Length: the text given, "
                       "or @FILE, that file's bytes (a regular file, 16 MiB at most)");
        app.add_option("--paths", o->paths,
                       "Request the targets listed in FILE (one per line, like /index.html; '#' "
                       "starts a comment) instead of the URL's path: in turn, each connection "
                       "starting at its own place in the list");
        app.add_flag("--random-paths", o->random_paths,
                     "With --paths: a pseudo-random target of the list for each request");
        app.add_option("--verify", o->verify,
                       "With --paths: each 200 response's body must equal the file DIR/PATH "
                       "(read at the start, 1 GiB in all at most); one that differs is a bad "
                       "response, naming the path and the first byte that differs");
        app.add_option("-s,--script", o->script,
                       "wrk's Lua script: refused with what to use instead (-m, -H, -b, "
                       "--pipeline, -R); uringkit load runs no scripts");
        app.add_flag("--latency", o->latency,
                     "Accepted for wrk's spelling: the latency percentiles are always printed");
        app.add_option("--json", o->json,
                       "Write every figure as JSON (docs/json.md); - is standard "
                       "output (the table then goes to stderr)");
        name_values(app, {{"target", "URL|HOST:PORT"},
                          {"--json", "FILE"},
                          {"--duration", "TIME"},
                          {"--timeout", "TIME"},
                          {"--header", "HEADER"},
                          {"--body", "BODY|@FILE"},
                          {"--method", "METHOD"},
                          {"--script", "FILE"},
                          {"--paths", "FILE"},
                          {"--verify", "DIR"}});
        group_options(app, "Load", {"-c", "-t", "-d", "--pipeline", "--rate", "--timeout"});
        group_options(app, "Workload",
                      {"--mode", "--method", "--header", "--body", "--paths", "--random-paths",
                       "--verify", "--size", "--script"});
        group_options(app, "Output", {"--latency", "--json"});
        describe(
            app,
            Manual{
                .description =
                    "Reports requests/s, latency (mean, p50, p90, p99, p99.9, max; from a "
                    "log-linear "
                    "histogram, within 1%), the client's own CPU per request (the whole process) "
                    "and "
                    "the system calls it made per request (counted, every one), and errors by "
                    "kind: "
                    "connect, reset, closed (the server closed mid-response or with requests "
                    "outstanding), timeout, bad response (a malformed status line or head, a wrong "
                    "length, a response to no request, echoed bytes that differ).\n\n"
                    "A connection that fails is counted once and opened again.  It connects only "
                    "to "
                    "the target given, and first checks it accepts a connection.  With --rate the "
                    "load is an open loop (as wrk2): latency counts from each request's intended "
                    "send time, so a stalled server cannot hide its queue.\n\n"
                    "wrk's and wrk2's spellings work with their meaning: -c, -t, -d, -H (repeat "
                    "it), --latency (accepted; the percentiles are always printed), --timeout, -R "
                    "for --rate, -m and -b.  A malformed -H field (no ':', an empty name, CR or "
                    "LF) is refused naming it.",
                .examples = {{"uringkit load http://127.0.0.1:8080/",
                              "64 connections on one thread for 5 s, closed loop (as wrk)."},
                             {"uringkit load --rate 20000 http://127.0.0.1:8080/",
                              "An open loop at 20,000 requests/s (as wrk2)."},
                             {"uringkit load -c 64 -d 10s -t 2 --latency -H 'Accept: */*' "
                              "http://127.0.0.1:8080/",
                              "As wrk is typed: the same connections, time, threads and header."},
                             {"uringkit load -R 1000 -m POST -b @req.json http://127.0.0.1:8080/",
                              "1,000 POSTs/s of the file's bytes, with their Content-Length."},
                             {"uringkit load --paths list.txt --verify /srv/www "
                              "http://127.0.0.1:8080/",
                              "The targets in list.txt in turn, each body compared with the "
                              "file serve --root /srv/www sends."},
                             {"uringkit load --mode echo --size 4k 127.0.0.1:7000",
                              "An echo server, every echoed byte compared with the byte sent."}},
                .exits =
                    {{0, "the run completed without errors"},
                     {1,
                      "errors were counted (see the report), no response completed, or an "
                      "output could not be written"},
                     {2,
                      "bad option or value (another URL scheme, port 0, --connections 0, "
                      "--threads above --connections)"},
                     {3, "io_uring is not usable here"},
                     {4,
                      "the target cannot be used (its name does not resolve, nothing accepts "
                      "connections there) or an unusable --json path"},
                     {130,
                      "interrupted by SIGINT (SIGTERM: 143): what was measured is printed, then "
                      "load ends by the signal"}},
                .see_also = "wrk(1), uringkit-serve(1), uringkit-bench-net(1)",
                .doc = "load.md"});
        return [o] { return run(*o); };
    }}};

}  // namespace
}  // namespace uringkit::cli
