// The replay's comparisons, its header, table and verdict in words, and its
// JSON.  The verdict speaks to the program: what changes if only the system
// call changes (as recorded), what could change if it issued its I/O
// together (batched, an upper bound), and what latency it gets at its own
// pace (timed).
#include "replaybench/replaybench.hpp"

#include "document/header.hpp"
#include "engines/runner.hpp"
#include "measure/comparison_json.hpp"
#include "measure/interval.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace uringkit::replaybench {
namespace {

using measure::Comparison;
using measure::Judgement;
using measure::Metric;

bool usable(const Run& r) {
    return r.error.empty() && r.ios > 0 && r.seconds > 0;
}

bool in_cell(const Run& r, const Cell& c) {
    return r.mode == c.mode && r.depth == c.depth;
}

std::vector<std::string> labels_in(const Result& res, const Cell& c) {
    std::vector<std::string> out;
    for (const std::string& l : engines::engine_labels(res.config.engines)) {
        if (std::any_of(res.runs.begin(), res.runs.end(),
                        [&](const Run& r) { return in_cell(r, c) && r.engine == l && usable(r); }))
            out.push_back(l);
    }
    return out;
}

std::vector<std::pair<std::string, std::string>> pairs_in(const Result& res, const Cell& c) {
    const std::vector<std::string> l = labels_in(res, c);
    std::vector<std::pair<std::string, std::string>> out;
    if (l.empty()) return out;
    const std::string base =
        std::find(l.begin(), l.end(), "pread") != l.end() ? std::string("pread") : l.front();
    for (const std::string& x : l) {
        const auto hash = x.find('#');
        if (hash != std::string::npos) {
            const std::string first = x.substr(0, hash);
            if (std::find(l.begin(), l.end(), first) != l.end()) out.emplace_back(x, first);
        } else if (x != base) {
            out.emplace_back(x, base);
        }
    }
    return out;
}

double metric_of(const Run& r, Metric m) {
    return m == Metric::iops ? r.ios_per_s() : r.cpu_us_per_io();
}

measure::Estimate estimate(const Result& res, const Cell& c, const std::string& label,
                           double (*f)(const Run&)) {
    std::vector<double> v;
    for (const Run& r : res.runs)
        if (in_cell(r, c) && r.engine == label && usable(r)) v.push_back(f(r));
    return measure::median_interval(std::move(v), res.config.confidence);
}

std::string cell_title(const Cell& c) {
    switch (c.mode) {
        case Mode::as_recorded:
            return "as recorded: each thread's I/O in its order, one at a time";
        case Mode::batched:
            return fmt::format("batched: up to {} in flight per thread, dependencies kept",
                               c.depth);
        case Mode::timed:
            return fmt::format(
                "timed: each I/O at its recorded time, up to {} in flight per thread", c.depth);
    }
    return {};
}

std::string pct(std::uint64_t part, std::uint64_t whole) {
    return whole ? fmt::format("{:.0f}%",
                               100.0 * static_cast<double>(part) / static_cast<double>(whole))
                 : "-";
}

}  // namespace

std::vector<std::string> describe_shape(const Program& p) {
    std::vector<std::string> out;
    const TraceShape& s = p.shape();
    std::string d = describe(p.summary());
    for (std::size_t pos = 0; pos < d.size();) {
        const auto nl = d.find('\n', pos);
        out.push_back(d.substr(pos, nl - pos));
        pos = nl == std::string::npos ? d.size() : nl + 1;
    }
    out.push_back(
        fmt::format("replayed: {} I/O steps on {} thread{}: {} reads ({} bytes asked), {} writes "
                    "({} bytes), {} syncs, {} other (ftruncate, fallocate, trim)",
                    s.steps, p.threads(), p.threads() == 1 ? "" : "s", s.reads, s.read_bytes,
                    s.writes - s.other, s.write_bytes, s.syncs, s.other));
    static const char* const names[] = {"<=4k", "<=16k", "<=64k", "<=256k",
                                        "<=1m", "<=4m",  "<=16m", ">16m"};
    std::string sizes;
    const std::uint64_t rw = s.reads + (s.writes - s.other);
    for (std::size_t i = 0; i < s.sizes.size(); ++i)
        if (s.sizes[i])
            sizes +=
                fmt::format("{}{} {}", sizes.empty() ? "" : ", ", names[i], pct(s.sizes[i], rw));
    if (!sizes.empty()) out.push_back("request sizes: " + sizes);
    out.push_back(
        fmt::format("sequential: {} of reads and writes start where their thread's previous one on "
                    "that file ended",
                    pct(s.sequential, rw)));
    if (s.unknown_offset)
        out.push_back(fmt::format("left out: {} reads/writes at an offset the trace does not give",
                                  s.unknown_offset));
    const Summary& sum = p.summary();
    if (sum.first_ns && sum.last_ns && sum.events_with_duration) {
        const double span = static_cast<double>(*sum.last_ns - *sum.first_ns) / 1e9;
        const double io = static_cast<double>(sum.io_duration_ns) / 1e9;
        out.push_back(
            fmt::format("program time: {:.3f} s traced, {:.3f} s of it inside the I/O calls "
                        "(summed over threads); the "
                        "rest (computing, untraced calls) is not replayed.  Tracing stretched "
                        "every call it stopped at, so "
                        "the recorded I/O time is an upper bound",
                        span, io));
    }
    return out;
}

std::vector<Comparison> compare(const Result& res) {
    const std::vector<Cell> cs = cells(res.config);
    std::size_t count = 0;
    for (const Cell& c : cs) count += pairs_in(res, c).size() * 2;
    const double each =
        measure::confidence_each(res.config.confidence, std::max<std::size_t>(count, 1));
    std::vector<Comparison> out;
    for (unsigned ci = 0; ci < cs.size(); ++ci) {
        for (const auto& [a, b] : pairs_in(res, cs[ci])) {
            for (Metric m : {Metric::iops, Metric::cpu_us_per_io}) {
                measure::ByRound ra, rb;
                for (const Run& r : res.runs) {
                    if (!in_cell(r, cs[ci]) || !usable(r)) continue;
                    if (r.engine == a) ra[r.round] = {metric_of(r, m), r.ios};
                    if (r.engine == b) rb[r.round] = {metric_of(r, m), r.ios};
                }
                measure::PairedRatios q = measure::paired_ratios(ra, rb, measure::kMinIosPerRun);
                const bool enough = q.min_ios_ok;
                Comparison c = measure::judge(std::move(q.ratios), each, m, enough);
                if (!enough)
                    c.why = fmt::format("runs of fewer than {} I/Os: replay more with --loops",
                                        measure::kMinIosPerRun);
                c.a = a;
                c.b = b;
                c.iodepth = ci;
                out.push_back(std::move(c));
            }
        }
    }
    return out;
}

std::vector<std::string> verdict_lines(const Result& res,
                                       const std::vector<Comparison>& comparisons) {
    std::vector<std::string> out;
    const std::vector<Cell> cs = cells(res.config);
    for (std::size_t i = 0; i + 1 < comparisons.size(); i += 2) {
        const Comparison& time = comparisons[i];
        const Comparison& cpu = comparisons[i + 1];
        const Cell& cell = cs[time.iodepth];
        std::string lead;
        switch (cell.mode) {
            case Mode::as_recorded:
                lead = "As your program issues it (one at a time per thread), ";
                break;
            case Mode::batched:
                lead = fmt::format("With up to {} in flight per thread, ", cell.depth);
                break;
            case Mode::timed:
                lead = fmt::format("At your program's recorded pace (up to {} in flight), ",
                                   cell.depth);
                break;
        }
        const auto sys_a =
            estimate(res, cell, time.a, [](const Run& r) { return r.syscalls_per_io(); });
        const auto sys_b =
            estimate(res, cell, time.b, [](const Run& r) { return r.syscalls_per_io(); });
        std::string syscalls;
        if (sys_b.median > 0 && sys_a.median < sys_b.median * 0.95)
            syscalls = fmt::format(" with {:.0f}% fewer system calls",
                                   100.0 * (1 - sys_a.median / sys_b.median));
        else if (sys_b.median > 0 && sys_a.median > sys_b.median * 1.05)
            syscalls = fmt::format(" with {:.0f}% more system calls",
                                   100.0 * (sys_a.median / sys_b.median - 1));
        const std::string interval =
            fmt::format("{:.2f}-{:.2f}, {} rounds", time.ratio_high > 0 ? 1 / time.ratio_high : 0,
                        time.ratio_low > 0 ? 1 / time.ratio_low : 0, time.pairs);
        std::string line = lead;
        switch (time.verdict) {
            case Judgement::faster:
                line += fmt::format("{} completes the same I/O in {:.2f}x the time of {} ({}){}",
                                    time.a, 1 / time.ratio, time.b, interval, syscalls);
                break;
            case Judgement::slower:
                line += fmt::format("{} takes {:.2f}x the time of {} ({}){}", time.a,
                                    1 / time.ratio, time.b, interval, syscalls);
                break;
            case Judgement::same:
                line += fmt::format("{} is the same as {} within noise ({:.2f}x the time, {}){}",
                                    time.a, time.b, 1 / time.ratio, interval, syscalls);
                break;
            case Judgement::too_few_samples:
                line += fmt::format("{} against {}: not judged ({})", time.a, time.b, time.why);
                break;
        }
        if (cpu.verdict == Judgement::faster || cpu.verdict == Judgement::slower)
            line += fmt::format("; CPU per I/O {:.2f}x ({})", cpu.ratio,
                                cpu.verdict == Judgement::faster ? "cheaper" : "costlier");
        else if (cpu.verdict == Judgement::same)
            line += "; CPU per I/O the same within noise";
        if (cell.mode == Mode::batched && time.verdict == Judgement::faster && time.b == "pread")
            line += ": that needs your program to submit its I/O together";
        if (cell.mode == Mode::timed) {
            const auto pa = estimate(res, cell, time.a, [](const Run& r) { return r.lat_p99_ns; });
            const auto pb = estimate(res, cell, time.b, [](const Run& r) { return r.lat_p99_ns; });
            line += fmt::format("; p99 latency {:.1f} µs against {:.1f} µs", pa.median / 1e3,
                                pb.median / 1e3);
        }
        out.push_back(line + ".");
    }
    if (std::any_of(cs.begin(), cs.end(), [](const Cell& c) { return c.mode == Mode::batched; }))
        out.push_back(
            "Batched is an upper bound: it issues each thread's I/O ahead as far as the data "
            "dependencies the "
            "trace shows allow.  A read whose offset comes from the data of the one before (a "
            "B-tree walk, "
            "pointer chasing) cannot be issued early; --iodepth 1 is the honest lower end.");
    return out;
}

std::string format_report(const Program& p, const Result& res,
                          const std::vector<Comparison>& comparisons) {
    std::string out;
    for (const std::string& l : describe_shape(p)) out += l + "\n";
    out +=
        fmt::format("\n{} round{}, {} pass{} over the trace per run, {} cache\n", res.rounds,
                    res.rounds == 1 ? "" : "s", res.config.loops, res.config.loops == 1 ? "" : "es",
                    res.config.cache == Cache::warm ? "warm" : "cold");
    for (const Unavailable& u : res.unavailable)
        out += fmt::format("unavailable: {}: {}\n", u.engine, u.why);
    for (const Cell& c : cells(res.config)) {
        out += fmt::format("\n{}\n", cell_title(c));
        out += fmt::format("  {:<14} {:>26} {:>12} {:>9} {:>9} {:>12} {:>10}\n", "engine",
                           "time s (min-max)", "I/Os/s", "p50 µs", "p99 µs", "syscalls/IO",
                           "CPU µs/IO");
        for (const std::string& l : labels_in(res, c)) {
            const auto t = estimate(res, c, l, [](const Run& r) { return r.seconds; });
            const auto iops = estimate(res, c, l, [](const Run& r) { return r.ios_per_s(); });
            const auto p50 = estimate(res, c, l, [](const Run& r) { return r.lat_p50_ns; });
            const auto p99 = estimate(res, c, l, [](const Run& r) { return r.lat_p99_ns; });
            const auto sys = estimate(res, c, l, [](const Run& r) { return r.syscalls_per_io(); });
            const auto cpu = estimate(res, c, l, [](const Run& r) { return r.cpu_us_per_io(); });
            out += fmt::format("  {:<14} {:>26} {:>12.0f} {:>9.1f} {:>9.1f} {:>12.3f} {:>10.2f}\n",
                               l + (l.rfind("pread", 0) == 0 && c.depth > 1 ? " (1)" : ""),
                               fmt::format("{:.4f} ({:.4f}-{:.4f})", t.median, t.low, t.high),
                               iops.median, p50.median / 1e3, p99.median / 1e3, sys.median,
                               cpu.median);
        }
    }
    if (std::any_of(res.runs.begin(), res.runs.end(),
                    [](const Run& r) { return r.depth > 1 && r.engine.rfind("pread", 0) == 0; }))
        out +=
            "  (1): pread makes one system call at a time whatever the depth, as the program did\n";
    out += fmt::format(
        "\nVerdict ({:.3g}% family-wise; by the time to replay the trace, from paired rounds):\n",
        res.config.confidence * 100);
    const std::vector<std::string> lines = verdict_lines(res, comparisons);
    if (comparisons.empty()) out += "  nothing to compare: fewer than two engines ran\n";
    for (const std::string& l : lines) out += "  " + l + "\n";
    std::uint64_t shorts = 0, bad = 0;
    for (const Run& r : res.runs) {
        if (!r.error.empty())
            out += fmt::format("failed: {} ({}, depth {}), round {}: {}\n", r.engine,
                               mode_name(r.mode), r.depth, r.round, r.error);
        shorts = std::max(shorts, r.short_ios);
        bad += r.verify_failures;
    }
    for (const std::string& n : res.notes) out += "note: " + n + "\n";
    if (shorts)
        out += fmt::format(
            "note: up to {} reads/writes per run moved fewer bytes than asked (the end of a file, "
            "as the program saw it, or a file that changed since)\n",
            shorts);
    if (res.config.verify)
        out += fmt::format("verify: {} replayed read{} differed from the file's bytes\n", bad,
                           bad == 1 ? "" : "s");
    if (res.interrupted) out += "interrupted: the figures above cover the runs that finished\n";
    return out;
}

std::string to_json(const Program& p, const Result& res,
                    const std::vector<Comparison>& comparisons) {
    using json = nlohmann::ordered_json;
    const Summary& s = p.summary();
    const TraceShape& sh = p.shape();
    // Schema 2: the shared header (docs/json.md), each run's time as
    // elapsed_s and its bytes as transferred_bytes.
    json j = document::header("uringkit bench --replay", 2);
    j["trace"] = {{"format", format_name(s.format)},
                  {"lines", s.lines},
                  {"threads", p.threads()},
                  {"files", p.files().size()},
                  {"steps", sh.steps},
                  {"reads", sh.reads},
                  {"writes", sh.writes},
                  {"syncs", sh.syncs},
                  {"read_bytes", sh.read_bytes},
                  {"write_bytes", sh.write_bytes},
                  {"sizes", sh.sizes},
                  {"sequential", sh.sequential},
                  {"skipped", s.skipped_total()},
                  {"span_s", static_cast<double>(sh.span_ns) / 1e9},
                  {"io_time_s", static_cast<double>(s.io_duration_ns) / 1e9}};
    std::vector<std::string> modes;
    for (Mode m : res.config.modes) modes.emplace_back(mode_name(m));
    j["config"] = {{"engines", res.config.engines},
                   {"modes", modes},
                   {"depths", res.config.depths},
                   {"rounds", res.rounds},
                   {"loops", res.config.loops},
                   {"cache", res.config.cache == Cache::warm ? "warm" : "cold"},
                   {"confidence", res.config.confidence}};
    j["interrupted"] = res.interrupted;
    j["notes"] = res.notes;
    json& un = j["unavailable"] = json::array();
    for (const Unavailable& u : res.unavailable)
        un.push_back({{"engine", u.engine}, {"why", u.why}});
    json& runs = j["runs"] = json::array();
    for (const Run& r : res.runs) {
        json x = {{"engine", r.engine},
                  {"mode", mode_name(r.mode)},
                  {"depth", r.depth},
                  {"round", r.round},
                  {"elapsed_s", r.seconds},
                  {"ios", r.ios},
                  {"transferred_bytes", r.bytes},
                  {"syscalls", r.syscalls},
                  {"cpu_s", r.cpu_s},
                  {"offload_cpu_s", r.offload_cpu_s},
                  {"offload_ctx", r.offload_ctx},
                  {"lat_p50_ns", r.lat_p50_ns},
                  {"lat_p99_ns", r.lat_p99_ns},
                  {"lat_max_ns", r.lat_max_ns},
                  {"short_ios", r.short_ios},
                  {"verify_failures", r.verify_failures}};
        if (!r.error.empty()) x["error"] = r.error;
        runs.push_back(std::move(x));
    }
    const std::vector<Cell> cs = cells(res.config);
    json& cj = j["comparisons"] = json::array();
    for (const Comparison& c : comparisons) {
        json x =
            measure::comparison_json(c, c.metric == Metric::iops ? "ios_per_s" : "cpu_us_per_io");
        x["mode"] = mode_name(cs[c.iodepth].mode);
        x["depth"] = cs[c.iodepth].depth;
        cj.push_back(std::move(x));
    }
    return j.dump(2) + "\n";
}

}  // namespace uringkit::replaybench
