// fio's JSON shape for bench's figures (report_fio_json.hpp).  Field names
// and units are fio 3.33's: bw in KiB/s, runtime in ms, latency in ns,
// percentile keys with six decimals.
#include "engines/report_fio_json.hpp"

#include "uringkit/version.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <ctime>

namespace uringkit::engines {
namespace {

using json = nlohmann::ordered_json;

std::uint64_t whole(double v) {
    return v > 0 ? static_cast<std::uint64_t>(std::llround(v)) : 0;
}

// One direction (read or write) of a row: `ios` of the row's I/Os went this
// way.  The row's figures are medians over the rounds; its IOPS and
// bandwidth are split by the median run's share of I/Os in this direction.
// The latency histogram is one for all I/Os, so a direction gets `clat_ns`
// only when it is the only one (bench's clock starts where fio's clat
// does: as the I/O is handed to the kernel or the pool).
json direction(const Row& row, std::uint64_t ios, std::uint32_t bs, bool only, bool latency) {
    const double share = row.ios ? static_cast<double>(ios) / static_cast<double>(row.ios) : 0;
    const std::uint64_t bytes = ios * bs;
    const std::uint64_t bw_bytes = whole(row.bw_bytes * share);
    json j = {{"io_bytes", bytes},        {"io_kbytes", bytes / 1024},
              {"bw_bytes", bw_bytes},     {"bw", bw_bytes / 1024},
              {"iops", row.iops * share}, {"runtime", ios ? whole(row.seconds * 1e3) : 0},
              {"total_ios", ios}};
    if (only && latency && ios)
        j["clat_ns"] = {{"max", whole(row.lat_ns.max)},
                        {"mean", row.lat_ns.mean},
                        {"percentile",
                         {{"50.000000", whole(row.lat_ns.p50)},
                          {"90.000000", whole(row.lat_ns.p90)},
                          {"99.000000", whole(row.lat_ns.p99)},
                          {"99.900000", whole(row.lat_ns.p99_9)}}}};
    return j;
}

}  // namespace

void FioDocument::add(const Report& report, const std::string& job, unsigned groupid,
                      const std::vector<std::pair<std::string, std::string>>& options) {
    const std::uint32_t bs = report.spec.workload.bs;
    for (const Row& row : report.results.rows) {
        if (row.status != Row::ok || row.ios == 0) continue;
        json opts = json::object();
        for (const auto& [key, value] : options) opts[key] = value;
        opts["iodepth"] = std::to_string(row.iodepth);
        const std::uint64_t writes = std::min(row.writes, row.ios);
        const std::uint64_t reads = row.ios - writes;
        json j = {{"jobname", fmt::format("{}/{}/qd{}", job, row.engine, row.iodepth)},
                  {"groupid", groupid},
                  {"error", 0},
                  {"job options", std::move(opts)},
                  {"read", direction(row, reads, bs, writes == 0, report.results.latency)},
                  {"write", direction(row, writes, bs, reads == 0, report.results.latency)},
                  {"trim", direction(row, 0, bs, false, false)},
                  {"job_runtime", whole(row.seconds * 1e3)},
                  {"usr_cpu", row.cpu_usr},
                  {"sys_cpu", row.cpu_sys},
                  // The median run's switches per 1000 I/Os times its I/Os.
                  {"ctx", whole(row.ctx_per_kio * static_cast<double>(row.ios) / 1e3)}};
        jobs_.push_back(std::move(j));
    }
}

std::string FioDocument::str() const {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    const std::time_t now = static_cast<std::time_t>(ms / 1000);
    char when[64] = "";
    std::tm tm{};
    if (::localtime_r(&now, &tm)) std::strftime(when, sizeof when, "%a %b %e %H:%M:%S %Y", &tm);
    const json doc = {{"fio version", fmt::format("uringkit {}", version_string)},
                      {"timestamp", static_cast<std::int64_t>(now)},
                      {"timestamp_ms", static_cast<std::int64_t>(ms)},
                      {"time", when},
                      {"jobs", jobs_}};
    return doc.dump(2) + "\n";
}

}  // namespace uringkit::engines
