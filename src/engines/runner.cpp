#include "engines/runner.hpp"

#include "engines/engine.hpp"
#include "uringkit/sys/page_cache.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace uringkit::engines {

std::string_view order_name(Order o) noexcept {
    switch (o) {
        case Order::rotate:
            return "rotate";
        case Order::shuffle:
            return "shuffle";
        case Order::fixed:
            return "fixed";
    }
    return "rotate";
}

std::optional<Order> parse_order(std::string_view text) noexcept {
    for (Order o : {Order::rotate, Order::shuffle, Order::fixed})
        if (order_name(o) == text) return o;
    return std::nullopt;
}

std::vector<std::string> engine_labels(const std::vector<std::string>& engines) {
    std::vector<std::string> labels;
    for (std::size_t i = 0; i < engines.size(); ++i) {
        const auto seen = std::count(engines.begin(), engines.begin() + static_cast<long>(i),
                                     engines[i]);
        labels.push_back(seen ? engines[i] + "#" + std::to_string(seen + 1) : engines[i]);
    }
    return labels;
}

std::string_view engine_base(std::string_view label) noexcept {
    return label.substr(0, label.find('#'));
}

std::string_view status_name(Row::Status s) noexcept {
    switch (s) {
        case Row::ok:
            return "ok";
        case Row::unavailable:
            return "unavailable";
        case Row::failed:
            return "failed";
    }
    return "failed";
}

namespace {

// What one run of one engine at one depth measured.
struct Outcome {
    Row::Status status = Row::ok;
    std::string reason, note, ran;
    std::vector<Window> windows;
    double cached_at_start = -1;  // fraction of the used range in the page cache; -1 unknown
    bool interrupted = false;
    std::uint64_t ios = 0, bytes = 0, syscalls = 0, submits = 0;
    double seconds = 0;
    double utime_s = 0, stime_s = 0;
    long nvcsw = 0, nivcsw = 0;
    Row::Latency lat;
};

struct alignas(64) JobState {
    std::unique_ptr<EngineJob> job;
    std::string unavailable, failure, note, ran;
    PhaseResult ramp, result;
    LatencyHistogram latency;
    int fd = -1;
    std::atomic<std::uint64_t> progress{0};
};

double seconds_of(const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

double median(std::vector<double> v) {
    return measure::median_of(std::move(v));
}

double iops_of(const Outcome& o) {
    return static_cast<double>(o.ios) / o.seconds;
}
double cpu_us_per_io_of(const Outcome& o) {
    return 1e6 * (o.utime_s + o.stime_s) / static_cast<double>(o.ios);
}

struct RunContext {
    const BenchSpec& spec;
    const Target& target;
    const std::atomic<bool>* stop;
    const ProgressFn& progress;
    unsigned run = 0, runs = 0;
    std::string_view label;
};

Outcome run_once(RunContext& rc, const EngineInfo& engine, unsigned depth) {
    const BenchSpec& spec = rc.spec;
    const unsigned jobs = spec.numjobs;
    const unsigned batch = spec.batch_for(depth);
    Outcome out;
    auto state = std::make_unique<JobState[]>(jobs);
    struct FdCloser {
        JobState* s;
        unsigned n;
        ~FdCloser() {
            for (unsigned i = 0; i < n; ++i)
                if (s[i].fd >= 0) ::close(s[i].fd);
        }
    } closer{state.get(), jobs};
    try {
        for (unsigned i = 0; i < jobs; ++i) state[i].fd = rc.target.open_job_fd();
    } catch (const std::exception& e) {
        out.status = Row::failed;
        out.reason = e.what();
        return out;
    }

    // Three meeting points: all set up (ramp starts), ramp over (measuring
    // starts), measuring over.  The completion step runs once, while every
    // job waits, so the clock and getrusage snapshots bracket exactly the
    // measured phase of all jobs.
    std::atomic<int> stage{0};  // 0 setup, 1 ramp, 2 measuring, 3 done
    bool skip = false;
    std::uint64_t ramp_deadline = 0, measure_deadline = UINT64_MAX, t0 = 0, t1 = 0;
    rusage r0{}, r1{};
    int step = 0;
    auto on_step = [&]() noexcept {
        switch (step++) {
            case 0:
                for (unsigned i = 0; i < jobs; ++i)
                    if (!state[i].job) skip = true;
                ramp_deadline = now_ns() + static_cast<std::uint64_t>(spec.ramp_s * 1e9);
                stage.store(1, std::memory_order_relaxed);
                break;
            case 1:
                // Cold means cold when measuring starts: the ramp has read
                // the very blocks the measured phase reads first (the offsets
                // restart), so drop them now, outside the timed window.
                if (spec.cache == Cache::cold && !spec.workload.direct) rc.target.drop_cache();
                if (!spec.workload.direct) {
                    sys::PageCacheStat pc;
                    if (sys::page_cache_stat(state[0].fd, 0, spec.workload.size, pc) == 0 &&
                        pc.pages > 0)
                        out.cached_at_start =
                            static_cast<double>(pc.cached) / static_cast<double>(pc.pages);
                }
                for (unsigned i = 0; i < jobs; ++i)
                    state[i].progress.store(0, std::memory_order_relaxed);
                ::getrusage(RUSAGE_SELF, &r0);
                t0 = now_ns();
                if (spec.runtime_s > 0)
                    measure_deadline = t0 + static_cast<std::uint64_t>(spec.runtime_s * 1e9);
                stage.store(2, std::memory_order_relaxed);
                break;
            default:
                t1 = now_ns();
                ::getrusage(RUSAGE_SELF, &r1);
                stage.store(3, std::memory_order_relaxed);
                break;
        }
    };
    std::barrier sync(static_cast<std::ptrdiff_t>(jobs), on_step);
    std::mutex m;
    std::condition_variable cv;
    unsigned finished = 0;

    const Workload& w = spec.workload;
    JobContext base;
    base.workload = &w;
    base.depth = depth;
    base.batch = batch;
    base.jobs = jobs;
    base.buffer_align = std::max<std::uint32_t>(rc.target.direct_align(), 4096);

    auto body = [&](unsigned i) {
        JobState& st = state[i];
        JobContext ctx = base;
        ctx.fd = st.fd;
        ctx.job = i;
        try {
            st.job = engine.start(ctx);
        } catch (const EngineUnavailable& e) {
            st.unavailable = e.what();
        } catch (const std::exception& e) {
            st.failure = e.what();
        }
        sync.arrive_and_wait();
        if (!skip && spec.ramp_s > 0) {
            Phase ph;
            ph.deadline_ns = ramp_deadline;
            ph.stop = rc.stop;
            ph.progress = &st.progress;
            st.ramp = st.job->run(ph);
        }
        sync.arrive_and_wait();
        if (!skip && st.ramp.error == 0) {
            Phase ph;
            ph.deadline_ns = measure_deadline;
            ph.stop = rc.stop;
            ph.progress = &st.progress;
            ph.latency = &st.latency;
            ph.restart_offsets = true;
            if (spec.ios) ph.max_ios = spec.ios / jobs + (i < spec.ios % jobs ? 1 : 0);
            st.result = st.job->run(ph);
        }
        sync.arrive_and_wait();
        if (st.job) {
            st.note = st.job->note();
            st.ran = std::string(st.job->ran());
        }
        st.job.reset();  // the ring is torn down on the thread that owns it
        std::lock_guard lk(m);
        ++finished;
        cv.notify_one();
    };

    std::vector<std::thread> threads;
    threads.reserve(jobs);
    for (unsigned i = 0; i < jobs; ++i) threads.emplace_back(body, i);

    // Sampled here, off the jobs' paths: the completed count every window
    // (for the steady-state test) and the progress line every fifth window.
    {
        const double run_s = spec.runtime_s > 0 ? spec.ramp_s + spec.runtime_s : 0;
        std::uint64_t last_ios = 0, last_ns = now_ns();
        const std::uint64_t run_start = last_ns;
        std::uint64_t window_ios = 0, window_ns = 0;
        bool measuring = false;
        unsigned tick = 0;
        const auto window = std::chrono::microseconds(static_cast<long>(measure::kSteadyWindowS * 1e6));
        std::unique_lock lk(m);
        while (!cv.wait_for(lk, window, [&] { return finished == jobs; })) {
            std::uint64_t ios = 0;
            for (unsigned i = 0; i < jobs; ++i)
                ios += state[i].progress.load(std::memory_order_relaxed);
            const std::uint64_t now = now_ns();
            const int stg = stage.load(std::memory_order_relaxed);
            if (stg == 2) {
                // The first sample in the measured phase opens the first
                // window; a window is counted only while the phase lasts.
                if (measuring)
                    out.windows.push_back({static_cast<double>(now - window_ns) / 1e9,
                                           ios - window_ios});
                measuring = true;
                window_ios = ios;
                window_ns = now;
            }
            if (!rc.progress || ++tick % 5) continue;
            if (ios < last_ios) last_ios = 0;  // the counters restart when measuring starts
            Progress p{};
            p.engine = rc.label;
            p.iodepth = depth;
            p.run = rc.run;
            p.runs = rc.runs;
            p.ramp = stg < 2;
            p.elapsed_s = static_cast<double>(now - run_start) / 1e9;
            p.run_s = run_s;
            p.iops =
                static_cast<double>(ios - last_ios) / (static_cast<double>(now - last_ns) / 1e9);
            p.eta_s =
                run_s > 0 ? std::max(0.0, run_s - p.elapsed_s) + run_s * (rc.runs - rc.run) : -1;
            last_ios = ios;
            last_ns = now;
            lk.unlock();
            rc.progress(p);
            lk.lock();
        }
    }
    for (std::thread& t : threads) t.join();

    LatencyHistogram merged;
    for (unsigned i = 0; i < jobs; ++i) {
        JobState& st = state[i];
        if (!st.unavailable.empty() && out.status == Row::ok) {
            out.status = Row::unavailable;
            out.reason = st.unavailable;
        } else if (!st.failure.empty() && out.status == Row::ok) {
            out.status = Row::failed;
            out.reason = st.failure;
        }
        for (const PhaseResult* r : {&st.ramp, &st.result})
            if (r->error && out.status == Row::ok) {
                out.status = Row::failed;
                out.reason = describe_error(*r, w.bs);
            }
        if (out.note.empty()) out.note = st.note;
        if (out.ran.empty()) out.ran = st.ran;
        out.ios += st.result.ios;
        out.bytes += st.result.bytes;
        out.syscalls += st.result.syscalls;
        out.submits += st.result.submits;
        merged.merge(st.latency);
    }
    if (skip || out.status != Row::ok) return out;
    out.interrupted = rc.stop && rc.stop->load(std::memory_order_relaxed);
    out.seconds = static_cast<double>(t1 - t0) / 1e9;
    out.utime_s = seconds_of(r1.ru_utime) - seconds_of(r0.ru_utime);
    out.stime_s = seconds_of(r1.ru_stime) - seconds_of(r0.ru_stime);
    out.nvcsw = r1.ru_nvcsw - r0.ru_nvcsw;
    out.nivcsw = r1.ru_nivcsw - r0.ru_nivcsw;
    out.lat = {merged.mean(),         merged.quantile(0.50),  merged.quantile(0.90),
               merged.quantile(0.99), merged.quantile(0.999), static_cast<double>(merged.max())};
    return out;
}

Row aggregate(const std::string& label, unsigned depth, unsigned batch,
              const std::vector<Outcome>& runs, double confidence) {
    Row row;
    row.engine = label;
    row.iodepth = depth;
    row.batch = batch;
    std::vector<const Outcome*> good;
    for (const Outcome& o : runs) {
        if (o.status != Row::ok) {
            if (row.status == Row::ok ||
                (row.status == Row::unavailable && o.status == Row::failed)) {
                row.status = o.status;
                row.reason = o.reason;
            }
            continue;
        }
        if (o.ios == 0) continue;  // interrupted before any I/O was measured
        good.push_back(&o);
        if (row.note.empty()) row.note = o.note;
        if (row.ran.empty()) row.ran = o.ran;
        row.interrupted |= o.interrupted;
    }
    if (row.status != Row::ok) return row;
    if (good.empty()) {
        row.status = Row::failed;
        row.reason = "interrupted before anything was measured";
        return row;
    }
    row.runs = static_cast<unsigned>(good.size());
    auto values = [&](auto&& f) {
        std::vector<double> v;
        for (const Outcome* o : good) v.push_back(f(*o));
        return v;
    };
    auto med = [&](auto&& f) { return median(values(f)); };
    auto per_io = [](double x, const Outcome& o) { return x / static_cast<double>(o.ios); };
    const Estimate iops = measure::median_interval(values(iops_of), confidence);
    row.iops = iops.median;
    row.iops_low = iops.low;
    row.iops_high = iops.high;
    row.interval_covered = iops.covered;
    const std::vector<double> all_iops = values(iops_of);
    row.iops_min = *std::min_element(all_iops.begin(), all_iops.end());
    row.iops_max = *std::max_element(all_iops.begin(), all_iops.end());
    const Estimate cpu = measure::median_interval(values(cpu_us_per_io_of), confidence);
    row.cpu_us_per_io = cpu.median;
    row.cpu_us_per_io_low = cpu.low;
    row.cpu_us_per_io_high = cpu.high;
    row.ios = static_cast<std::uint64_t>(
        med([](const Outcome& o) { return static_cast<double>(o.ios); }));
    row.syscalls = static_cast<std::uint64_t>(
        med([](const Outcome& o) { return static_cast<double>(o.syscalls); }));
    row.submits = static_cast<std::uint64_t>(
        med([](const Outcome& o) { return static_cast<double>(o.submits); }));
    row.seconds = med([](const Outcome& o) { return o.seconds; });
    row.bw_bytes = med([](const Outcome& o) { return static_cast<double>(o.bytes) / o.seconds; });
    row.lat_ns.mean = med([](const Outcome& o) { return o.lat.mean; });
    row.lat_ns.p50 = med([](const Outcome& o) { return o.lat.p50; });
    row.lat_ns.p90 = med([](const Outcome& o) { return o.lat.p90; });
    row.lat_ns.p99 = med([](const Outcome& o) { return o.lat.p99; });
    row.lat_ns.p99_9 = med([](const Outcome& o) { return o.lat.p99_9; });
    row.lat_ns.max = med([](const Outcome& o) { return o.lat.max; });
    row.cpu_usr = med([](const Outcome& o) { return 100 * o.utime_s / o.seconds; });
    row.cpu_sys = med([](const Outcome& o) { return 100 * o.stime_s / o.seconds; });
    row.ctx_vol_per_kio =
        med([&](const Outcome& o) { return per_io(1e3 * static_cast<double>(o.nvcsw), o); });
    row.ctx_invol_per_kio =
        med([&](const Outcome& o) { return per_io(1e3 * static_cast<double>(o.nivcsw), o); });
    row.ctx_per_kio = med(
        [&](const Outcome& o) { return per_io(1e3 * static_cast<double>(o.nvcsw + o.nivcsw), o); });
    row.syscalls_per_io =
        med([&](const Outcome& o) { return per_io(static_cast<double>(o.syscalls), o); });
    row.ios_per_submit = med([](const Outcome& o) {
        return o.submits ? static_cast<double>(o.ios) / static_cast<double>(o.submits) : 0.0;
    });
    return row;
}

RunRecord record(const Outcome& o, const std::string& label, unsigned depth, unsigned round,
           unsigned position) {
    RunRecord r;
    r.engine = label;
    r.iodepth = depth;
    r.round = round;
    r.position = position;
    r.status = o.status;
    r.reason = o.reason;
    r.ran = o.ran;
    r.interrupted = o.interrupted;
    r.ios = o.ios;
    r.seconds = o.seconds;
    if (o.status == Row::ok && o.ios > 0 && o.seconds > 0) {
        r.iops = iops_of(o);
        r.bw_bytes = static_cast<double>(o.bytes) / o.seconds;
        r.cpu_us_per_io = cpu_us_per_io_of(o);
        r.lat_p50_ns = o.lat.p50;
        r.lat_p99_ns = o.lat.p99;
        r.steady = measure::assess_steadiness(o.windows);
    }
    r.syscalls = o.syscalls;
    r.submits = o.submits;
    r.cached_at_start = o.cached_at_start;
    return r;
}

// Each round's order of the engines, as indices into the list.
std::vector<std::vector<std::size_t>> round_orders(const BenchSpec& spec) {
    const std::size_t ne = spec.engines.size();
    std::vector<std::vector<std::size_t>> orders;
    Xoshiro rng(spec.order_seed);
    for (unsigned r = 0; r < spec.rounds; ++r) {
        std::vector<std::size_t> order(ne);
        // rotate: rounds come in pairs, the second the first reversed, the
        // pair after that rotated by one.  Plain rotation ran A#2 straight
        // after A in all rounds but one, and that position effect made the
        // A/A check call an engine faster than itself in about one run in
        // three; reversing every other round puts each engine before and
        // after each other engine equally often, so such effects cancel.
        for (std::size_t i = 0; i < ne; ++i)
            order[i] = spec.order == Order::rotate ? (i + r / 2) % ne : i;
        if (spec.order == Order::rotate && r % 2 == 1) std::reverse(order.begin(), order.end());
        if (spec.order == Order::shuffle)
            for (std::size_t i = ne; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
        orders.push_back(std::move(order));
    }
    return orders;
}

}  // namespace

Results run_bench(const BenchSpec& spec, const Target& target, const std::atomic<bool>* stop,
                  const ProgressFn& progress) {
    Results res;
    res.confidence = spec.confidence;
    const std::uint64_t start = now_ns();
    if (spec.cache == Cache::warm && !spec.workload.direct) target.warm_cache();

    const std::vector<std::string> labels = engine_labels(spec.engines);
    const std::size_t ne = spec.engines.size(), nd = spec.depths.size();
    std::vector<std::vector<Outcome>> outcomes(ne * nd);
    RunContext rc{spec, target, stop, progress, 0, 0, {}};
    rc.runs = static_cast<unsigned>(spec.rounds * ne * nd);
    auto stopped = [&] { return stop && stop->load(std::memory_order_relaxed); };
    const auto orders = round_orders(spec);
    for (unsigned round = 0; round < spec.rounds && !stopped(); ++round) {
        std::vector<std::string> order;
        for (std::size_t e : orders[round]) order.push_back(labels[e]);
        res.orders.push_back(std::move(order));
        for (std::size_t d = 0; d < nd && !stopped(); ++d)
            for (std::size_t pos = 0; pos < ne && !stopped(); ++pos) {
                const std::size_t e = orders[round][pos];
                ++rc.run;
                auto& mine = outcomes[d * ne + e];
                // An engine that cannot run here will not run on the next round either.
                if (!mine.empty() && mine.front().status == Row::unavailable) continue;
                const EngineInfo* info = find_engine(spec.engines[e]);
                if (!info) {
                    Outcome o;
                    o.status = Row::unavailable;
                    o.reason = "unknown engine";
                    mine.push_back(std::move(o));
                    continue;
                }
                if (spec.cache == Cache::cold) target.drop_cache();
                rc.label = labels[e];
                mine.push_back(run_once(rc, *info, spec.depths[d]));
                res.runs.push_back(record(mine.back(), labels[e], spec.depths[d], round + 1,
                                          static_cast<unsigned>(pos + 1)));
            }
    }
    res.interrupted = stopped();
    for (std::size_t d = 0; d < nd; ++d)
        for (std::size_t e = 0; e < ne; ++e) {
            const auto& mine = outcomes[d * ne + e];
            if (mine.empty()) continue;  // never started (interrupted)
            res.rows.push_back(aggregate(labels[e], spec.depths[d],
                                         spec.batch_for(spec.depths[d]), mine, spec.confidence));
        }
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    res.peak_rss_kib = ru.ru_maxrss;
    res.wall_s = static_cast<double>(now_ns() - start) / 1e9;
    return res;
}

}  // namespace uringkit::engines
