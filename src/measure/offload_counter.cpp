#include "measure/offload_counter.hpp"

#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace uringkit::measure {
namespace {

// The mount points of tracefs in /proc/self/mounts.  Looking under
// /sys/kernel/debug/tracing would mount tracefs there (an automount), so
// only what is already mounted is used.
std::vector<std::string> tracefs_mounts() {
    std::vector<std::string> out;
    std::ifstream in("/proc/self/mounts");
    for (std::string line; std::getline(in, line);) {
        std::istringstream f(line);
        std::string source, point, type;
        if (f >> source >> point >> type && type == "tracefs") out.push_back(point);
    }
    return out;
}

std::string paranoia() {
    std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
    std::string v;
    in >> v;
    return v.empty() ? "unknown" : v;
}

}  // namespace

std::uint64_t async_work_tracepoint_id(std::string& why_not) {
    const std::vector<std::string> mounts = tracefs_mounts();
    if (mounts.empty()) {
        why_not = "tracefs not mounted";
        return 0;
    }
    for (const std::string& m : mounts) {
        const std::string path = m + "/events/io_uring/io_uring_queue_async_work/id";
        std::ifstream in(path);
        if (!in) {
            why_not = fmt::format("cannot read {}: {}", path, std::strerror(errno));
            continue;
        }
        std::uint64_t id = 0;
        if (in >> id && id > 0) return id;
        why_not = fmt::format("{} holds no tracepoint id", path);
    }
    return 0;
}

TracepointCounter::~TracepointCounter() {
    close();
}

bool TracepointCounter::open(std::uint64_t id, std::span<const int> tids, std::string& why_not) {
    close();
    for (const int tid : tids) {
        perf_event_attr a{};
        a.type = PERF_TYPE_TRACEPOINT;
        a.size = sizeof a;
        a.config = id;
        a.exclude_hv = 1;
        const long fd = ::syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) {
            const int err = errno;
            why_not = fmt::format("perf_event_open: {} (perf_event_paranoid {})",
                                  std::strerror(err), paranoia());
            close();
            return false;
        }
        fds_.push_back(static_cast<int>(fd));
    }
    return true;
}

std::uint64_t TracepointCounter::read() const noexcept {
    std::uint64_t total = 0;
    for (const int fd : fds_) {
        std::uint64_t v = 0;
        if (::read(fd, &v, sizeof v) == static_cast<ssize_t>(sizeof v)) total += v;
    }
    return total;
}

void TracepointCounter::close() noexcept {
    for (const int fd : fds_) ::close(fd);
    fds_.clear();
}

}  // namespace uringkit::measure
