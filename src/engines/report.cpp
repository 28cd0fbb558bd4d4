#include "engines/report.hpp"

#include "cli/size.hpp"
#include "engines/engine.hpp"
#include "engines/figures.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>

namespace uringkit::engines {
namespace {

using detail::count;

// " (at most 0.4% of the file was cached when measuring started)".
std::string cached_note(const Results& res) {
    double most = -1;
    for (const RunRecord& r : res.runs) most = std::max(most, r.cached_at_start);
    return most < 0 ? std::string()
                    : fmt::format(
                          " (at most {:.1f}% of the file was cached when measuring "
                          "started)",
                          most * 100);
}

}  // namespace

std::vector<std::string> saved_job_differences(const Report& rep) {
    std::vector<std::string> out;
    if (!rep.saved) return out;
    const SavedRun& s = *rep.saved;
    const Workload& w = rep.spec.workload;
    const auto differ = [&](const char* what, const std::string& here, const auto& there,
                            auto show) {
        if (!there)
            out.push_back(fmt::format("{} {} here, not recorded in {}", what, here, s.name));
        else if (show(*there) != here)
            out.push_back(fmt::format("{} {} here, {} in {}", what, here, show(*there), s.name));
    };
    const auto same = [](const std::string& v) { return v; };
    const auto bytes = [](std::uint64_t v) { return cli::format_bytes(v); };
    const auto yes_no = [](bool v) { return std::string(v ? "on" : "off"); };
    differ("--rw", std::string(rw_name(w.rw)), s.rw, same);
    differ("--bs", cli::format_bytes(w.bs), s.bs, bytes);
    differ("--size", cli::format_bytes(rep.size), s.size, bytes);
    differ("--direct", yes_no(w.direct), s.direct, yes_no);
    // The saved "cache" is "direct" under O_DIRECT: --direct already says so.
    if (!w.direct && !(s.direct && *s.direct))
        differ("--cache", std::string(rep.spec.cache == Cache::warm ? "warm" : "cold"), s.cache,
               same);
    differ("file system", rep.host.filesystem, s.filesystem, same);
    return out;
}

std::vector<Comparison> against_saved(const Report& rep) {
    if (!rep.saved || !saved_job_differences(rep).empty()) return {};
    return compare_saved(rep.results, *rep.saved);
}

std::vector<Comparison> comparisons(const Report& rep) {
    std::vector<Comparison> all = compare_engines(rep.results);
    const std::vector<Comparison> saved = against_saved(rep);
    all.insert(all.end(), saved.begin(), saved.end());
    return all;
}

namespace {

// What --compare could not judge, for notes(): the whole saved run when it
// measured another job or holds no runs, else the rows it has no runs of.
std::vector<std::string> saved_notes(const Report& rep) {
    if (!rep.saved) return {};
    const std::string& name = rep.saved->name;
    if (const auto d = saved_job_differences(rep); !d.empty())
        return {fmt::format("--compare {}: nothing compared: it measured another job ({})", name,
                            fmt::join(d, "; "))};
    if (rep.saved->runs.empty())
        return {fmt::format("--compare {}: nothing compared: it holds no runs", name)};
    const std::vector<Comparison> cs = compare_saved(rep.results, *rep.saved);
    std::vector<std::string> missing;
    for (const Row& r : rep.results.rows) {
        if (r.status != Row::ok) continue;
        const bool compared = std::any_of(cs.begin(), cs.end(), [&](const Comparison& c) {
            return c.a == r.engine && c.iodepth == r.iodepth;
        });
        if (!compared) missing.push_back(fmt::format("{} at depth {}", r.engine, r.iodepth));
    }
    if (cs.empty())
        return {
            fmt::format("--compare {}: nothing compared: it has no runs of an engine at a depth "
                        "that ran here ({})",
                        name,
                        missing.empty() ? std::string("none ran")
                                        : fmt::format("{}", fmt::join(missing, ", ")))};
    if (!missing.empty())
        return {fmt::format("--compare {}: not in it, so not compared: {}", name,
                            fmt::join(missing, ", "))};
    return {};
}

}  // namespace

std::optional<std::string> busy_machine(const Report& rep) {
    // The load average when the run started, against the CPUs.
    const double load = std::atof(rep.host.loadavg.c_str());
    if (rep.host.cores > 0 && load > rep.host.cores)
        return fmt::format("load average {:.2f} on {} CPUs", load, rep.host.cores);
    // A single-threaded engine that got far less than a core was sharing the
    // CPU with other work: IOPS then reward engines with more threads.
    double least = 1e9;
    for (const Row& r : rep.results.rows)
        if (r.status == Row::ok && (r.engine == "pread" || r.engine == "uring") &&
            rep.spec.numjobs == 1 && !rep.spec.workload.direct && rep.spec.cache == Cache::warm)
            least = std::min(least, r.cpu_usr + r.cpu_sys);
    if (least < 70)
        return fmt::format("a single-threaded engine got only {:.0f}% of a core", least);
    return std::nullopt;
}

std::vector<std::string> verdict(const Report& rep) {
    VerdictContext ctx;
    ctx.rw = rep.spec.workload.rw;
    ctx.busy = busy_machine(rep);
    if (rep.saved) ctx.saved_name = rep.saved->name;
    ctx.filesystem = rep.host.filesystem;
    ctx.ring_entries = rep.spec.ring_entries;
    ctx.sq_thread_idle_ms = rep.spec.sq_thread_idle_ms;
    const std::vector<Comparison> all = comparisons(rep);
    std::vector<std::string> lines = verdict_lines(rep.results, all, ctx);
    for (std::string& line : ceiling_lines(rep.results, all, rep.host.ceiling, ctx.rw))
        lines.push_back(std::move(line));
    return lines;
}

std::vector<std::string> notes(const Report& rep) {
    std::vector<std::string> n;
    const auto has = [&](std::string_view e) {
        return std::any_of(rep.results.rows.begin(), rep.results.rows.end(),
                           [&](const Row& r) { return r.engine == e && r.status == Row::ok; });
    };
    n.push_back(
        "CPU is getrusage of the whole process in % of one core: kernel threads working for it "
        "(SQPOLL, io-wq) count too");
    if (has("uring-sqpoll"))
        n.push_back("uring-sqpoll: its kernel SQ polling thread's CPU is included");
    if (!rep.results.offload_not_counted.empty())
        n.push_back("io-wq hand-offs: not counted: " + rep.results.offload_not_counted +
                    " (offl/IO reads -; the workers' CPU and context switches come from /proc "
                    "all the same)");
    unsigned exited = 0;
    for (const RunRecord& r : rep.results.runs) exited += r.attribution.io_workers_exited;
    if (exited)
        n.push_back(fmt::format(
            "io-wq workers: {} exited during a measured run; each counts up to the last "
            "sample that saw it (every {:g} s), what it did after that is not in kthr%",
            exited, measure::kSteadyWindowS));
    if (has("libaio") && !rep.spec.workload.direct)
        n.push_back(
            "libaio: on buffered files io_submit does the I/O itself before returning; its depth "
            "is "
            "not concurrency");
    if (has("pread")) n.push_back("pread: one I/O at a time whatever the depth (fio's psync)");
    if (has("uring-iopoll"))
        n.push_back(
            "uring-iopoll: completions found by polling the device's poll queues, no "
            "interrupt (the others: interrupts, or the caller blocks in pread)");
    for (std::string_view e : {"uring-cmd", "uring-cmd-reg"})
        if (has(e)) {
            n.push_back(
                fmt::format("{}: NVMe commands through the namespace's char device "
                            "(/dev/ngXnY), not the block layer; never the page cache",
                            e));
        }
    if (rep.spec.workload.direct)
        n.push_back("cache: O_DIRECT, the page cache is bypassed");
    else if (rep.spec.cache == Cache::cold)
        n.push_back(
            "cache: cold: the file's pages were dropped with POSIX_FADV_DONTNEED before each run "
            "and again after its ramp, and every run measures the same blocks from the start of "
            "the offset sequence" +
            cached_note(rep.results));
    else
        n.push_back("cache: warm: the file was read into the page cache before timing");
    if (rep.results.interrupted)
        n.push_back("interrupted: rows marked * cover only what ran before the signal");
    for (std::string& s : saved_notes(rep)) n.push_back(std::move(s));
    if (const auto busy = busy_machine(rep))
        n.push_back(fmt::format(
            "busy machine: {} (load average {} at the start); engines with more threads "
            "(threadpool, uring-sqpoll) get a larger share of a contended CPU, so compare CPU per "
            "I/O rather than IOPS",
            *busy, rep.host.loadavg));
    std::string unassessed;
    for (const RunRecord& r : rep.results.runs)
        if (r.status == Row::ok && r.steady.kind == Steadiness::not_assessed && unassessed.empty())
            unassessed = r.steady.why;
    if (!unassessed.empty())
        n.push_back(fmt::format(
            "steady state: not assessed for runs {} (lengthen --runtime to {:g} s or more to "
            "judge it)",
            unassessed, measure::kSteadyMinWindows * measure::kSteadyWindowS + 0.1));
    return n;
}

std::string to_csv(const Results& res) {
    // iops_low/iops_high is the interval of the median at the run's
    // confidence (interval_covered 1), or the min-max where too few rounds
    // ran for that confidence (0); the CPU interval likewise.
    std::string out =
        "engine,iodepth,batch,status,reason,runs,iops,iops_low,iops_high,interval_covered,iops_"
        "min,iops_max,bw_bytes,lat_mean_ns,lat_p50_ns,lat_p90_ns,lat_p99_ns,lat_p99_9_ns,lat_max_"
        "ns,cpu_usr,cpu_sys,cpu_us_per_io,cpu_us_per_io_low,cpu_us_per_io_high,ctx_per_kio,"
        "syscalls_per_io,ios_per_submit\n";
    auto quote = [](const std::string& s) {
        std::string q = "\"";
        for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
        return q + "\"";
    };
    for (const Row& r : res.rows) {
        out += fmt::format("{},{},{},{},{},{}", r.engine, r.iodepth, r.batch, status_name(r.status),
                           quote(r.reason), r.runs);
        if (r.status == Row::ok)
            out += fmt::format(
                ",{:.1f},{:.1f},{:.1f},{:d},{:.1f},{:.1f},{:.0f},{},{:.2f},{:.2f},{:.4f},{:.4f},{:."
                "4f},{:.3f},{:.4f},{:.3f}\n",
                r.iops, r.iops_low, r.iops_high, r.interval_covered ? 1 : 0, r.iops_min, r.iops_max,
                r.bw_bytes,
                // --no-latency: the six latency cells are empty, not zero.
                res.latency ? fmt::format("{:.0f},{:.0f},{:.0f},{:.0f},{:.0f},{:.0f}",
                                          r.lat_ns.mean, r.lat_ns.p50, r.lat_ns.p90, r.lat_ns.p99,
                                          r.lat_ns.p99_9, r.lat_ns.max)
                            : std::string(5, ','),
                r.cpu_usr, r.cpu_sys, r.cpu_us_per_io, r.cpu_us_per_io_low, r.cpu_us_per_io_high,
                r.ctx_per_kio, r.syscalls_per_io, r.ios_per_submit);
        else
            out += std::string(21, ',') + "\n";
    }
    return out;
}

std::string progress_line(const Progress& p) {
    std::string eta = p.eta_s >= 0 ? fmt::format("  ETA {:.0f} s", p.eta_s) : "";
    std::string when = p.run_s > 0 ? fmt::format("{:.1f}/{:.1f} s", p.elapsed_s, p.run_s)
                                   : fmt::format("{:.1f} s", p.elapsed_s);
    return fmt::format("{:<13} depth {:<5} round {}/{}  run {}/{}  {}{}  {} IOPS{}", p.engine,
                       p.iodepth, p.round, p.rounds, p.run, p.runs, when, p.ramp ? " (ramp)" : "",
                       count(p.iops), eta);
}

}  // namespace uringkit::engines
