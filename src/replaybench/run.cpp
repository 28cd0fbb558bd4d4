// The replay matrix: rounds of every mode and depth through every engine,
// the engine order rotated from round to round; each run replays the whole
// trace (`loops` times) with one thread per trace thread.
#include "files.hpp"
#include "thread_replay.hpp"

#include "engines/runner.hpp"
#include "measure/interval.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <thread>

namespace uringkit::replaybench {

const char* mode_name(Mode m) {
    switch (m) {
        case Mode::as_recorded:
            return "as-recorded";
        case Mode::batched:
            return "batched";
        case Mode::timed:
            return "timed";
    }
    return "?";
}

std::optional<Mode> parse_mode(std::string_view text) {
    for (Mode m : {Mode::as_recorded, Mode::batched, Mode::timed})
        if (text == mode_name(m)) return m;
    return std::nullopt;
}

namespace {

// How each engine replays one trace thread.
struct ReplayEngine {
    std::string_view name;
    detail::ThreadResult (*replay)(const detail::ThreadJob&);
    bool sqpoll = false, registered = false;
};
constexpr ReplayEngine kEngines[] = {
    {"pread", detail::replay_thread_sync},
    {"threadpool", detail::replay_thread_threadpool},
    {"libaio", detail::replay_thread_libaio},
    {"uring", detail::replay_thread_uring},
    {"uring-reg", detail::replay_thread_uring, false, true},
    {"uring-sqpoll", detail::replay_thread_uring, true, false},
    {"liburing", detail::replay_thread_liburing},
    // pread for one step at a time, the ring once several may be in flight:
    // bench's auto, decided per run by the depth.
    {"auto", nullptr},
};

// bench's engine that a replay does not run, and why.
constexpr std::string_view kIopoll = "uring-iopoll";
constexpr std::string_view kIopollWhy =
    "not replayed: an IOPOLL ring takes only O_DIRECT reads and writes from a device with poll "
    "queues, and a trace's syncs cannot be polled; `bench --direct --engines uring-iopoll` "
    "measures it";

const ReplayEngine* find_engine(std::string_view name) noexcept {
    for (const ReplayEngine& e : kEngines)
        if (e.name == name) return &e;
    return nullptr;
}

}  // namespace

bool replay_engine_known(std::string_view name) noexcept {
    return find_engine(name) || name == kIopoll;
}

std::vector<Cell> cells(const Config& config) {
    std::vector<Cell> out;
    for (Mode m : config.modes) {
        if (m == Mode::as_recorded) {
            out.push_back({m, 1});
            continue;
        }
        for (unsigned d : config.depths) out.push_back({m, d});
    }
    return out;
}

namespace {

using engines::engine_labels;

// Comparisons a run makes: per cell, each engine against the baseline and
// each twin against its first listing, on two metrics.
std::size_t comparison_count(const Config& c) {
    const std::vector<std::string> l = engine_labels(c.engines);
    return l.size() > 1 ? cells(c).size() * (l.size() - 1) * 2 : 0;
}

Run run_once(const Program& p, const Config& config, const detail::ReplayFiles& files,
             const std::string& label, Cell cell, const std::atomic<bool>* stop,
             OrderLog* order_log, std::string& unavailable) {
    Run run;
    run.engine = label;
    run.mode = cell.mode;
    run.depth = cell.depth;
    const std::string engine(engines::engine_base(label));
    if (engine == kIopoll) {
        unavailable = kIopollWhy;
        return run;
    }
    const ReplayEngine* e = find_engine(engine);
    if (!e->replay) e = find_engine(cell.depth > 1 ? "uring" : "pread");  // auto
    if (config.cache == Cache::cold) files.drop();
    const std::size_t n = p.threads();
    detail::StartGate gate(n);
    std::vector<detail::ThreadResult> results(n);
    if (order_log) {
        order_log->threads.assign(n, {});
        for (std::size_t t = 0; t < n; ++t) order_log->threads[t].assign(p.steps_of(t), {});
    }
    const std::uint64_t max_io = std::min<std::uint64_t>(p.shape().max_length, kMaxIoBytes);
    {
        std::vector<std::jthread> threads;
        threads.reserve(n);
        for (std::size_t t = 0; t < n; ++t) {
            detail::ThreadJob job;
            job.program = &p;
            job.thread = t;
            job.mode = cell.mode;
            job.depth = e->replay == detail::replay_thread_sync ? 1 : cell.depth;
            job.loops = config.loops;
            job.fds = &files.fds();
            job.gate = &gate;
            job.loop_span_ns = p.shape().span_ns + 1000000;
            job.max_io_bytes = max_io;
            job.verify = config.verify;
            job.sqpoll = e->sqpoll;
            job.registered = e->registered;
            job.stop = stop;
            job.order = order_log ? &order_log->threads[t] : nullptr;
            threads.emplace_back([job, &results, t, e] { results[t] = e->replay(job); });
        }
    }
    run.cpu_s = gate.cpu_seconds();
    const measure::KernelThreadCost workers = gate.io_workers();
    run.offload_cpu_s = workers.cpu_s;
    run.offload_ctx = workers.vcsw + workers.ivcsw;
    measure::LatencyHistogram lat;
    std::uint64_t start = UINT64_MAX, end = 0;
    for (const detail::ThreadResult& r : results) {
        if (!r.unavailable.empty() && unavailable.empty()) unavailable = r.unavailable;
        if (!r.error.empty() && run.error.empty()) run.error = r.error;
        run.ios += r.ios;
        run.bytes += r.bytes;
        run.syscalls += r.syscalls;
        run.short_ios += r.short_ios;
        run.verify_failures += r.verify_failures;
        lat.merge(r.latency);
        start = std::min(start, r.start_ns);
        end = std::max(end, r.end_ns);
    }
    run.seconds = end > start ? static_cast<double>(end - start) / 1e9 : 0;
    run.lat_p50_ns = lat.quantile(0.5);
    run.lat_p99_ns = lat.quantile(0.99);
    run.lat_max_ns = static_cast<double>(lat.max());
    return run;
}

}  // namespace

unsigned rounds_of(const Config& config) {
    if (config.rounds) return config.rounds;
    const std::size_t n = comparison_count(config);
    if (n == 0) return 3;
    return std::max(3u, measure::samples_needed(measure::confidence_each(config.confidence, n)));
}

Result run(const Program& p, const Config& config, const std::atomic<bool>* stop,
           const ProgressFn& progress, OrderLog* order_log) {
    for (const std::string& e : config.engines)
        if (!replay_engine_known(e))
            throw ReplayError(
                ReplayError::usage,
                fmt::format("--engines: '{}' does not replay traces (replay engines: {})", e,
                            kReplayEngines));
    const bool wants_timed =
        std::find(config.modes.begin(), config.modes.end(), Mode::timed) != config.modes.end();
    if (wants_timed && !p.shape().timed)
        throw ReplayError(
            ReplayError::usage,
            "--mode timed: the trace has no time for every I/O (record strace with -ttt, "
            "or use a fio version 3 iolog)");
    if (p.shape().steps == 0)
        throw ReplayError(ReplayError::bad_input, "the trace holds no file I/O to replay");
    if (p.threads() > kMaxThreads)
        throw ReplayError(ReplayError::bad_input,
                          fmt::format("the trace has {} threads with I/O; replay runs at most {}",
                                      p.threads(), kMaxThreads));
    Result res;
    res.config = config;
    res.rounds = rounds_of(config);
    detail::ReplayFiles files(p, config);
    res.notes = files.notes();
    if (p.shape().max_length > kMaxIoBytes)
        res.notes.push_back(fmt::format("reads and writes above {} MiB were replayed as {} MiB",
                                        kMaxIoBytes >> 20, kMaxIoBytes >> 20));
    if (config.cache == Cache::warm) files.warm();

    const std::vector<std::string> all = engine_labels(config.engines);
    const std::vector<Cell> cs = cells(config);
    std::vector<std::string> skip;  // labels found unavailable
    const unsigned total = static_cast<unsigned>(res.rounds * cs.size() * all.size());
    unsigned done = 0;
    for (unsigned round = 1; round <= res.rounds; ++round) {
        for (const Cell& cell : cs) {
            // Rotate: each round starts one engine later, every other one reversed.
            std::vector<std::string> order = all;
            std::rotate(order.begin(), order.begin() + ((round - 1) / 2) % order.size(),
                        order.end());
            if (round % 2 == 0) std::reverse(order.begin(), order.end());
            for (const std::string& label : order) {
                if (stop && stop->load()) {
                    res.interrupted = true;
                    return res;
                }
                ++done;
                if (std::find(skip.begin(), skip.end(), label) != skip.end()) continue;
                if (progress) progress(Progress{done, total, label, cell.mode, cell.depth});
                std::string why;
                const bool last =
                    round == res.rounds && &cell == &cs.back() && label == order.back();
                Run r =
                    run_once(p, config, files, label, cell, stop, last ? order_log : nullptr, why);
                if (!why.empty()) {
                    skip.push_back(label);
                    res.unavailable.push_back({label, why});
                    continue;
                }
                r.round = round;
                if (stop && stop->load()) res.interrupted = true;
                res.runs.push_back(std::move(r));
            }
        }
    }
    return res;
}

}  // namespace uringkit::replaybench
