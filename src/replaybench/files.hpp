// The files a replay works on (not installed): the recorded paths
// themselves, read-only unless writes are allowed, or copies made in a
// scratch directory and removed afterwards.
#pragma once

#include "replaybench/replaybench.hpp"

#include <string>
#include <vector>

namespace uringkit::replaybench::detail {

class ReplayFiles {
public:
    // Throws ReplayError: a write the user did not allow, a missing or
    // unusable file, a scratch directory that cannot be used.
    ReplayFiles(const Program& program, const Config& config);
    ~ReplayFiles();
    ReplayFiles(const ReplayFiles&) = delete;
    ReplayFiles& operator=(const ReplayFiles&) = delete;

    const std::vector<int>& fds() const noexcept { return fds_; }  // per file; -1: no step uses it
    const std::vector<std::string>& notes() const noexcept { return notes_; }
    // --cache warm: read every file's replayed range once; cold: write back
    // and drop it from the page cache (POSIX_FADV_DONTNEED, no privilege).
    void warm() const;
    void drop() const;

private:
    void release() noexcept;  // closes, and removes the scratch copies
    const Program& program_;
    std::vector<int> fds_;
    std::vector<std::string> scratch_paths_;  // removed in the destructor
    std::vector<std::string> notes_;
};

}  // namespace uringkit::replaybench::detail
