// Directory listing and batched stat, shared by `cp -r` and `readfiles`.
//
// Linux has no io_uring opcode for getdents64 (the probe lists none up to 6.18),
// so listing a directory is open + getdents64 + close as plain system calls:
// a cost per directory, not per file, with a 64 KiB buffer taking hundreds of
// entries per call.  Everything per file (statx, open, read, write, close) is
// batched through the ring.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace uringkit {
class Ring;
}

namespace uringkit::fs {

enum class EntryType : std::uint8_t { regular, directory, symlink, other, unknown };

struct DirEntry {
    std::string name;
    EntryType type;
};

// The entries of directory `path` (without "." and ".."), sorted by name in
// byte order so every run lists a tree in the same order.  Returns 0 or -errno;
// adds the system calls it made to `syscalls`.
// With `short_read_is_eof`, also says (one fstatfs) whether the directory's
// file system is one where a short read of a regular file means end of file
// (ext4, xfs, btrfs, tmpfs, ...), unlike procfs and sysfs, whose files say
// size 0 and answer in pieces.
int read_directory(const char* path, std::vector<DirEntry>& out, std::uint64_t& syscalls,
                   bool* short_read_is_eof = nullptr);

// The same for a directory already open (from its first entry on); the
// descriptor stays open.
int read_directory_at(int fd, std::vector<DirEntry>& out, std::uint64_t& syscalls);

EntryType type_of(mode_t mode) noexcept;
const char* type_name(EntryType t) noexcept;
// "fifo", "socket", "character device", ... for a note about a skipped file.
const char* kind_name(mode_t mode) noexcept;

// statx() of many paths: through `ring` (IORING_OP_STATX, up to ring's SQ size
// in flight) when it is given, else one statx(2) each.  results[i] is 0 or
// -errno for paths[i].  `flags` are AT_* flags (AT_SYMLINK_NOFOLLOW).
// Returns 0, or the ring's error (-errno) when io_uring_enter fails for good
// (anything but CQ backpressure that eases): every path not done by then has
// that error in results[], and the ring cannot be used any more.  It never
// loops without progress, and the kernel never writes into `out` after it
// returns.
int stat_batch(Ring* ring, std::span<const char* const> paths, int flags, unsigned mask,
               std::span<struct statx> out, std::span<int> results, std::uint64_t& syscalls);

}  // namespace uringkit::fs
