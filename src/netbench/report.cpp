// bench net's comparisons, its table and its verdict in words, and its JSON.
#include "netbench/netbench.hpp"

#include "document/header.hpp"
#include "measure/comparison_json.hpp"
#include "measure/interval.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace uringkit::netbench {
namespace {

using measure::Comparison;
using measure::Judgement;
using measure::Metric;

double metric_of(const Run& r, Metric m) {
    return m == Metric::iops ? r.requests_per_s() : r.server_cpu_us_per_request();
}

// The labels that have runs on workload `w`, in the order the user listed
// them, so tables read as the command line does.
std::vector<std::string> labels_on(const Result& res, unsigned w) {
    std::vector<std::string> out;
    std::map<std::string, unsigned> listed;
    for (const std::string& e : res.config.engines) {
        const unsigned k = ++listed[e];
        const std::string label = k == 1 ? e : fmt::format("{}#{}", e, k);
        const bool ran = std::any_of(res.runs.begin(), res.runs.end(), [&](const Run& r) {
            return r.workload == w && r.engine == label;
        });
        if (ran) out.push_back(label);
    }
    return out;
}

// What each label is compared with: its first listing for a twin
// ("epoll#2" against "epoll"), else epoll, else the first label.
std::vector<std::pair<std::string, std::string>> pairs_on(const Result& res, unsigned w) {
    const std::vector<std::string> labels = labels_on(res, w);
    std::vector<std::pair<std::string, std::string>> out;
    if (labels.empty()) return out;
    const std::string baseline = std::find(labels.begin(), labels.end(), "epoll") != labels.end()
                                     ? std::string("epoll")
                                     : labels.front();
    for (const std::string& l : labels) {
        const auto hash = l.find('#');
        if (hash != std::string::npos) {
            const std::string first = l.substr(0, hash);
            if (std::find(labels.begin(), labels.end(), first) != labels.end())
                out.emplace_back(l, first);
        } else if (l != baseline) {
            out.emplace_back(l, baseline);
        }
    }
    return out;
}

measure::Spread summarize(const Result& res, unsigned w, const std::string& label,
                          double (Run::*f)() const noexcept) {
    std::vector<double> v;
    for (const Run& r : res.runs)
        if (r.workload == w && r.engine == label && r.usable()) v.push_back((r.*f)());
    return measure::spread_of(std::move(v));
}

double p99_us_of(const Run& r) {
    return r.lat_p99_ns / 1e3;
}

std::string words(const Comparison& c) {
    const std::string ratio = fmt::format("{:.2f}x ({:.2f}-{:.2f}, {} rounds)", c.ratio,
                                          c.ratio_low, c.ratio_high, c.pairs);
    switch (c.verdict) {
        case Judgement::faster:
            return c.metric == Metric::iops ? fmt::format("higher, {}", ratio)
                                            : fmt::format("cheaper, {}", ratio);
        case Judgement::slower:
            return c.metric == Metric::iops ? fmt::format("lower, {}", ratio)
                                            : fmt::format("costlier, {}", ratio);
        case Judgement::same:
            return fmt::format("the same within noise, {}", ratio);
        case Judgement::too_few_samples:
            break;
    }
    return fmt::format("not judged ({})", c.why);
}

bool client_bound(const Result& res, unsigned w, const std::string& label) {
    const measure::Spread s = summarize(res, w, label, &Run::client_cpu_share);
    return s.n > 0 && s.median >= 0.9;
}

}  // namespace

std::vector<Comparison> compare(const Result& res) {
    std::size_t count = 0;
    for (unsigned w = 0; w < res.config.workloads.size(); ++w) count += pairs_on(res, w).size() * 2;
    const double each = measure::confidence_each(res.config.confidence, count);
    std::vector<Comparison> out;
    for (unsigned w = 0; w < res.config.workloads.size(); ++w) {
        for (const auto& [a, b] : pairs_on(res, w)) {
            for (Metric m : {Metric::cpu_us_per_io, Metric::iops}) {
                // A run's length is its duration, not an I/O count: no minimum.
                measure::ByRound ra, rb;
                for (const Run& r : res.runs) {
                    if (r.workload != w || !r.usable()) continue;
                    if (r.engine == a) ra[r.round] = {metric_of(r, m), 0};
                    if (r.engine == b) rb[r.round] = {metric_of(r, m), 0};
                }
                measure::PairedRatios q = measure::paired_ratios(ra, rb, 0);
                Comparison c = measure::judge(std::move(q.ratios), each, m, true);
                c.a = a;
                c.b = b;
                c.iodepth = w;
                out.push_back(std::move(c));
            }
        }
    }
    return out;
}

std::string format_report(const Result& res, const std::vector<Comparison>& comparisons) {
    std::string out = fmt::format(
        "bench net: serve's engines on loopback, {} round{} of {:.3g} s per engine and workload; "
        "{}\n",
        res.rounds, res.rounds == 1 ? "" : "s",
        std::chrono::duration<double>(res.config.duration).count(), res.pinning);
    for (const Unavailable& u : res.unavailable)
        out += fmt::format("unsupported: {}: {}\n", u.engine, u.why);
    for (unsigned w = 0; w < res.config.workloads.size(); ++w) {
        const Workload& wl = res.config.workloads[w];
        out += fmt::format("\n{} ({})\n", wl.describe(), wl.name());
        out += fmt::format("  {:<12} {:>24} {:>32} {:>13} {:>9} {:>11}\n", "engine",
                           "requests/s (min-max)", "server CPU µs/request (min-max)",
                           "syscalls/req", "p99 µs", "client CPU");
        for (const std::string& label : labels_on(res, w)) {
            const measure::Spread rps = summarize(res, w, label, &Run::requests_per_s);
            if (rps.n == 0) {
                out += fmt::format("  {:<12} no usable run\n", label);
                continue;
            }
            const measure::Spread cpu = summarize(res, w, label, &Run::server_cpu_us_per_request);
            const measure::Spread sys = summarize(res, w, label, &Run::server_syscalls_per_request);
            const measure::Spread cli = summarize(res, w, label, &Run::client_cpu_share);
            std::vector<double> p99;
            bool counted = true;  // nginx's system calls are not
            for (const Run& r : res.runs)
                if (r.workload == w && r.engine == label && r.usable()) {
                    p99.push_back(p99_us_of(r));
                    counted = counted && r.syscalls_counted;
                }
            std::sort(p99.begin(), p99.end());
            out += fmt::format("  {:<12} {:>24} {:>32} {:>13} {:>9.0f} {:>10.0f}%{}\n", label,
                               fmt::format("{:.0f} ({:.0f}-{:.0f})", rps.median, rps.min, rps.max),
                               fmt::format("{:.2f} ({:.2f}-{:.2f})", cpu.median, cpu.min, cpu.max),
                               counted ? fmt::format("{:.2f}", sys.median) : std::string("-"),
                               p99[p99.size() / 2], cli.median * 100,
                               cli.median >= 0.9 ? " client-bound" : "");
        }
    }
    out += fmt::format("\nVerdict ({:.3g}% family-wise; ranked by server CPU per request):\n",
                       res.config.confidence * 100);
    bool any = false, any_client_bound = false;
    for (std::size_t i = 0; i + 1 < comparisons.size(); i += 2) {
        const Comparison& cpu = comparisons[i];
        const Comparison& rps = comparisons[i + 1];
        const unsigned w = cpu.iodepth;
        std::string line =
            fmt::format("  {}: {} against {}: ", res.config.workloads[w].name(), cpu.a, cpu.b);
        if (cpu.verdict == Judgement::too_few_samples &&
            rps.verdict == Judgement::too_few_samples && cpu.why == rps.why)
            line += words(cpu);  // one reason covers both metrics
        else
            line +=
                fmt::format("server CPU per request: {}; requests/s: {}", words(cpu), words(rps));
        if (client_bound(res, w, cpu.a) || client_bound(res, w, cpu.b)) {
            line += " (client-bound)";
            any_client_bound = true;
        }
        out += line + "\n";
        any = true;
    }
    if (!any) out += "  nothing to compare: fewer than two engines ran\n";
    if (any_client_bound)
        out +=
            "  client-bound: the load's own thread was saturated (90% of a CPU or more), so those "
            "requests/s\n"
            "  say more about the client than the server; server CPU per request is still the "
            "server's own.\n";
    for (const Run& r : res.runs)
        if (!r.error.empty())
            out += fmt::format("failed: {} on {}, round {}: {}\n", r.engine,
                               res.config.workloads[r.workload].name(), r.round + 1, r.error);
    if (res.interrupted) out += "interrupted: the figures above cover the runs that finished\n";
    return out;
}

namespace {
double per_request(const Run& r, double x) {
    return r.server_requests ? x / static_cast<double>(r.server_requests) : 0;
}
}  // namespace

std::string to_json(const Result& res, const std::vector<Comparison>& comparisons) {
    using json = nlohmann::ordered_json;
    // Schema 2: the shared header (docs/json.md), latency in ns, each run's
    // time as elapsed_s.
    json j = document::header("uringkit bench net", 2);
    j["rounds"] = res.rounds;
    j["duration_s"] = std::chrono::duration<double>(res.config.duration).count();
    j["confidence"] = res.config.confidence;
    j["pinning"] = res.pinning;
    j["interrupted"] = res.interrupted;
    j["engines"] = res.config.engines;
    json& wl = j["workloads"] = json::array();
    for (const Workload& w : res.config.workloads)
        wl.push_back({{"name", w.name()}, {"description", w.describe()}});
    json& un = j["unsupported"] = json::array();
    for (const Unavailable& u : res.unavailable)
        un.push_back({{"engine", u.engine}, {"why", u.why}});
    json& runs = j["runs"] = json::array();
    for (const Run& r : res.runs) {
        json x = {
            {"engine", r.engine},
            {"workload", res.config.workloads[r.workload].name()},
            {"round", r.round + 1},
            {"elapsed_s", r.seconds},
            {"requests", r.requests},
            {"requests_per_s", r.requests_per_s()},
            {"server_requests", r.server_requests},
            {"server_cpu_s", r.server_cpu_s},
            {"server_cpu_us_per_request", r.server_cpu_us_per_request()},
            {"server_syscalls_per_request",
             r.syscalls_counted ? json(r.server_syscalls_per_request()) : json(nullptr)},
            {"server_offload_cpu_us_per_request", per_request(r, r.server_offload_cpu_s * 1e6)},
            {"server_offload_ctx_per_request",
             per_request(r, static_cast<double>(r.server_offload_ctx))},
            {"client_cpu_share", r.client_cpu_share()},
            {"lat_p50_ns", r.lat_p50_ns},
            {"lat_p99_ns", r.lat_p99_ns},
            {"errors", r.errors}};
        if (!r.error.empty()) x["error"] = r.error;
        runs.push_back(std::move(x));
    }
    json& cs = j["comparisons"] = json::array();
    for (const Comparison& c : comparisons) {
        json x = measure::comparison_json(
            c, c.metric == Metric::iops ? "requests_per_s" : "server_cpu_us_per_request");
        x["workload"] = res.config.workloads[c.iodepth].name();
        cs.push_back(std::move(x));
    }
    return j.dump(2) + "\n";
}

}  // namespace uringkit::netbench
