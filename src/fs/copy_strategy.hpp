// How each regular file's bytes travel, decided in one place
// (copy_strategy.cpp) once per (source file system, destination file system)
// pair and remembered.  Internal to src/fs.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <string>

namespace uringkit::fs::detail {

enum class CopyPath : std::uint8_t {
    reflink,  // FICLONE: the destination shares the source's extents, no data moves
    kernel,   // copy_file_range over the data extents: page cache to page cache, or on the server
    ring,     // linked read -> write pairs (copy_range.cpp), pread/pwrite without a ring
};

enum class Known : std::uint8_t { unknown, yes, no };

// What is known of one (source, destination) pair of file systems.
struct FsPair {
    dev_t src_dev = 0, dst_dev = 0;
    unsigned long src_type = 0, dst_type = 0;  // statfs f_type
    Known reflink = Known::unknown;  // FICLONE worked / was refused (EOPNOTSUPP, EXDEV, ...)
    Known kernel = Known::unknown;  // copy_file_range worked / was refused (EXDEV, EOPNOTSUPP, ...)
    // The source file system's reads would each go to an io-wq worker on the
    // ring (sys::reads_go_to_workers: tmpfs); asked once per pair.
    bool src_reads_on_workers = false;
    bool said_no_kernel = false;  // --engine kernel refused here: said once
};

class StrategyCache {
public:
    // The pair's entry, made on first sight (the caller fills the types).
    FsPair* find(dev_t src, dev_t dst) noexcept;
    FsPair& add(const FsPair& p);

private:
    std::deque<FsPair> pairs_;  // few: a linear search beats a map; references stay valid
};

// A file system whose copy_file_range may clone instead of copying
// (->remap_file_range is tried first within one file system).
bool kernel_copy_may_clone(unsigned long fs_type) noexcept;
// "ext4", "xfs", ... for messages; nullptr when unknown.
const char* fs_name(unsigned long fs_type) noexcept;
// fs_name, or "file system 0x..." when unknown.
std::string fs_label(unsigned long fs_type);

}  // namespace uringkit::fs::detail
