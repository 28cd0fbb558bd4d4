// `uringkit bench net` as a library: serve's socket engines side by side on
// loopback, each loaded by `uringkit load`'s io_uring client, with a verdict
// that says "the same" unless the run's own noise allows more.
//
// Each run starts a fresh server in a child process (one engine thread,
// pinned to one CPU) and loads it from this process (one client thread,
// pinned to another), so the two never share a core and the server's CPU
// is measured on its own: its getrusage() and its system-call counter are
// read just before and just after the load, and divided by the requests it
// served in between.  Rounds interleave every engine on every workload with
// the engine order rotated, so a drifting machine costs every engine alike.
//
// Engines are ranked by server CPU per request, the figure a loopback run
// measures fairly: requests/s is reported too, but on loopback the client
// pays for much of the TCP work of both sides, and when the client thread
// itself is saturated the requests/s say more about the client than the
// server (the row says "client-bound").
#pragma once

#include "load/load.hpp"
#include "measure/paired.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace uringkit::netbench {

// One shape of traffic: echo of `size` bytes (ping-pong, `pipeline` in
// flight), HTTP/1.1 keep-alive GETs of serve's 128-byte body, pipelined
// `pipeline` deep, or (file_size set) GETs of one file of that many bytes
// that `serve --root` serves from a directory the run makes in /var/tmp
// (so not tmpfs), over `connections` connections.
struct Workload {
    load::Mode mode = load::Mode::Echo;
    unsigned connections = 64;
    std::size_t size = 64;  // echo only
    unsigned pipeline = 1;
    std::size_t file_size = 0;     // HTTP: 0 the fixed body, else a file of this size
    std::string name() const;      // "echo:64:64" (conns:size), "http:64:16" (conns:pipeline),
                                   // "file:64:4096" (conns:file size): parse_workload's text
    std::string describe() const;  // "echo 64 B, 64 connections", "HTTP pipelined 16, 64
                                   // connections", "file 4 KiB, 64 connections"
};

// "echo:CONNS:SIZE", "http:CONNS:PIPELINE" or "file:CONNS:SIZE" (SIZE as 64,
// 4k; a file up to 64m); nullopt with `why` set when the text is not one.
std::optional<Workload> parse_workload(std::string_view text, std::string& why);
// echo:1:64, echo:64:64, echo:512:64, echo:64:4096, echo:16:65536,
// http:64:1, http:64:16: the shapes where io_uring is known to tie (one
// connection) and to gain (many connections, small messages, pipelining),
// and large messages, which fill many provided buffers each.
std::vector<Workload> default_workloads();

// The engines bench net can run: serve's three, uring-bundle (the uring
// engine with recv bundles, Linux 6.10), uring-inc (with an incremental
// ring of 64 KiB buffers, Linux 6.12: serve --recv-incremental),
// uring-calls, uring-splice and epoll-read (serve's --file-io and
// --body-path variants), and nginx, the peer, where it is installed (HTTP
// and file workloads only).
inline constexpr std::string_view kEngineNames =
    "uring, uring-coro, uring-bundle, uring-inc, uring-calls, uring-splice, epoll, epoll-read, "
    "nginx";
bool known_engine(std::string_view name) noexcept;

struct Config {
    // kEngineNames; one listed twice: A/A.  uring-bundle and uring-inc are
    // listed as unsupported (with the reason) on kernels before 6.10, 6.12.
    std::vector<std::string> engines{"uring", "uring-coro", "uring-bundle", "uring-inc", "epoll"};
    std::vector<Workload> workloads = default_workloads();
    unsigned rounds = 0;  // 0: as many as the verdict needs at `confidence`
    std::chrono::nanoseconds duration = std::chrono::milliseconds(500);  // per run
    double confidence = 0.95;  // family-wise, over every comparison of the run
    bool pin = true;           // server and client each on its own CPU (when there are two)
};

// The rounds `config` gets: its own, or the fewest for a verdict.
unsigned rounds_of(const Config& config);

// One engine on one workload in one round.
struct Run {
    std::string engine;     // the label: "epoll", or "epoll#2" for a second listing
    unsigned workload = 0;  // index into Config::workloads
    unsigned round = 0;
    double seconds = 0;                     // the client's measured interval
    std::uint64_t requests = 0;             // responses the client counted in it
    std::uint64_t server_requests = 0;      // requests the server parsed while loaded
    double server_cpu_s = 0;                // the server process's user + system CPU meanwhile
    double server_offload_cpu_s = 0;        // of it, its io-wq workers' (iou-wrk-*)
    std::uint64_t server_offload_ctx = 0;   // their context switches
    std::uint64_t server_syscalls = 0;      // its engine's system calls meanwhile
    bool syscalls_counted = true;           // false for nginx: nothing counts them
    double client_cpu_s = 0;                // this process's user + system CPU in the interval
    std::uint64_t errors = 0;               // connect, reset, timeout, bad response
    double lat_p50_ns = 0, lat_p99_ns = 0;  // the client's, from send to response
    std::string error;                      // the run failed: why (its figures are not used)

    double requests_per_s() const noexcept {
        return seconds > 0 ? static_cast<double>(requests) / seconds : 0;
    }
    double server_cpu_us_per_request() const noexcept;
    double server_syscalls_per_request() const noexcept;
    double client_cpu_share() const noexcept { return seconds > 0 ? client_cpu_s / seconds : 0; }
    bool client_bound() const noexcept { return client_cpu_share() >= 0.9; }
    bool usable() const noexcept {
        return error.empty() && errors == 0 && server_requests > 0 && requests > 0;
    }
};

// An engine that cannot run here, and why ("needs Linux 6.0 for multishot recv").
struct Unavailable {
    std::string engine, why;
};

struct Result {
    Config config;
    unsigned rounds = 0;
    std::vector<Run> runs;
    std::vector<Unavailable> unavailable;
    std::string pinning;  // "server on CPU 0, client on CPU 1", or why not pinned
    bool interrupted = false;
};

// What the progress line shows.
struct Progress {
    unsigned done = 0, total = 0;
    std::string engine, workload;
};
using ProgressFn = std::function<void(const Progress&)>;

// Runs the matrix.  Engines unknown to serve throw std::invalid_argument;
// an engine this kernel cannot run is listed in `unavailable` and skipped.
Result run(const Config& config, const std::atomic<bool>* stop = nullptr,
           const ProgressFn& progress = {});

// The verdict's comparisons, per workload: every engine against epoll (or
// the first engine listed when epoll is not), and an engine listed twice
// against its first listing (A/A), on server CPU per request
// (measure::Metric::cpu_us_per_io) and on requests/s (Metric::iops), from
// the ratios of runs in the same round.  Comparison::iodepth holds the
// workload's index.
std::vector<measure::Comparison> compare(const Result& result);

// The report: per workload a table of medians, then the verdict in words.
std::string format_report(const Result& result,
                          const std::vector<measure::Comparison>& comparisons);
std::string to_json(const Result& result, const std::vector<measure::Comparison>& comparisons);

}  // namespace uringkit::netbench
