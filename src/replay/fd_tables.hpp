// Descriptor tables as the kernel keeps them: a descriptor names an open file
// description (shared by dup and across fork, holding the position and
// O_APPEND), and a table is shared by the threads that clone with
// CLONE_FILES and copied by fork, vfork and clone without it (clone(2)).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "replay/trace.hpp"

namespace uringkit::replay {

struct Description {
    enum Kind : std::uint8_t { regular, directory, other };
    Kind kind = regular;
    SkipReason reason = SkipReason::inherited_descriptor;  // why I/O on `other` is skipped
    std::uint32_t file = 0;                                // regular: index into the file table
    std::string path;                                      // directory: to resolve openat's dirfd
    bool append = false;                                   // O_APPEND: writes go to an unknown end
    std::optional<std::uint64_t> position;                 // nullopt when the trace cannot tell
};
using DescriptionPtr = std::shared_ptr<Description>;

struct FdTable {
    std::unordered_map<int, DescriptionPtr> fds;
};

class FdTables {
public:
    bool has(std::uint32_t pid) const { return by_pid_.count(pid) != 0; }
    // The pid's table, a new empty one if the pid has none yet.
    FdTable& table(std::uint32_t pid);
    // After clone/fork: the child shares the parent's table (CLONE_FILES) or
    // gets a copy of it whose descriptors still name the same descriptions.
    void spawn(std::uint32_t parent, std::uint32_t child, bool share_files);
    // unshare(CLONE_FILES) and close_range(CLOSE_RANGE_UNSHARE): a private copy.
    void unshare(std::uint32_t pid);
    void exit(std::uint32_t pid) { by_pid_.erase(pid); }

    DescriptionPtr find(std::uint32_t pid, int fd);
    void set(std::uint32_t pid, int fd, DescriptionPtr d) { table(pid).fds[fd] = std::move(d); }
    void close(std::uint32_t pid, int fd) { table(pid).fds.erase(fd); }
    // Removes [first, last] and returns what was closed, lowest fd first.
    std::vector<std::pair<int, DescriptionPtr>> close_range(std::uint32_t pid, std::uint64_t first,
                                                            std::uint64_t last);

    std::size_t live_threads() const { return by_pid_.size(); }
    std::size_t distinct_tables() const;
    std::size_t descriptors() const;  // over distinct tables

private:
    std::unordered_map<std::uint32_t, std::shared_ptr<FdTable>> by_pid_;
};

}  // namespace uringkit::replay
