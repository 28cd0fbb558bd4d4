// The tree a copy -r works on, and its destination directories held open.
// Internal to src/fs.
#pragma once

#include "copy_internal.hpp"
#include "fs/path_list.hpp"
#include "fs/walk.hpp"

#include <linux/stat.h>

#include <cstring>
#include <list>
#include <vector>

namespace uringkit::fs::detail {

// st_res[i] of a regular file (by the walk's d_type) whose statx is left to
// the pool's worker (copy_pool.cpp), which takes it from the descriptor it opens.
constexpr int kStatDeferred = 1;
// What cp -r needs of each entry.
constexpr unsigned kTreeStatMask = STATX_TYPE | STATX_MODE | STATX_SIZE | STATX_BLOCKS |
                                   STATX_ATIME | STATX_MTIME | STATX_UID | STATX_GID | STATX_INO |
                                   STATX_NLINK;

struct Tree {
    PathList src, dst;                // dst: the entry's path as messages name it
    std::vector<std::size_t> parent;  // index of the entry's directory; the root's is itself
    std::vector<EntryType> type;      // from the walk (the directory's d_type)
    std::vector<struct statx> st;
    std::vector<int> st_res;  // 0, -errno or kStatDeferred

    // Entry i's name in its directory (not for the root, which is entered
    // from the operand's parent).
    const char* name(std::size_t i) const noexcept {
        const char* p = dst.c_str(i);
        const char* slash = std::strrchr(p, '/');
        return slash ? slash + 1 : p;
    }
};

// The destination directories of a tree, by descriptor: each is entered
// once, when it is created (made 0700, checked to be the copier's own) or
// found there (opened O_NOFOLLOW), and everything below it is created,
// changed and removed relative to that descriptor.  A tree may have more
// directories than the process may hold descriptors: the least recently
// used one that is not pinned is closed, and opened again from its parent's
// descriptor when needed, checked to be the same directory (device, inode),
// so that too never follows a path someone else could have changed.
class HeldDirs {
public:
    HeldDirs(const Tree& t, std::uint64_t& syscalls);
    ~HeldDirs();
    HeldDirs(const HeldDirs&) = delete;
    HeldDirs& operator=(const HeldDirs&) = delete;

    // Directory i was created or entered: `fd` is held from now on (the
    // root's for good), `st` its identity.
    void hold(std::size_t i, int fd, const struct stat& st);
    // Directory i's descriptor, opened again if it was closed; -errno when
    // that fails, -ESTALE when something else is at its name now.
    int get(std::size_t i);
    // The descriptor of a directory pinned now (no reopening): safe to read
    // from other threads while nothing is pinned or unpinned.
    int held(std::size_t i) const noexcept { return fd_[i]; }
    // A pinned directory is not closed until unpinned (requests on the ring
    // and the pool's threads name its descriptor).
    void pin(std::size_t i);
    void unpin(std::size_t i);
    std::size_t pinned() const noexcept { return pinned_; }
    std::size_t budget() const noexcept { return budget_; }

private:
    void touch(std::size_t i);
    void make_room();

    const Tree& t_;
    std::uint64_t& syscalls_;
    std::vector<int> fd_;
    std::vector<unsigned> pins_;
    std::vector<std::pair<dev_t, ino_t>> id_;
    std::list<std::size_t> lru_;  // open, least recently used first
    std::vector<std::list<std::size_t>::iterator> at_;
    std::size_t open_ = 0, pinned_ = 0, budget_ = 0;
};

// "'PATH' was replaced while being copied": the message for -ESTALE.
std::string dir_failure_message(const std::string& path, int err);

// Directory `i` of the tree, `name` in the directory `pfd`: made (0700, the
// copier's own until its mode is set at the end) unless `made` says it
// already was, or entered when it is already there and `may_exist`; its
// descriptor is then held in `dirs`.  False (reported) when it is neither.
bool enter_directory(Ctx& c, const Tree& t, HeldDirs& dirs, std::size_t i, int pfd,
                     const char* name, bool made, bool may_exist, bool& created);

}  // namespace uringkit::fs::detail
