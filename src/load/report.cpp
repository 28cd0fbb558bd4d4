// What `uringkit load` prints: the table, the JSON document (docs/json.md,
// docs/schema/load.json) and the live progress line.
#include "load/load.hpp"

#include "document/header.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <string>

namespace uringkit::load {
namespace {

std::string latency(double ns) {
    if (ns < 1e6) return fmt::format("{:.0f} µs", ns / 1e3);
    if (ns < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
    return fmt::format("{:.2f} s", ns / 1e9);
}

std::string grouped(std::uint64_t v) {
    std::string s = std::to_string(v);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
        s.insert(static_cast<std::size_t>(i), ",");
    return s;
}

double per_request(double total, std::uint64_t requests) {
    return requests ? total / static_cast<double>(requests) : 0.0;
}

constexpr double kQuantiles[] = {0.5, 0.9, 0.99, 0.999};
constexpr const char* kQuantileNames[] = {"p50", "p90", "p99", "p99.9"};

std::string shape(const LoadConfig& c) {
    std::string s =
        fmt::format("{} connection{}, {} thread{}, ", c.connections, c.connections == 1 ? "" : "s",
                    c.threads, c.threads == 1 ? "" : "s");
    if (c.rate > 0)
        s += fmt::format(
            "open loop at {:g} requests/s (latency from each request's intended send time)",
            c.rate);
    else
        s += "closed loop";
    if (c.pipeline > 1) s += fmt::format(", {} pipelined", c.pipeline);
    if (c.mode == Mode::Echo) s += fmt::format(", echo of {} bytes", c.size);
    return s;
}

}  // namespace

std::string format_report(const LoadConfig& c, const LoadResult& r) {
    std::string out;
    const double rps = r.seconds > 0 ? static_cast<double>(r.requests) / r.seconds : 0;
    out += fmt::format("uringkit load: {} ({}), {:.2f} s{}\n", c.target.name(), shape(c), r.seconds,
                       r.interrupted ? " (interrupted)" : "");
    out += fmt::format("  {:<12} {} in {:.2f} s: {} requests/s", "requests", grouped(r.requests),
                       r.seconds, grouped(static_cast<std::uint64_t>(rps + 0.5)));
    if (c.mode == Mode::Http) out += fmt::format(", {} not 2xx", grouped(r.non_2xx));
    out += "\n";
    if (c.rate > 0)
        out += fmt::format(
            "  {:<12} {} of {:g} requests/s asked; {} requests due were still unsent at the end\n",
            "rate", grouped(static_cast<std::uint64_t>(rps + 0.5)), c.rate, grouped(r.late));
    out += fmt::format("  {:<12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "latency", "mean",
                       "p50", "p90", "p99", "p99.9", "max");
    out += fmt::format("  {:<12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "",
                       latency(r.latency.mean()), latency(r.latency.quantile(0.5)),
                       latency(r.latency.quantile(0.9)), latency(r.latency.quantile(0.99)),
                       latency(r.latency.quantile(0.999)),
                       latency(static_cast<double>(r.latency.max())));
    std::string errors;
    for (int k = 0; k < static_cast<int>(ErrorKind::kCount); ++k)
        errors += fmt::format("{}{} {}", k ? ", " : "", error_name(static_cast<ErrorKind>(k)),
                              grouped(r.errors[k]));
    out += fmt::format("  {:<12} {}{}\n", "errors", r.total_errors() ? "" : "none: ", errors);
    if (!r.first_error.empty()) out += fmt::format("  {:<12} {}\n", "first error", r.first_error);
    if (r.reconnects)
        out += fmt::format("  {:<12} {} connections opened again\n", "reconnects",
                           grouped(r.reconnects));
    const double cpu = r.cpu_user_s + r.cpu_system_s;
    out += fmt::format(
        "  {:<12} {:.2f} µs CPU/request (user {:.2f}, system {:.2f}), {:.3f} system calls/request "
        "({} in all)\n",
        "client", per_request(cpu * 1e6, r.requests), per_request(r.cpu_user_s * 1e6, r.requests),
        per_request(r.cpu_system_s * 1e6, r.requests),
        per_request(static_cast<double>(r.syscalls), r.requests), grouped(r.syscalls));
    out += fmt::format("  {:<12} {:.1f} MiB/s in, {:.1f} MiB/s out\n", "traffic",
                       r.seconds > 0 ? static_cast<double>(r.bytes_in) / r.seconds / 1048576 : 0,
                       r.seconds > 0 ? static_cast<double>(r.bytes_out) / r.seconds / 1048576 : 0);
    return out;
}

std::string to_json(const LoadConfig& c, const LoadResult& r) {
    using json = nlohmann::ordered_json;
    // Raised when a field changes meaning or goes away.  2: the shared
    // header, latency in ns, every quantity's unit in its name.
    json j = document::header("uringkit load", 2);
    j["target"] = c.target.name();
    j["mode"] = c.mode == Mode::Http ? "http" : "echo";
    j["connections"] = c.connections;
    j["threads"] = c.threads;
    j["pipeline"] = c.pipeline;
    if (c.mode == Mode::Echo) j["size_bytes"] = c.size;
    j["asked_requests_per_s"] = c.rate > 0 ? json(c.rate) : json(nullptr);
    j["duration_s"] = static_cast<double>(c.duration.count()) / 1e9;
    j["timeout_s"] = static_cast<double>(c.timeout.count()) / 1e9;
    j["elapsed_s"] = r.seconds;
    j["requests"] = r.requests;
    j["requests_per_s"] = r.seconds > 0 ? static_cast<double>(r.requests) / r.seconds : 0.0;
    j["sent"] = r.sent;
    j["non_2xx"] = r.non_2xx;
    j["late"] = r.late;
    json e;
    for (int k = 0; k < static_cast<int>(ErrorKind::kCount); ++k) {
        std::string name(error_name(static_cast<ErrorKind>(k)));
        for (char& ch : name)
            if (ch == ' ') ch = '_';
        e[name] = r.errors[k];
    }
    e["total"] = r.total_errors();
    j["errors"] = e;
    j["first_error"] = r.first_error;
    j["reconnects"] = r.reconnects;
    j["received_bytes"] = r.bytes_in;
    j["sent_bytes"] = r.bytes_out;
    json lat;
    lat["mean"] = r.latency.mean();
    for (std::size_t i = 0; i < std::size(kQuantiles); ++i) {
        std::string name = kQuantileNames[i];
        if (name == "p99.9") name = "p99_9";
        lat[name] = r.latency.quantile(kQuantiles[i]);
    }
    lat["max"] = static_cast<double>(r.latency.max());
    j["lat_ns"] = lat;
    const double cpu = r.cpu_user_s + r.cpu_system_s;
    j["cpu"] = {{"user_s", r.cpu_user_s},
                {"system_s", r.cpu_system_s},
                {"us_per_request", per_request(cpu * 1e6, r.requests)}};
    j["syscalls"] = r.syscalls;
    j["syscalls_per_request"] = per_request(static_cast<double>(r.syscalls), r.requests);
    j["enobufs"] = r.enobufs;
    json threads = json::array();
    for (const ThreadResult& t : r.threads)
        threads.push_back({{"connections", t.connections}, {"requests", t.requests}});
    j["threads_detail"] = threads;
    j["interrupted"] = r.interrupted;
    return j.dump(2) + "\n";
}

std::string progress_line(const Progress& p) {
    const double rps = p.elapsed_s > 0 ? static_cast<double>(p.requests) / p.elapsed_s : 0;
    return fmt::format("load: {:.0f}/{:.0f} s, {} requests ({} /s), {} errors", p.elapsed_s,
                       p.duration_s, grouped(p.requests),
                       grouped(static_cast<std::uint64_t>(rps + 0.5)), grouped(p.errors));
}

}  // namespace uringkit::load
