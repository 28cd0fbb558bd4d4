#include "fd_tables.hpp"

#include <algorithm>
#include <unordered_set>

namespace uringkit::replay {

FdTable& FdTables::table(std::uint32_t pid) {
    auto& t = by_pid_[pid];
    if (!t) t = std::make_shared<FdTable>();
    return *t;
}

void FdTables::spawn(std::uint32_t parent, std::uint32_t child, bool share_files) {
    auto& p = by_pid_[parent];
    if (!p) p = std::make_shared<FdTable>();
    // A copy holds the same DescriptionPtrs: after fork, parent and child
    // move one position (fork(2): "the child inherits copies of the parent's
    // set of open file descriptors ... refer to the same open file descriptions").
    by_pid_[child] = share_files ? p : std::make_shared<FdTable>(*p);
}

void FdTables::unshare(std::uint32_t pid) {
    auto& t = by_pid_[pid];
    t = t ? std::make_shared<FdTable>(*t) : std::make_shared<FdTable>();
}

DescriptionPtr FdTables::find(std::uint32_t pid, int fd) {
    const auto t = by_pid_.find(pid);
    if (t == by_pid_.end()) return nullptr;
    const auto d = t->second->fds.find(fd);
    return d == t->second->fds.end() ? nullptr : d->second;
}

std::vector<std::pair<int, DescriptionPtr>> FdTables::close_range(std::uint32_t pid,
                                                                  std::uint64_t first,
                                                                  std::uint64_t last) {
    std::vector<std::pair<int, DescriptionPtr>> closed;
    auto& fds = table(pid).fds;
    for (auto it = fds.begin(); it != fds.end();) {
        const auto fd = static_cast<std::uint64_t>(it->first);
        if (it->first >= 0 && fd >= first && fd <= last) {
            closed.emplace_back(it->first, std::move(it->second));
            it = fds.erase(it);
        } else {
            ++it;
        }
    }
    std::sort(closed.begin(), closed.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    return closed;
}

std::size_t FdTables::distinct_tables() const {
    std::unordered_set<const FdTable*> seen;
    for (const auto& [pid, t] : by_pid_) seen.insert(t.get());
    return seen.size();
}

std::size_t FdTables::descriptors() const {
    std::unordered_set<const FdTable*> seen;
    std::size_t n = 0;
    for (const auto& [pid, t] : by_pid_)
        if (seen.insert(t.get()).second) n += t->fds.size();
    return n;
}

}  // namespace uringkit::replay
