// `uringkit load` as a library: an HTTP/1.1 keep-alive (or TCP echo) load
// generator on io_uring.  One ring per thread; each thread owns its share of
// the connections, receives with one multishot recv per connection into a
// provided buffer ring, and hands all the sends a batch of completions
// produced to the kernel in the io_uring_enter that waits for the next one.
//
// Closed loop (the default, as wrk): each connection sends `pipeline`
// requests in one write and the next write once all their responses are in.
// Open loop (`rate` > 0, as wrk2): request i of the run is due at
// start + i / rate, the connections take them in turn, and a request's
// latency is measured from the moment it was due, not from when it could be
// sent, so a server that stalls shows the stall in the percentiles instead of
// quietly slowing the client down (coordinated omission).
#pragma once

#include "load/target.hpp"
#include "measure/histogram.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace uringkit::load {

enum class Mode : std::uint8_t { Http, Echo };

struct LoadConfig {
    Target target;
    Mode mode = Mode::Http;
    unsigned connections = 64;
    unsigned threads = 1;
    unsigned pipeline = 1;  // requests in flight per connection
    std::size_t size = 64;  // echo: bytes per message
    // http: the request (load/request.hpp builds it; check the method and
    // the fields with check_method and parse_header).  A response to HEAD
    // ends with its head.
    std::string method = "GET";
    std::vector<std::pair<std::string, std::string>> headers;  // after Host, in order
    std::optional<std::string> body;                           // sent with its Content-Length
    // http: request these targets ("/a.html", origin-form) instead of the
    // target's path (--paths): in turn, each connection starting at its own
    // place in the list, or with random_paths a pseudo-random one per request.
    std::vector<std::string> paths;
    bool random_paths = false;
    // --verify: the bytes the 200 response to paths[i] must carry, in
    // expected[i] (empty vector: bodies not compared).
    std::vector<std::string> expected;
    double rate = 0;  // requests/s over all connections; 0: closed loop
    std::chrono::nanoseconds duration = std::chrono::seconds(5);
    // A connection with requests outstanding that receives nothing for this
    // long is counted as a timeout, closed and opened again.
    std::chrono::nanoseconds timeout = std::chrono::seconds(2);
};

// Errors by kind; each is counted once per connection it ended (the
// connection is then closed and opened again, as wrk does).
enum class ErrorKind : std::uint8_t { Connect, Reset, Closed, Timeout, BadResponse, kCount };
std::string_view error_name(
    ErrorKind k) noexcept;  // "connect", "reset", "closed", "timeout", "bad response"

struct ThreadResult {
    unsigned connections = 0;
    std::uint64_t requests = 0;  // responses completed (any status)
};

struct LoadResult {
    double seconds = 0;          // the measured interval
    std::uint64_t requests = 0;  // responses completed in it
    std::uint64_t sent = 0;      // requests written in it
    std::uint64_t non_2xx = 0;   // HTTP responses with another status (counted in requests)
    std::uint64_t errors[static_cast<int>(ErrorKind::kCount)] = {};
    std::uint64_t reconnects = 0;  // connections opened again after an error or a close
    std::uint64_t bytes_in = 0, bytes_out = 0;
    std::uint64_t syscalls = 0;  // every system call the threads made in the interval
    std::uint64_t enobufs = 0;   // multishot recv found the buffer ring empty (re-armed)
    double cpu_user_s = 0, cpu_system_s = 0;  // the whole process, over the interval
    std::uint64_t late = 0;                   // open loop: requests still unsent when the run ended
    measure::LatencyHistogram latency;        // ns, per response
    std::vector<ThreadResult> threads;
    std::vector<std::uint64_t> per_connection;  // responses per connection, connection order
    std::string first_error;                    // the first error's description, for the report
    bool interrupted = false;
    std::uint64_t total_errors() const noexcept;
};

// What the progress line shows, sampled while the run goes on.
struct Progress {
    double elapsed_s = 0, duration_s = 0;
    std::uint64_t requests = 0, errors = 0;
};
using ProgressFn = std::function<void(const Progress&)>;

// Runs the load.  Returns once the duration has passed (or `stop` was set:
// the result is then marked interrupted) and every connection is closed,
// with every operation's final completion reaped.  Throws std::system_error
// when io_uring or a thread cannot be set up.  `progress` is called about
// once a second from the calling thread.
LoadResult run_load(const LoadConfig& config, const std::atomic<bool>* stop = nullptr,
                    const ProgressFn& progress = {});

// How the connections are spread: thread t gets the connections i with
// i % threads == t, so the counts differ by at most one.
unsigned connections_of_thread(unsigned connections, unsigned threads, unsigned t) noexcept;

// The report: an aligned table, JSON (schema: docs/load.md), the live line.
std::string format_report(const LoadConfig& config, const LoadResult& r);
std::string to_json(const LoadConfig& config, const LoadResult& r);
std::string progress_line(const Progress& p);

}  // namespace uringkit::load
