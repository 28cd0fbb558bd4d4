// The file a benchmark runs on: a file or block device the user named, or a
// temporary file of the requested size that is removed on every path out
// (including Ctrl-C: the writer checks the stop flag, the destructor unlinks).
#pragma once

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace uringkit::engines {

// Why a target cannot be used; the CLI maps the kind to its exit status.
class TargetError : public std::runtime_error {
public:
    enum Kind { usage, bad_input, no_space, interrupted };
    TargetError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    Kind kind() const noexcept { return kind_; }

private:
    Kind kind_;
};

struct TargetSpec {
    std::string filename;    // empty: a temporary file in `tmpdir`
    std::uint64_t size = 0;  // bytes to use (0 with a named file: all of it)
    std::uint32_t bs = 4096;
    bool direct = false;
    bool write = false;        // the workload writes
    bool allow_write = false;  // the user agreed to writes on a named file
    std::string tmpdir;        // empty: $TMPDIR or /tmp
    const std::atomic<bool>* stop = nullptr;
};

class Target {
public:
    // Validates (and for a temporary file, creates, fills and syncs) the
    // target.  Throws TargetError with one line naming the problem.
    explicit Target(const TargetSpec& spec);
    ~Target();
    Target(const Target&) = delete;
    Target& operator=(const Target&) = delete;

    const std::string& path() const noexcept { return path_; }
    bool temporary() const noexcept { return temporary_; }
    bool block_device() const noexcept { return block_device_; }
    // Every 512-byte sector carries its offset (files this tool wrote): reads can be verified.
    bool stamped() const noexcept { return temporary_; }
    std::uint64_t size() const noexcept { return size_; }  // usable bytes, a multiple of bs
    std::uint32_t direct_align() const noexcept { return direct_align_; }

    // A descriptor for one job (O_DIRECT when the spec asked for it).
    int open_job_fd() const;
    // Loads the used range into the page cache (--cache warm).
    void warm_cache() const;
    // Writes back and drops the file's cached pages (--cache cold):
    // POSIX_FADV_DONTNEED, which needs no privilege, unlike drop_caches.
    void drop_cache() const;

private:
    void create_temporary(const TargetSpec& spec);
    void remove() noexcept;

    std::string path_;
    bool temporary_ = false;
    bool block_device_ = false;
    bool direct_ = false;
    bool write_ = false;
    std::uint64_t size_ = 0;
    std::uint32_t direct_align_ = 512;
};

}  // namespace uringkit::engines
