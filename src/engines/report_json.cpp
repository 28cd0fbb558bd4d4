// The JSON output of `uringkit bench` (docs/json.md, docs/schema/bench.json)
// and reading it back for `--compare`, in its current shape (schema 2) and
// the one before it (`uringkit_bench_version` 1), which saved runs still have.
#include "engines/report.hpp"

#include "engines/engine.hpp"

#include "document/header.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace uringkit::engines {
namespace {

using json = nlohmann::ordered_json;

// Raised when a field changes meaning or goes away (docs/json.md).  1 was
// the `uringkit_bench_version` document, before the shared header and units.
constexpr int kSchema = 2;

std::string_view steadiness_name(Steadiness::Kind k) {
    switch (k) {
        case Steadiness::steady:
            return "steady";
        case Steadiness::trending:
            return "not_steady";
        case Steadiness::not_assessed:
            break;
    }
    return "not_assessed";
}

// Where the time went (runner.hpp: Attribution), as rows and runs both carry it.
json attribution_json(const Attribution& a) {
    return {{"offload_per_io", a.offload_per_io < 0 ? json(nullptr) : json(a.offload_per_io)},
            {"offload_cpu_us_per_io", a.offload_cpu_us_per_io},
            {"offload_ctx_per_kio", a.offload_ctx_per_kio},
            {"io_workers", a.io_workers},
            {"io_workers_started", a.io_workers_started},
            {"io_workers_exited", a.io_workers_exited},
            {"sqpoll_cpu_us_per_io", a.sqpoll_cpu_us_per_io},
            {"sq_wakeups_per_kio", a.sq_wakeups_per_kio},
            {"cq_overflows", a.cq_overflows},
            {"enter_retries", a.enter_retries}};
}

json run_json(const RunRecord& r) {
    json j = {{"engine", r.engine},
              {"iodepth", r.iodepth},
              {"position", r.position},
              {"status", status_name(r.status)},
              {"reason", r.reason},
              {"ran", r.ran},
              {"interrupted", r.interrupted},
              {"ios", r.ios},
              {"runtime_s", r.seconds},
              {"ios_per_s", r.iops},
              {"bytes_per_s", r.bw_bytes},
              {"cpu_us_per_io", r.cpu_us_per_io},
              {"lat_p50_ns", r.lat_p50_ns},
              {"lat_p99_ns", r.lat_p99_ns},
              {"syscalls", r.syscalls},
              {"submits", r.submits},
              {"steady", steadiness_name(r.steady.kind)},
              {"steady_slope", r.steady.slope},
              {"steady_change", r.steady.change},
              {"steady_why", r.steady.why},
              {"cached_at_start", r.cached_at_start < 0 ? json(nullptr) : json(r.cached_at_start)}};
    if (r.status == Row::ok) j.update(attribution_json(r.attribution));
    return j;
}

// Comparisons name their metric as the rows name the figure.
std::string_view metric_field(Metric m) {
    return m == Metric::iops ? "ios_per_s" : metric_name(m);
}

}  // namespace

std::string to_json(const Report& rep) {
    const BenchSpec& s = rep.spec;
    json job = {
        {"filename", rep.filename},
        {"temporary", rep.temporary},
        {"size_bytes", rep.size},
        {"offset_bytes", s.workload.offset},
        {"rw", rw_name(s.workload.rw)},
        {"rwmixread", s.workload.rwmixread},
        {"bs_bytes", s.workload.bs},
        {"iodepth", s.depths},
        {"batch", s.batch},
        {"numjobs", s.numjobs},
        {"direct", s.workload.direct},
        {"runtime_s", s.runtime_s},
        {"ios", s.ios},
        {"ramp_s", s.ramp_s},
        {"engines", s.engines},
        {"cache", s.workload.direct ? "direct" : (s.cache == Cache::warm ? "warm" : "cold")},
        {"rounds", s.rounds},
        {"repeat", s.rounds},
        {"order", order_name(s.order)},
        {"order_seed", s.order_seed},
        {"confidence", s.confidence},
        {"seed", s.workload.seed},
        {"verify", s.workload.verify},
        {"latency", s.latency},
    };
    json storage = {
        {"filesystem", rep.host.filesystem},
        {"device", rep.host.device},
        {"mount_point", rep.host.mount_point},
    };
    json rows = json::array();
    for (const Row& r : rep.results.rows) {
        const EngineInfo* info = find_engine(r.engine.substr(0, r.engine.find('#')));
        json row = {{"engine", r.engine},
                    {"iodepth", r.iodepth},
                    {"batch", r.batch},
                    {"status", status_name(r.status)},
                    {"reason", r.reason},
                    {"io_path", info ? info->io_path : "block"},
                    {"completion", info ? info->completion : "interrupt"}};
        if (r.status == Row::ok) {
            row.update({
                {"note", r.note},
                {"interrupted", r.interrupted},
                {"runs", r.runs},
                {"ios", r.ios},
                {"runtime_s", r.seconds},
                {"ios_per_s", r.iops},
                {"ios_per_s_min", r.iops_min},
                {"ios_per_s_max", r.iops_max},
                {"ios_per_s_low", r.iops_low},
                {"ios_per_s_high", r.iops_high},
                {"interval_covered", r.interval_covered},
                {"bytes_per_s", r.bw_bytes},
                {"lat_ns",
                 {{"mean", r.lat_ns.mean},
                  {"p50", r.lat_ns.p50},
                  {"p90", r.lat_ns.p90},
                  {"p99", r.lat_ns.p99},
                  {"p99_9", r.lat_ns.p99_9},
                  {"max", r.lat_ns.max}}},
                {"cpu_usr_percent", r.cpu_usr},
                {"cpu_sys_percent", r.cpu_sys},
                {"cpu_us_per_io", r.cpu_us_per_io},
                {"cpu_us_per_io_low", r.cpu_us_per_io_low},
                {"cpu_us_per_io_high", r.cpu_us_per_io_high},
                {"ran", r.ran},
                {"ctx_per_kio", r.ctx_per_kio},
                {"ctx_vol_per_kio", r.ctx_vol_per_kio},
                {"ctx_invol_per_kio", r.ctx_invol_per_kio},
                {"syscalls_per_io", r.syscalls_per_io},
                {"ios_per_submit", r.ios_per_submit},
                {"syscalls", r.syscalls},
                {"submits", r.submits},
            });
            row.update(attribution_json(r.attribution));
        }
        rows.push_back(std::move(row));
    }
    json comps = json::array();
    for (const Comparison& c : comparisons(rep))
        comps.push_back({{"a", c.a},
                         {"b", c.b},
                         {"iodepth", c.iodepth},
                         {"metric", metric_field(c.metric)},
                         {"ratio", c.ratio},
                         {"ratio_low", c.ratio_low},
                         {"ratio_high", c.ratio_high},
                         {"pairs", c.pairs},
                         {"verdict", judgement_name(c.verdict)},
                         {"why", c.why}});
    json runs = json::array();
    for (std::size_t i = 0; i < rep.results.orders.size(); ++i) {
        json figures = json::array();
        for (const RunRecord& r : rep.results.runs)
            if (r.round == i + 1) figures.push_back(run_json(r));
        runs.push_back(
            {{"round", i + 1}, {"order", rep.results.orders[i]}, {"runs", std::move(figures)}});
    }
    json doc = document::header("uringkit bench", kSchema, rep.host);
    doc["job"] = std::move(job);
    doc["storage"] = std::move(storage);
    // The file's unit of work is the storage's as much as the machine's, so
    // the ceiling is an object of its own rather than part of `host`.
    const Ceiling& ceiling = rep.host.ceiling;
    doc["ceiling"] = ceiling.measured() ? json{{"syscall_ns", ceiling.syscall_ns},
                                               {"pread_ns", ceiling.pread_ns},
                                               {"unit", ceiling.unit},
                                               {"estimate", ceiling.gain()}}
                                        : json(nullptr);
    doc["rows"] = std::move(rows);
    doc["verdict"] = verdict(rep);
    doc["comparisons"] = std::move(comps);
    doc["runs"] = std::move(runs);
    // --no-latency: nothing was recorded, so the latency fields are null, not zero.
    if (!rep.spec.latency) {
        for (json& row : doc["rows"])
            if (row.contains("lat_ns")) row["lat_ns"] = nullptr;
        for (json& round : doc["runs"])
            for (json& run : round["runs"]) run["lat_p50_ns"] = run["lat_p99_ns"] = nullptr;
    }
    doc["notes"] = notes(rep);
    doc["offload_counter"] = {{"counted", rep.results.offload_not_counted.empty()},
                              {"why", rep.results.offload_not_counted}};
    doc["interrupted"] = rep.results.interrupted;
    doc["peak_rss_bytes"] = static_cast<std::uint64_t>(rep.results.peak_rss_kib) * 1024;
    doc["wall_s"] = rep.results.wall_s;
    return doc.dump(2) + "\n";
}

namespace {

// The keys that moved between the saved shapes: {current, schema 1}.
struct SavedKeys {
    const char* size;
    const char* bs;
    const char* filesystem_in;  // the object that holds "filesystem"
    const char* ios_per_s;
};
constexpr SavedKeys kKeysNow{"size_bytes", "bs_bytes", "storage", "ios_per_s"};
constexpr SavedKeys kKeysV1{"size", "bs", "host", "iops"};

}  // namespace

SavedRun load_saved(const std::string& path) {
    using nlohmann::json;
    std::ifstream in(path);
    if (!in) throw OutputError(fmt::format("{}: cannot read the saved run", path));
    SavedRun saved;
    saved.name = path;
    try {
        const json doc = json::parse(in);
        const bool v1 = doc.contains("uringkit_bench_version");
        const bool now = doc.value("tool", "") == "uringkit bench" && doc.contains("schema");
        if ((!v1 && !now) || !doc.contains("runs"))
            throw OutputError(fmt::format(
                "{}: not a `uringkit bench --json` file with per-run figures (\"runs\")", path));
        if (now && doc.at("schema").get<int>() > kSchema)
            throw OutputError(fmt::format(
                "{}: written by a newer uringkit (bench schema {}; this one reads up to {})", path,
                doc.at("schema").get<int>(), kSchema));
        const SavedKeys& k = v1 ? kKeysV1 : kKeysNow;
        // Each field only where the file records it: an older one may not.
        const json& job = doc.value("job", json::object());
        if (job.contains("rw")) saved.rw = job.at("rw").get<std::string>();
        if (job.contains(k.bs)) saved.bs = job.at(k.bs).get<std::uint64_t>();
        if (job.contains(k.size)) saved.size = job.at(k.size).get<std::uint64_t>();
        if (job.contains("direct")) saved.direct = job.at("direct").get<bool>();
        if (job.contains("cache")) saved.cache = job.at("cache").get<std::string>();
        const json& storage = doc.value(k.filesystem_in, json::object());
        if (storage.contains("filesystem"))
            saved.filesystem = storage.at("filesystem").get<std::string>();
        for (const json& round : doc.at("runs"))
            for (const json& j : round.at("runs")) {
                RunRecord r;
                r.engine = j.at("engine").get<std::string>();
                r.iodepth = j.at("iodepth").get<unsigned>();
                r.round = round.at("round").get<unsigned>();
                r.position = j.value("position", 0u);
                const std::string status = j.at("status").get<std::string>();
                r.status = status == "ok"
                               ? Row::ok
                               : (status == "unavailable" ? Row::unavailable : Row::failed);
                r.ios = j.at("ios").get<std::uint64_t>();
                r.seconds = j.at("runtime_s").get<double>();
                r.iops = j.at(k.ios_per_s).get<double>();
                r.cpu_us_per_io = j.at("cpu_us_per_io").get<double>();
                saved.runs.push_back(std::move(r));
            }
    } catch (const json::exception& e) {
        throw OutputError(
            fmt::format("{}: not a `uringkit bench --json` file: {}", path, e.what()));
    }
    return saved;
}

}  // namespace uringkit::engines
