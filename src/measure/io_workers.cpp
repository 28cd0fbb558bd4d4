#include "measure/io_workers.hpp"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

namespace uringkit::measure {
namespace {

std::string read_small(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// CPU time of one task: schedstat's first field is ns on the CPU; stat's
// utime + stime (fields 14, 15, in clock ticks) where schedstat is absent
// (a kernel without CONFIG_SCHED_INFO): 10 ms steps, coarse but right.
std::uint64_t task_cpu_ns(const std::string& dir) {
    const std::string sched = read_small(dir + "/schedstat");
    if (!sched.empty()) return std::strtoull(sched.c_str(), nullptr, 10);
    const std::string stat = read_small(dir + "/stat");
    // The name (field 2) is in parentheses and may hold spaces: count from the last ')'.
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return 0;
    std::istringstream rest(stat.substr(close + 2));
    std::string field;
    std::uint64_t utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
        if (i == 14) utime = std::strtoull(field.c_str(), nullptr, 10);
        if (i == 15) stime = std::strtoull(field.c_str(), nullptr, 10);
    }
    const long hz = ::sysconf(_SC_CLK_TCK);
    return (utime + stime) * 1'000'000'000ull / static_cast<std::uint64_t>(hz > 0 ? hz : 100);
}

void read_switches(const std::string& dir, KernelThreadFigures& f) {
    std::istringstream status(read_small(dir + "/status"));
    for (std::string line; std::getline(status, line);) {
        std::string_view l(line);
        const auto value = [&] {
            return std::strtoull(line.c_str() + line.find(':') + 1, nullptr, 10);
        };
        if (l.starts_with("voluntary_ctxt_switches:")) f.vcsw = value();
        if (l.starts_with("nonvoluntary_ctxt_switches:")) f.ivcsw = value();
    }
}

}  // namespace

std::vector<KernelThreadFigures> kernel_threads_now() {
    std::vector<KernelThreadFigures> out;
    DIR* d = ::opendir("/proc/self/task");
    if (!d) return out;
    while (const dirent* e = ::readdir(d)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        const std::string dir = std::string("/proc/self/task/") + e->d_name;
        std::string comm = read_small(dir + "/comm");
        KernelThreadFigures f;
        if (comm.starts_with("iou-wrk-"))
            f.kind = KernelThreadKind::io_worker;
        else if (comm.starts_with("iou-sqp-"))
            f.kind = KernelThreadKind::sq_poll;
        else
            continue;
        f.tid = std::atoi(e->d_name);
        f.cpu_ns = task_cpu_ns(dir);
        read_switches(dir, f);
        out.push_back(f);
    }
    ::closedir(d);
    return out;
}

void KernelThreadTracker::begin() {
    seen_.clear();
    for (const KernelThreadFigures& f : kernel_threads_now()) seen_.push_back({f, f, true, true});
}

void KernelThreadTracker::sample() {
    for (Seen& s : seen_) s.present_now = false;
    for (const KernelThreadFigures& f : kernel_threads_now()) {
        const auto it = std::find_if(seen_.begin(), seen_.end(),
                                     [&](const Seen& s) { return s.last.tid == f.tid; });
        if (it != seen_.end()) {
            it->last = f;
            it->present_now = true;
        } else {
            // Started since begin(): all it did since it started is in the interval.
            KernelThreadFigures zero{f.tid, f.kind, 0, 0, 0};
            seen_.push_back({zero, f, false, true});
        }
    }
}

KernelThreadCost KernelThreadTracker::cost(KernelThreadKind kind) const {
    KernelThreadCost c;
    for (const Seen& s : seen_) {
        if (s.last.kind != kind) continue;
        const std::uint64_t cpu = s.last.cpu_ns - std::min(s.first.cpu_ns, s.last.cpu_ns);
        const std::uint64_t v = s.last.vcsw - std::min(s.first.vcsw, s.last.vcsw);
        const std::uint64_t iv = s.last.ivcsw - std::min(s.first.ivcsw, s.last.ivcsw);
        // A thread that only slept through the interval did not run in it.
        if (cpu == 0 && v == 0 && iv == 0) continue;
        c.cpu_s += static_cast<double>(cpu) / 1e9;
        c.vcsw += v;
        c.ivcsw += iv;
        ++c.threads;
        c.started += !s.present_at_begin;
        c.exited += !s.present_now;
    }
    return c;
}

}  // namespace uringkit::measure
