// run_load: the threads, the start and end of the measured interval, and
// the sum of what each thread counted.
#include "load/load.hpp"

#include "worker.hpp"

#include "load/request.hpp"

#include <sys/resource.h>
#include <time.h>

#include <fmt/format.h>

#include <exception>
#include <latch>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace uringkit::load {
namespace {

double seconds_of(const timeval& tv) noexcept {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

void sleep_ms(long ms) noexcept {
    const timespec ts{0, ms * 1'000'000};
    ::nanosleep(&ts, nullptr);  // a signal may end it early: the caller loops on its own clock
}

void check(const LoadConfig& c) {
    if (c.connections == 0) throw std::invalid_argument("connections: at least 1");
    if (c.threads == 0 || c.threads > c.connections)
        throw std::invalid_argument("threads: from 1 to the number of connections");
    if (c.pipeline == 0) throw std::invalid_argument("pipeline: at least 1");
    if (c.mode == Mode::Echo && c.size == 0) throw std::invalid_argument("size: at least 1 byte");
    if (!(c.rate >= 0)) throw std::invalid_argument("rate: 0 (closed loop) or above");
    if (c.duration.count() <= 0 || c.timeout.count() <= 0)
        throw std::invalid_argument("duration and timeout: above 0");
    if (!c.paths.empty() && c.mode != Mode::Http)
        throw std::invalid_argument("paths: an option of HTTP mode");
    if (!c.expected.empty() && c.expected.size() != c.paths.size())
        throw std::invalid_argument("expected: one body for each path");
    for (const std::string& p : c.paths)
        if (p.empty() || p.front() != '/' ||
            p.find_first_of(std::string_view(" \t\r\n\0", 5)) != std::string::npos)
            throw std::invalid_argument("paths: each an origin-form target, '/' and no space");
}

}  // namespace

std::string_view error_name(ErrorKind k) noexcept {
    switch (k) {
        case ErrorKind::Connect:
            return "connect";
        case ErrorKind::Reset:
            return "reset";
        case ErrorKind::Closed:
            return "closed";
        case ErrorKind::Timeout:
            return "timeout";
        case ErrorKind::BadResponse:
            return "bad response";
        case ErrorKind::kCount:
            break;
    }
    return "?";
}

std::uint64_t LoadResult::total_errors() const noexcept {
    std::uint64_t n = 0;
    for (std::uint64_t e : errors) n += e;
    return n;
}

unsigned connections_of_thread(unsigned connections, unsigned threads, unsigned t) noexcept {
    return connections / threads + (t < connections % threads ? 1 : 0);
}

LoadResult run_load(const LoadConfig& config, const std::atomic<bool>* stop,
                    const ProgressFn& progress) {
    check(config);
    const unsigned n = config.threads;
    detail::Shared shared;
    shared.config = &config;
    shared.stop = stop;
    if (config.mode == Mode::Http) shared.request = http_request(config);
    for (const std::string& path : config.paths)
        shared.requests.push_back(http_request(config, path));
    std::latch ready(n), measured(n);
    shared.ready = &ready;
    shared.measured = &measured;

    std::vector<detail::LiveCounters> live(n);
    std::vector<std::unique_ptr<detail::Worker>> workers;
    for (unsigned t = 0; t < n; ++t)
        workers.push_back(std::make_unique<detail::Worker>(shared, t, n, live[t]));
    std::mutex error_mutex;
    std::exception_ptr error;
    std::vector<std::thread> threads;
    auto run_worker = [&](unsigned t) {
        try {
            workers[t]->run();
        } catch (...) {
            shared.abort.store(true, std::memory_order_relaxed);
            std::lock_guard lock(error_mutex);
            if (!error) error = std::current_exception();
        }
    };
    for (unsigned t = 0; t < n; ++t) threads.emplace_back(run_worker, t);

    ready.wait();
    // The measured interval starts now, for every thread at once.
    rusage before{}, after{};
    ::getrusage(RUSAGE_SELF, &before);
    shared.start_ns = detail::now_ns();
    shared.end_ns = shared.start_ns + config.duration.count();
    shared.phase.store(detail::Shared::kRun, std::memory_order_release);
    shared.phase.notify_all();

    std::int64_t last_progress = shared.start_ns;
    while (!measured.try_wait()) {
        sleep_ms(50);
        const std::int64_t now = detail::now_ns();
        if (progress && now - last_progress >= 1'000'000'000) {
            last_progress = now;
            Progress p;
            p.elapsed_s = static_cast<double>(now - shared.start_ns) / 1e9;
            p.duration_s = static_cast<double>(config.duration.count()) / 1e9;
            for (const auto& l : live) {
                p.requests += l.requests.get();
                p.errors += l.errors.get();
            }
            progress(p);
        }
    }
    ::getrusage(RUSAGE_SELF, &after);
    shared.phase.store(detail::Shared::kCleanup, std::memory_order_release);
    shared.phase.notify_all();
    for (std::thread& t : threads) t.join();
    if (error) std::rethrow_exception(error);

    LoadResult r;
    r.cpu_user_s = seconds_of(after.ru_utime) - seconds_of(before.ru_utime);
    r.cpu_system_s = seconds_of(after.ru_stime) - seconds_of(before.ru_stime);
    std::int64_t end = shared.start_ns;
    r.per_connection.assign(config.connections, 0);
    for (unsigned t = 0; t < n; ++t) {
        detail::WorkerResult& w = workers[t]->result();
        r.requests += w.requests;
        r.sent += w.sent;
        r.non_2xx += w.non_2xx;
        r.reconnects += w.reconnects;
        r.bytes_in += w.bytes_in;
        r.bytes_out += w.bytes_out;
        r.syscalls += w.syscalls;
        r.enobufs += w.enobufs;
        r.late += w.late;
        for (int k = 0; k < static_cast<int>(ErrorKind::kCount); ++k) r.errors[k] += w.errors[k];
        r.latency.merge(w.latency);
        if (r.first_error.empty()) r.first_error = w.first_error;
        end = std::max(end, w.end_ns);
        r.threads.push_back({static_cast<unsigned>(w.per_connection.size()), w.requests});
        for (std::size_t i = 0; i < w.per_connection.size(); ++i)
            r.per_connection[t + i * n] = w.per_connection[i];
    }
    r.seconds = static_cast<double>(end - shared.start_ns) / 1e9;
    r.interrupted = stop && stop->load();
    return r;
}

}  // namespace uringkit::load
