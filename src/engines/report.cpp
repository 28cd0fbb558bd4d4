#include "uringkit/engines/report.hpp"

#include "uringkit/engines/engine.hpp"
#include "uringkit/util/size.hpp"

#include <fcntl.h>
#include <fmt/format.h>
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

// Three significant figures: 0.412, 4.12, 41.2, 412, 4120.
std::string sig3(double v) {
    if (v == 0) return "0";
    const double a = std::fabs(v);
    if (a < 1) return fmt::format("{:.3f}", v);
    if (a < 10) return fmt::format("{:.2f}", v);
    if (a < 100) return fmt::format("{:.1f}", v);
    return fmt::format("{:.0f}", v);
}

std::string count(double v) {
    if (v >= 1e6) return fmt::format("{:.2f}M", v / 1e6);
    if (v >= 1e4) return fmt::format("{:.1f}k", v / 1e3);
    return fmt::format("{:.0f}", v);
}

std::string ratio(double r) {
    return r >= 10  ? fmt::format("{:.0f}x", r)
           : r >= 2 ? fmt::format("{:.1f}x", r)
                    : fmt::format("{:.2f}x", r);
}

const Row* find_row(const Results& res, std::string_view engine, unsigned depth) {
    for (const Row& r : res.rows)
        if (r.engine == engine && r.iodepth == depth && r.status == Row::ok) return &r;
    return nullptr;
}

// "58% less CPU per I/O" / "12% more CPU per I/O" / "the same CPU per I/O".
std::string cpu_compare(const Row& a, const Row& b) {
    if (b.cpu_us_per_io <= 0) return "?";
    const double d = (a.cpu_us_per_io - b.cpu_us_per_io) / b.cpu_us_per_io * 100;
    if (std::fabs(d) < 3) return "about the same CPU per I/O";
    return fmt::format("{:.0f}% {} CPU per I/O ({} vs {} µs)", std::fabs(d),
                       d < 0 ? "less" : "more", sig3(a.cpu_us_per_io), sig3(b.cpu_us_per_io));
}

std::vector<unsigned> depths_of(const Results& res) {
    std::vector<unsigned> d;
    for (const Row& r : res.rows)
        if (std::find(d.begin(), d.end(), r.iodepth) == d.end()) d.push_back(r.iodepth);
    return d;
}

}  // namespace

std::string format_table(const Results& res) {
    bool ranges = false;
    for (const Row& r : res.rows) ranges |= r.runs > 1;
    std::string out = fmt::format(
        "{:<13} {:>5} {:>5} {:>9}{} {:>8}  {:>7} {:>7} {:>7} {:>7} {:>7}  {:>5} {:>5} {:>7} "
        "{:>9} {:>7} {:>6}\n",
        "engine", "depth", "batch", "IOPS", ranges ? fmt::format(" {:>15}", "(min-max)") : "",
        "MiB/s", "mean", "p50", "p99", "p99.9", "max", "usr%", "sys%", "CPU/IO", "ctx/kIO",
        "sys/IO", "IO/sub");
    out += fmt::format(
        "{:<13} {:>5} {:>5} {:>9}{} {:>8}  {:>39}  {:>5} {:>5} {:>7} {:>9} {:>7} {:>6}\n", "", "",
        "", "", ranges ? std::string(16, ' ') : "", "", "latency, µs (submit to reap)", "", "",
        "µs", "vol/inv", "", "");
    for (const Row& r : res.rows) {
        const std::string name = r.engine + (r.interrupted ? "*" : "");
        if (r.status != Row::ok) {
            out += fmt::format("{:<13} {:>5} {:>5}  {}: {}\n", name, r.iodepth, r.batch,
                               status_name(r.status), r.reason);
            continue;
        }
        const std::string range =
            ranges ? fmt::format(" {:>15}",
                                 r.runs > 1 ? count(r.iops_min) + "-" + count(r.iops_max) : "")
                   : "";
        out += fmt::format(
            "{:<13} {:>5} {:>5} {:>9}{} {:>8.1f}  {:>7} {:>7} {:>7} {:>7} {:>7}  {:>5.1f} {:>5.1f} "
            "{:>7} {:>9} "
            "{:>7} {:>6}\n",
            name, r.iodepth, r.batch, count(r.iops), range, r.bw_bytes / (1024.0 * 1024.0),
            sig3(r.lat_ns.mean / 1e3), sig3(r.lat_ns.p50 / 1e3), sig3(r.lat_ns.p99 / 1e3),
            sig3(r.lat_ns.p99_9 / 1e3), sig3(r.lat_ns.max / 1e3), r.cpu_usr, r.cpu_sys,
            sig3(r.cpu_us_per_io),
            fmt::format("{:.0f}/{:.0f}", r.ctx_vol_per_kio, r.ctx_invol_per_kio),
            sig3(r.syscalls_per_io), sig3(r.ios_per_submit));
    }
    return out;
}

std::vector<std::string> verdict(const Results& res) {
    std::vector<std::string> lines;
    for (unsigned depth : depths_of(res)) {
        std::vector<const Row*> ok;
        for (const Row& r : res.rows)
            if (r.iodepth == depth && r.status == Row::ok) ok.push_back(&r);
        if (ok.empty()) {
            lines.push_back(fmt::format("at depth {} no engine ran", depth));
            continue;
        }
        std::sort(ok.begin(), ok.end(),
                  [](const Row* a, const Row* b) { return a->iops > b->iops; });
        const Row& best = *ok.front();
        const Row* pread = find_row(res, "pread", depth);
        std::string line;
        if (ok.size() == 1) {
            line = fmt::format("at depth {} only {} ran: {} IOPS at {} µs CPU per I/O", depth,
                               best.engine, count(best.iops), sig3(best.cpu_us_per_io));
        } else if (pread && &best != pread) {
            line =
                fmt::format("at depth {} {} did {} the IOPS of pread with {}", depth, best.engine,
                            ratio(best.iops / pread->iops), cpu_compare(best, *pread));
        } else {
            const Row& second = *ok[1];
            const double pct = (best.iops / second.iops - 1) * 100;
            if (pct < 3)
                line = fmt::format(
                    "at depth {} {} and {} were even (within {:.0f}%; noise on a busy machine can "
                    "flip this)",
                    depth, best.engine, second.engine, pct);
            else
                line = fmt::format("at depth {} {} was {:.0f}% faster than {}, with {}", depth,
                                   best.engine, pct, second.engine, cpu_compare(best, second));
            if (&best == pread && depth == 1)
                line += " — expected: use pread for a single read that you wait on";
        }
        if (const Row* a = find_row(res, "auto", depth)) {
            const Row* u = find_row(res, "uring", depth);
            const Row* better =
                pread && u ? (pread->iops >= u->iops ? pread : u) : (pread ? pread : u);
            if (better && better != a)
                line += fmt::format("; auto reached {:.2f}x of {} (the better of pread and uring)",
                                    a->iops / better->iops, better->engine);
        }
        lines.push_back(line);
    }
    for (unsigned depth : depths_of(res)) {
        const Row* u = find_row(res, "uring", depth);
        const Row* l = find_row(res, "liburing", depth);
        if (u && l)
            lines.push_back(
                fmt::format("at depth {} uring did {:.2f}x the IOPS of liburing with {}", depth,
                            u->iops / l->iops, cpu_compare(*u, *l)));
    }
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
    if (has("libaio") && !rep.spec.workload.direct)
        n.push_back(
            "libaio: on buffered files io_submit does the I/O itself before returning; its depth "
            "is "
            "not concurrency");
    if (has("pread")) n.push_back("pread: one I/O at a time whatever the depth (fio's psync)");
    if (rep.spec.workload.direct)
        n.push_back("cache: O_DIRECT, the page cache is bypassed");
    else if (rep.spec.cache == Cache::cold)
        n.push_back(
            "cache: cold: the file's pages were dropped with POSIX_FADV_DONTNEED before each run");
    else
        n.push_back("cache: warm: the file was read into the page cache before timing");
    if (rep.results.interrupted)
        n.push_back("interrupted: rows marked * cover only what ran before the signal");
    // A single-threaded engine that got far less than a core was sharing the
    // CPU with other work: IOPS then reward engines with more threads.
    double least = 1e9;
    for (const Row& r : rep.results.rows)
        if (r.status == Row::ok && (r.engine == "pread" || r.engine == "uring") &&
            rep.spec.numjobs == 1 && !rep.spec.workload.direct && rep.spec.cache == Cache::warm)
            least = std::min(least, r.cpu_usr + r.cpu_sys);
    if (least < 70)
        n.push_back(fmt::format(
            "busy machine: a single-threaded engine got only {:.0f}% of a core (load average "
            "{}); engines with more threads (threadpool, uring-sqpoll) get a larger share of a "
            "contended CPU, so compare CPU per I/O rather than IOPS",
            least, rep.host.loadavg));
    return n;
}

std::string to_json(const Report& rep) {
    using nlohmann::json;
    const BenchSpec& s = rep.spec;
    json job = {
        {"filename", rep.filename},
        {"temporary", rep.temporary},
        {"size", rep.size},
        {"rw", rw_name(s.workload.rw)},
        {"rwmixread", s.workload.rwmixread},
        {"bs", s.workload.bs},
        {"iodepth", s.depths},
        {"batch", s.batch},
        {"numjobs", s.numjobs},
        {"direct", s.workload.direct},
        {"runtime", s.runtime_s},
        {"ios", s.ios},
        {"ramp", s.ramp_s},
        {"engines", s.engines},
        {"cache", s.workload.direct ? "direct" : (s.cache == Cache::warm ? "warm" : "cold")},
        {"repeat", s.repeat},
        {"seed", s.workload.seed},
        {"verify", s.workload.verify},
    };
    json host = {
        {"kernel", rep.host.kernel},
        {"cpu_model", rep.host.cpu_model},
        {"cores", rep.host.cores},
        {"io_uring_disabled",
         rep.host.io_uring_disabled < 0 ? json(nullptr) : json(rep.host.io_uring_disabled)},
        {"filesystem", rep.host.filesystem},
        {"device", rep.host.device},
        {"mount_point", rep.host.mount_point},
        {"loadavg", rep.host.loadavg},
    };
    json rows = json::array();
    for (const Row& r : rep.results.rows) {
        json row = {{"engine", r.engine},
                    {"iodepth", r.iodepth},
                    {"batch", r.batch},
                    {"status", status_name(r.status)},
                    {"reason", r.reason}};
        if (r.status == Row::ok) {
            row.update({
                {"note", r.note},
                {"interrupted", r.interrupted},
                {"runs", r.runs},
                {"ios", r.ios},
                {"runtime_s", r.seconds},
                {"iops", r.iops},
                {"iops_min", r.iops_min},
                {"iops_max", r.iops_max},
                {"bw_bytes", r.bw_bytes},
                {"lat_ns",
                 {{"mean", r.lat_ns.mean},
                  {"p50", r.lat_ns.p50},
                  {"p90", r.lat_ns.p90},
                  {"p99", r.lat_ns.p99},
                  {"p99_9", r.lat_ns.p99_9},
                  {"max", r.lat_ns.max}}},
                {"cpu_usr", r.cpu_usr},
                {"cpu_sys", r.cpu_sys},
                {"cpu_us_per_io", r.cpu_us_per_io},
                {"ctx_per_kio", r.ctx_per_kio},
                {"ctx_vol_per_kio", r.ctx_vol_per_kio},
                {"ctx_invol_per_kio", r.ctx_invol_per_kio},
                {"syscalls_per_io", r.syscalls_per_io},
                {"ios_per_submit", r.ios_per_submit},
                {"syscalls", r.syscalls},
                {"submits", r.submits},
            });
        }
        rows.push_back(std::move(row));
    }
    json doc = {{"uringkit_bench_version", 1},
                {"job", job},
                {"host", host},
                {"rows", rows},
                {"verdict", verdict(rep.results)},
                {"notes", notes(rep)},
                {"interrupted", rep.results.interrupted},
                {"peak_rss_kib", rep.results.peak_rss_kib},
                {"wall_s", rep.results.wall_s}};
    return doc.dump(2) + "\n";
}

std::string to_csv(const Results& res) {
    std::string out =
        "engine,iodepth,batch,status,reason,iops,iops_min,iops_max,bw_bytes,lat_mean_ns,lat_p50_ns,"
        "lat_p90_ns,"
        "lat_p99_ns,lat_p99_9_ns,lat_max_ns,cpu_usr,cpu_sys,cpu_us_per_io,ctx_per_kio,syscalls_per_"
        "io,"
        "ios_per_submit\n";
    auto quote = [](const std::string& s) {
        std::string q = "\"";
        for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
        return q + "\"";
    };
    for (const Row& r : res.rows) {
        out += fmt::format("{},{},{},{},{}", r.engine, r.iodepth, r.batch, status_name(r.status),
                           quote(r.reason));
        if (r.status == Row::ok)
            out += fmt::format(
                ",{:.1f},{:.1f},{:.1f},{:.0f},{:.0f},{:.0f},{:.0f},{:.0f},{:.0f},{:.0f},{:.2f},{:."
                "2f},"
                "{:.4f},{:.3f},{:.4f},{:.3f}\n",
                r.iops, r.iops_min, r.iops_max, r.bw_bytes, r.lat_ns.mean, r.lat_ns.p50,
                r.lat_ns.p90, r.lat_ns.p99, r.lat_ns.p99_9, r.lat_ns.max, r.cpu_usr, r.cpu_sys,
                r.cpu_us_per_io, r.ctx_per_kio, r.syscalls_per_io, r.ios_per_submit);
        else
            out += ",,,,,,,,,,,,,,,,\n";
    }
    return out;
}

std::string progress_line(const Progress& p) {
    std::string eta = p.eta_s >= 0 ? fmt::format("  ETA {:.0f} s", p.eta_s) : "";
    std::string when = p.run_s > 0 ? fmt::format("{:.1f}/{:.1f} s", p.elapsed_s, p.run_s)
                                   : fmt::format("{:.1f} s", p.elapsed_s);
    return fmt::format("{:<13} depth {:<5} run {}/{}  {}{}  {} IOPS{}", p.engine, p.iodepth, p.run,
                       p.runs, when, p.ramp ? " (ramp)" : "", count(p.iops), eta);
}

void check_output_path(const std::string& path) {
    // Create it exclusively only if it does not exist, then remove it again:
    // nothing is left behind and an existing file is not touched yet.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
        ::close(fd);
        ::unlink(path.c_str());
        return;
    }
    if (errno == EEXIST) {
        struct stat st;
        if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
            throw OutputError(
                fmt::format("{}: is a directory; give a file name for the output", path));
        if (::access(path.c_str(), W_OK) == 0) {
            const std::string dir =
                path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/') + 1);
            if (::access(dir.c_str(), W_OK) == 0) return;
        }
    }
    throw OutputError(fmt::format("{}: cannot write the output there: {}", path,
                                  std::strerror(errno ? errno : EACCES)));
}

void write_output(const std::string& path, const std::string& content) {
    const std::string tmp = path + ".tmp-uringkit";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw OutputError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
    std::size_t done = 0;
    int err = 0;
    while (done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            err = n < 0 ? errno : ENOSPC;
            break;
        }
        done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0 && !err) err = errno;
    if (!err && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
    if (err) {
        ::unlink(tmp.c_str());
        throw OutputError(fmt::format("{}: cannot write: {}", path, std::strerror(err)));
    }
}

}  // namespace uringkit::engines
