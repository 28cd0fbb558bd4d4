// A row's medians over the rounds, and the record of each run.
#include "engines/run_once.hpp"

#include <algorithm>
#include <cmath>

namespace uringkit::engines::detail {

Attribution attribution_of(const Outcome& o) {
    Attribution a;
    if (o.ios == 0) return a;
    const double ios = static_cast<double>(o.ios);
    if (o.offloads >= 0) a.offload_per_io = static_cast<double>(o.offloads) / ios;
    a.offload_cpu_us_per_io = 1e6 * o.workers.cpu_s / ios;
    a.offload_ctx_per_kio = 1e3 * static_cast<double>(o.workers.vcsw + o.workers.ivcsw) / ios;
    a.io_workers = o.workers.threads;
    a.io_workers_started = o.workers.started;
    a.io_workers_exited = o.workers.exited;
    a.sqpoll_cpu_us_per_io = 1e6 * o.sq_poll.cpu_s / ios;
    a.sq_wakeups_per_kio = 1e3 * static_cast<double>(o.sq_wakeups) / ios;
    a.cq_overflows = o.cq_overflows;
    a.enter_retries = o.enter_retries;
    return a;
}

namespace {

// The medians of the runs' attributions, field by field (the counts of
// workers and events as whole numbers).
Attribution median_attribution(const std::vector<const Outcome*>& good) {
    std::vector<Attribution> each;
    for (const Outcome* o : good) each.push_back(attribution_of(*o));
    auto med = [&](auto field) {
        std::vector<double> v;
        for (const Attribution& a : each) v.push_back(static_cast<double>(a.*field));
        return measure::median_of(v);
    };
    Attribution m;
    m.offload_per_io = med(&Attribution::offload_per_io);
    m.offload_cpu_us_per_io = med(&Attribution::offload_cpu_us_per_io);
    m.offload_ctx_per_kio = med(&Attribution::offload_ctx_per_kio);
    m.io_workers = static_cast<unsigned>(std::lround(med(&Attribution::io_workers)));
    m.io_workers_started =
        static_cast<unsigned>(std::lround(med(&Attribution::io_workers_started)));
    m.io_workers_exited = static_cast<unsigned>(std::lround(med(&Attribution::io_workers_exited)));
    m.sqpoll_cpu_us_per_io = med(&Attribution::sqpoll_cpu_us_per_io);
    m.sq_wakeups_per_kio = med(&Attribution::sq_wakeups_per_kio);
    m.cq_overflows = static_cast<std::uint64_t>(std::llround(med(&Attribution::cq_overflows)));
    m.enter_retries = static_cast<std::uint64_t>(std::llround(med(&Attribution::enter_retries)));
    return m;
}

}  // namespace

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
    auto med = [&](auto&& f) { return measure::median_of(values(f)); };
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
    row.writes = static_cast<std::uint64_t>(
        med([](const Outcome& o) { return static_cast<double>(o.writes); }));
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
    row.attribution = median_attribution(good);
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
    if (o.status == Row::ok) r.attribution = attribution_of(o);
    return r;
}

}  // namespace uringkit::engines::detail
