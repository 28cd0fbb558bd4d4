#include "engines/verdict.hpp"

#include "engines/figures.hpp"
#include "measure/interval.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace uringkit::engines {

namespace {

const Row* ok_row(const Results& res, std::string_view label, unsigned depth) {
    for (const Row& r : res.rows)
        if (r.engine == label && r.iodepth == depth && r.status == Row::ok) return &r;
    return nullptr;
}

std::vector<unsigned> depths_of(const Results& res) {
    std::vector<unsigned> d;
    for (const Row& r : res.rows)
        if (std::find(d.begin(), d.end(), r.iodepth) == d.end()) d.push_back(r.iodepth);
    return d;
}

std::vector<std::string> labels_of(const Results& res) {
    std::vector<std::string> l;
    for (const Row& r : res.rows)
        if (std::find(l.begin(), l.end(), r.engine) == l.end()) l.push_back(r.engine);
    return l;
}

double metric_of(const RunRecord& r, Metric m) {
    return m == Metric::iops ? r.iops : r.cpu_us_per_io;
}

bool usable(const RunRecord& r) {
    return r.status == Row::ok && r.ios > 0 && r.seconds > 0;
}

}  // namespace

std::vector<Pairing> pairings(const Results& res) {
    std::vector<Pairing> out;
    const std::vector<std::string> labels = labels_of(res);
    for (unsigned depth : depths_of(res)) {
        auto has = [&](std::string_view l) { return ok_row(res, l, depth) != nullptr; };
        auto add = [&](const std::string& a, const std::string& b) {
            if (a == b || !has(a) || !has(b)) return;
            for (const Pairing& p : out)
                if (p.iodepth == depth && ((p.a == a && p.b == b) || (p.a == b && p.b == a)))
                    return;
            out.push_back({a, b, depth});
        };
        // The reference: pread, the engine without a queue; else the first
        // plain engine listed that ran here.
        std::string ref;
        if (has("pread")) ref = "pread";
        for (const std::string& l : labels)
            if (ref.empty() && has(l) && l.find('#') == std::string::npos &&
                engine_base(l) != "auto")
                ref = l;
        for (const std::string& l : labels) {
            if (!has(l) || l == ref) continue;
            if (l.find('#') != std::string::npos) {
                add(l, std::string(engine_base(l)));  // A/A: against its first listing
            } else if (l == "auto") {
                const Row* a = ok_row(res, l, depth);
                const std::string other = a->ran == "pread" ? "uring" : "pread";
                add(l, other);
            } else if (!ref.empty()) {
                add(l, ref);
            }
        }
        if (ref != "uring" && ref != "liburing") add("uring", "liburing");
    }
    return out;
}

std::vector<Comparison> compare_engines(const Results& res) {
    const std::vector<Pairing> pairs = pairings(res);
    const double each = confidence_each(res.confidence, pairs.size() * 2);
    std::vector<Comparison> out;
    for (const Pairing& p : pairs)
        for (Metric m : {Metric::iops, Metric::cpu_us_per_io}) {
            // a's and b's runs at this depth, by round.
            measure::ByRound ra, rb;
            for (const RunRecord& r : res.runs) {
                if (r.iodepth != p.iodepth || !usable(r)) continue;
                if (r.engine == p.a) ra[r.round] = {metric_of(r, m), r.ios};
                if (r.engine == p.b) rb[r.round] = {metric_of(r, m), r.ios};
            }
            measure::PairedRatios q = measure::paired_ratios(ra, rb, kMinIosPerRun);
            Comparison c = judge(std::move(q.ratios), each, m, q.min_ios_ok);
            c.a = p.a;
            c.b = p.b;
            c.iodepth = p.iodepth;
            out.push_back(std::move(c));
        }
    return out;
}

std::vector<Comparison> compare_saved(const Results& now, const SavedRun& saved) {
    struct Key {
        std::string engine;
        unsigned depth;
        bool operator<(const Key& o) const {
            return engine < o.engine || (engine == o.engine && depth < o.depth);
        }
    };
    std::map<Key, std::pair<std::vector<const RunRecord*>, std::vector<const RunRecord*>>> by;
    for (const RunRecord& r : now.runs)
        if (usable(r)) by[{r.engine, r.iodepth}].first.push_back(&r);
    for (const RunRecord& r : saved.runs)
        if (usable(r)) by[{r.engine, r.iodepth}].second.push_back(&r);
    std::size_t count = 0;
    for (const auto& [k, v] : by) count += !v.first.empty() && !v.second.empty() ? 2 : 0;
    // Each median's interval at half the comparison's risk: when both cover
    // their medians (probability >= 1 - risk), the ratio of the medians lies
    // between low/high' and high/low'.
    const double each = confidence_each(now.confidence, count);
    const double half = 1 - (1 - each) / 2;
    std::vector<Comparison> out;
    for (const Row& row : now.rows) {
        const auto it = by.find({row.engine, row.iodepth});
        if (it == by.end() || it->second.first.empty() || it->second.second.empty()) continue;
        for (Metric m : {Metric::iops, Metric::cpu_us_per_io}) {
            std::vector<double> a, b;
            bool min_ios_ok = true;
            for (const RunRecord* r : it->second.first) {
                a.push_back(metric_of(*r, m));
                min_ios_ok &= r->ios >= kMinIosPerRun;
            }
            for (const RunRecord* r : it->second.second) {
                b.push_back(metric_of(*r, m));
                min_ios_ok &= r->ios >= kMinIosPerRun;
            }
            const Estimate ea = measure::median_interval(a, half),
                           eb = measure::median_interval(b, half);
            Comparison c;
            c.a = row.engine;
            c.b = "saved";
            c.iodepth = row.iodepth;
            c.metric = m;
            c.pairs = std::min(ea.n, eb.n);
            if (eb.median <= 0 || eb.low <= 0) continue;
            c.ratio = ea.median / eb.median;
            c.ratio_low = ea.low / eb.high;
            c.ratio_high = ea.high / eb.low;
            if (!min_ios_ok)
                c.why = fmt::format("runs of fewer than {} I/Os", kMinIosPerRun);
            else if (!ea.covered || !eb.covered)
                c.why = fmt::format("{} and {} runs; {} each needed for {:.4g}% per comparison",
                                    ea.n, eb.n, measure::samples_needed(half), each * 100);
            else
                c.verdict = measure::judge_interval(c.ratio_low, c.ratio_high, m);
            out.push_back(std::move(c));
        }
    }
    return out;
}

namespace {

std::string noun(RwMode rw) {
    if (rw == RwMode::randrw) return "I/O";
    return writes(rw) ? "write" : "read";
}

std::string times(double r) {
    return fmt::format("{:.2f}x", r);
}

std::string interval(const Comparison& c) {
    return fmt::format("{}-{}", times(c.ratio_low), times(c.ratio_high));
}

// "±4%": the half-width of the interval around 1, the noise it could not see past.
std::string noise(const Comparison& c) {
    const double x = std::max(1 - c.ratio_low, c.ratio_high - 1) * 100;
    return fmt::format("±{:.0f}%", std::max(x, 0.0));
}

std::string rate_phrase(const Comparison& c, const std::string& what) {
    const std::string per_s = what + "s per second";
    switch (c.verdict) {
        case Judgement::faster:
            return fmt::format("faster: {} the {} ({})", times(c.ratio), per_s, interval(c));
        case Judgement::slower:
            return fmt::format("slower: {} the {} ({})", times(c.ratio), per_s, interval(c));
        case Judgement::same:
            return fmt::format("the same {} within this machine's noise ({})", per_s, noise(c));
        case Judgement::too_few_samples:
            break;
    }
    return "too few samples to compare (" + c.why + ")";
}

std::string cpu_phrase(const Comparison& c, const std::string& what) {
    switch (c.verdict) {
        case Judgement::faster:
            return fmt::format("less CPU per {}: {} ({})", what, times(c.ratio), interval(c));
        case Judgement::slower:
            return fmt::format("more CPU per {}: {} ({})", what, times(c.ratio), interval(c));
        case Judgement::same:
            return fmt::format("the same CPU per {} within this machine's noise ({})", what,
                               noise(c));
        case Judgement::too_few_samples:
            break;
    }
    return "CPU per " + what + ": too few samples to compare (" + c.why + ")";
}

// "; not steady: uring in round 3 (+14% over the run)" for the runs behind a comparison.
std::string steadiness_remark(const Results& res, const Comparison& c) {
    std::string out;
    for (const RunRecord& r : res.runs) {
        if (r.iodepth != c.iodepth || (r.engine != c.a && r.engine != c.b)) continue;
        if (r.steady.kind != Steadiness::trending) continue;
        out += fmt::format("{}{} in round {} ({:+.0f}% over the run, {:+.1f}%/s)",
                           out.empty() ? "" : ", ", r.engine, r.round, r.steady.change * 100,
                           r.steady.slope * 100);
    }
    return out.empty() ? out : "; not steady: " + out;
}

// Why io_uring handed a row's I/Os to io-wq workers.
std::string offload_reason(const Row& row, const VerdictContext& ctx, const std::string& what) {
    if (engine_base(row.engine) == "uring-async")
        return "IOSQE_ASYNC sends every " + what + " to a worker";
    if (ctx.filesystem == "tmpfs")
        return "tmpfs files do not support non-blocking " + what +
               "s, so io_uring queues each one to a worker";
    return what + "s that could not complete without blocking are queued to a worker";
}

// "; pread did 44.0x its reads per second here" from a judged loss against another engine.
std::string loss_phrase(const Row& row, const std::vector<Comparison>& comparisons,
                        const std::string& what) {
    for (const Comparison& c : comparisons) {
        if (c.a != row.engine || c.iodepth != row.iodepth || c.b == "saved") continue;
        if (c.metric == Metric::iops && c.verdict == Judgement::slower && c.ratio > 0)
            return fmt::format("; {} did {} its {}s per second here", c.b, times(1 / c.ratio),
                               what);
        if (c.metric == Metric::cpu_us_per_io && c.verdict == Judgement::slower)
            return fmt::format("; {} is {} cheaper per {} here", c.b, times(c.ratio), what);
    }
    return {};
}

}  // namespace

std::vector<std::string> cause_lines(const Row& row, const std::vector<Comparison>& comparisons,
                                     const VerdictContext& ctx) {
    std::vector<std::string> out;
    if (row.status != Row::ok || row.ios == 0) return out;
    const Attribution& a = row.attribution;
    const std::string what = noun(ctx.rw);
    const std::string at = fmt::format("at depth {} {}", row.iodepth, row.engine);
    const double worker_share =
        row.cpu_us_per_io > 0 ? a.offload_cpu_us_per_io / row.cpu_us_per_io : 0;
    // io-wq: most I/Os handed over (counted), or, uncounted, a quarter or
    // more of the CPU in the workers: below that they explain little.
    const bool counted = a.offload_per_io >= 0;
    if ((counted && a.offload_per_io >= 0.5) || (!counted && worker_share >= 0.25)) {
        const std::string how =
            counted ? fmt::format("handed {:.0f}% of its {}s to kernel worker threads",
                                  std::min(a.offload_per_io, 1.0) * 100, what)
                    : fmt::format("spent {:.0f}% of its CPU in io-wq kernel worker threads",
                                  worker_share * 100);
        out.push_back(fmt::format(
            "{} {} ({}): each {} cost {:.1f} context switches and {} µs of CPU, {} µs of it in the "
            "workers{}",
            at, how, offload_reason(row, ctx, what), what, row.ctx_per_kio / 1e3,
            detail::sig3(row.cpu_us_per_io), detail::sig3(a.offload_cpu_us_per_io),
            loss_phrase(row, comparisons, what)));
    }
    // SQPOLL: the thread slept between I/Os, and a tenth or more needed a wake-up.
    if (a.sq_wakeups_per_kio >= 100)
        out.push_back(fmt::format(
            "{} woke its sleeping SQ polling thread for {:.0f}% of its {}s (it sleeps after {} ms "
            "without work): each wake-up is an io_uring_enter and a thread wake-up, and the "
            "thread used {} µs of CPU per {}{}",
            at, std::min(a.sq_wakeups_per_kio / 10, 100.0), what,
            ctx.sq_thread_idle_ms ? ctx.sq_thread_idle_ms : 50,
            detail::sig3(a.sqpoll_cpu_us_per_io), what, loss_phrase(row, comparisons, what)));
    if (a.cq_overflows > 0)
        out.push_back(
            fmt::format("{} overflowed its completion queue in {} reaps ({} I/Os in flight{}): the "
                        "completions waited in the kernel's overflow list and each flush cost an "
                        "io_uring_enter{}",
                        at, a.cq_overflows, row.iodepth,
                        ctx.ring_entries ? fmt::format(" for a CQ of {} entries", ctx.ring_entries)
                                         : std::string(),
                        loss_phrase(row, comparisons, what)));
    if (a.enter_retries > 0)
        out.push_back(fmt::format(
            "{} had io_uring_enter answered EAGAIN, EBUSY or EINTR {} times and retried it", at,
            a.enter_retries));
    return out;
}

std::vector<std::string> verdict_lines(const Results& res,
                                       const std::vector<Comparison>& comparisons,
                                       const VerdictContext& ctx) {
    std::vector<std::string> lines;
    const std::string what = noun(ctx.rw);
    std::size_t engine_comparisons = 0;
    for (const Comparison& c : comparisons) engine_comparisons += c.b != "saved";
    if (engine_comparisons)
        lines.push_back(fmt::format(
            "verdict at {:.4g}% confidence over the run's {} comparison{} (each interval at "
            "{:.4g}%), from the ratios of runs in the same round:",
            res.confidence * 100, engine_comparisons, engine_comparisons == 1 ? "" : "s",
            confidence_each(res.confidence, engine_comparisons) * 100));
    if (ctx.busy)
        lines.push_back("busy machine (" + *ctx.busy + "): ranked by CPU per " + what +
                        ", since IOPS reward engines with more threads on a contended CPU");
    for (unsigned depth : depths_of(res)) {
        bool any = false;
        for (const Row& r : res.rows) any |= r.iodepth == depth && r.status == Row::ok;
        if (!any) {
            lines.push_back(fmt::format("at depth {} no engine ran", depth));
            continue;
        }
        if (const Row* a = ok_row(res, "auto", depth); a && !a->ran.empty())
            lines.push_back(fmt::format(
                "at depth {} auto ran {}, so it is compared only with {}, the engine it did not "
                "run",
                depth, a->ran, a->ran == "pread" ? "uring" : "pread"));
        for (std::size_t i = 0; i < comparisons.size(); ++i) {
            const Comparison& c = comparisons[i];
            if (c.iodepth != depth || c.metric != Metric::iops) continue;
            const Comparison* cpu = nullptr;
            for (const Comparison& d : comparisons)
                if (d.iodepth == depth && d.a == c.a && d.b == c.b &&
                    d.metric == Metric::cpu_us_per_io)
                    cpu = &d;
            const std::string against =
                c.b == "saved"
                    ? "the saved run" +
                          (ctx.saved_name.empty() ? std::string() : " (" + ctx.saved_name + ")")
                    : c.b;
            std::string line = fmt::format("at depth {} {} against {}: ", depth, c.a, against);
            if (c.verdict == Judgement::too_few_samples &&
                (!cpu || cpu->verdict == Judgement::too_few_samples)) {
                line += "too few samples to compare (" + c.why + ")";
            } else if (ctx.busy && cpu) {
                line += cpu_phrase(*cpu, what) + "; " + rate_phrase(c, what);
            } else {
                line += rate_phrase(c, what);
                if (cpu) line += ", with " + cpu_phrase(*cpu, what);
            }
            line += steadiness_remark(res, c);
            lines.push_back(std::move(line));
        }
        for (const Row& r : res.rows)
            if (r.iodepth == depth)
                for (std::string& l : cause_lines(r, comparisons, ctx))
                    lines.push_back(std::move(l));
    }
    return lines;
}

}  // namespace uringkit::engines
