#include "engines/ceiling.hpp"

#include "cli/size.hpp"
#include "engines/engine.hpp"
#include "engines/figures.hpp"
#include "engines/target.hpp"
#include "uringkit/util/unique_fd.hpp"

#include <fmt/format.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <ctime>
#include <map>

namespace uringkit::engines {
namespace {

constexpr unsigned kBatches = 9;

std::uint64_t thread_cpu_ns() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

// The median over kBatches of the time per call of `batch` calls of `call`:
// this thread's CPU time (`cpu`), which a busy machine's other processes do
// not inflate, or the wall clock, for a call that waits on a device.
template <class Call>
double median_ns_per_call(unsigned batch, bool cpu, Call&& call) {
    std::array<double, kBatches> per_call{};
    for (double& v : per_call) {
        const std::uint64_t t0 = cpu ? thread_cpu_ns() : now_ns();
        for (unsigned i = 0; i < batch; ++i) call(i);
        v = static_cast<double>((cpu ? thread_cpu_ns() : now_ns()) - t0) / batch;
    }
    std::nth_element(per_call.begin(), per_call.begin() + kBatches / 2, per_call.end());
    return per_call[kBatches / 2];
}

// An engine whose point is to remove system calls: the rings (and auto
// where it ran one).  threadpool and libaio make as many calls as pread.
bool ring_engine(const Row& row) {
    const std::string_view e = row.ran.empty() ? std::string_view(row.engine) : row.ran;
    return e.starts_with("uring") || e.starts_with("liburing");
}

}  // namespace

std::string format_ns(double ns) {
    if (ns < 1000) return fmt::format("{:.0f} ns", ns);
    return detail::sig3(ns / 1000) + " µs";
}

Ceiling measure_ceiling(const Target& target, const Workload& w) {
    Ceiling c;
    c.syscall_ns = median_ns_per_call(1000, true, [](unsigned) { ::syscall(SYS_getppid); });

    int fd = -1;
    try {
        fd = target.open_job_fd();
    } catch (const std::exception&) {
        return Ceiling{};
    }
    const util::UniqueFd owned(fd);
    const std::uint32_t bs = w.bs;
    // The first blocks of the workload's range (from its offset) only, at
    // most 64 KiB: the estimate needs the cost of
    // one read, not the file, and a cold run's cache is dropped after its
    // ramp anyway.
    const std::uint64_t blocks = std::max<std::uint64_t>(
        1, std::min<std::uint64_t>((w.size ? w.size : target.size()) / bs, (64 * 1024) / bs));
    void* buf = nullptr;
    if (::posix_memalign(&buf, std::max<std::uint32_t>(target.direct_align(), 4096), bs) != 0)
        return Ceiling{};
    bool ok = true;
    // preadv2 without flags is pread's read path with one iovec; it keeps
    // the pread64 calls a trace sees the engines' own (bench_syscalls_test).
    iovec iov{buf, bs};
    const auto read_block = [&](unsigned i) {
        if (::preadv2(fd, &iov, 1, static_cast<off_t>(w.offset + (i % blocks) * bs), 0) !=
            static_cast<ssize_t>(bs))
            ok = false;
    };
    for (unsigned i = 0; i < blocks; ++i) read_block(i);  // cached from here on (buffered)
    // About 1 MiB per batch (200 cached reads of 4 KiB, 16 of 64 KiB, one of
    // a larger block), so the nine batches take milliseconds whatever --bs
    // is: 200 reads of 64 MiB each once took 17 s.  An O_DIRECT read waits
    // for the device, and that wait is its cost (wall clock): at most 4.
    const auto batch = static_cast<unsigned>(
        std::clamp<std::uint64_t>((std::uint64_t{1} << 20) / bs, 1, w.direct ? 4 : 200));
    c.pread_ns = median_ns_per_call(batch, !w.direct, read_block);
    std::free(buf);
    if (!ok) return Ceiling{};
    c.unit = fmt::format("{} pread of {}", cli::format_bytes(bs),
                         w.direct ? "the device (O_DIRECT)" : "a cached block");
    return c;
}

std::vector<std::string> ceiling_lines(const Results& results,
                                       const std::vector<measure::Comparison>& comparisons,
                                       const Ceiling& ceiling, RwMode rw) {
    std::vector<std::string> lines;
    if (!ceiling.measured() || writes(rw)) return lines;
    const double gain = ceiling.gain();
    // The best ring engine against pread at each depth, among those the
    // noise rule judged faster or the same.
    std::map<unsigned, const measure::Comparison*> best;
    for (const measure::Comparison& c : comparisons) {
        if (c.b != "pread" || c.metric != measure::Metric::iops) continue;
        if (c.verdict != measure::Judgement::faster && c.verdict != measure::Judgement::same)
            continue;
        const auto row = std::find_if(results.rows.begin(), results.rows.end(), [&](const Row& r) {
            return r.engine == c.a && r.iodepth == c.iodepth && r.status == Row::ok;
        });
        if (row == results.rows.end() || !ring_engine(*row)) continue;
        const measure::Comparison*& slot = best[c.iodepth];
        if (!slot || c.ratio > slot->ratio) slot = &c;
    }
    const std::string limit = fmt::format(
        "removing every system call would give about {:.2f}x here (a system call costs {}, "
        "a {} {})",
        gain, format_ns(ceiling.syscall_ns), ceiling.unit, format_ns(ceiling.pread_ns));
    for (const auto& [depth, c] : best) {
        std::string reach;
        if (c->verdict == measure::Judgement::same)
            reach = "it is the same as pread within this run's noise";
        else if (c->ratio >= gain)
            reach =
                "it goes beyond that estimate, which leaves out the work the ring also saves "
                "inside each read (file lookups, buffer mapping, wakeups)";
        else
            reach = fmt::format("it reaches {:.0f}% of that", 100 * (c->ratio - 1) / (gain - 1));
        lines.push_back(fmt::format("{} at depth {} is {:.2f}x pread; {}: {}.", c->a, depth,
                                    c->ratio, limit, reach));
    }
    return lines;
}

}  // namespace uringkit::engines
