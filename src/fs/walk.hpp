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

// What each of a list of paths is (a `readfiles -` list, the command
// line's paths), answered as cheaply as the walk answers it for a tree:
// each path is looked up by its last component in its directory, which is
// held open while the next paths share it (`find` lists a directory's files
// together), and from the second path of one directory on, the directory is
// listed once (getdents64, as the walk does) and a name it lists as a
// regular file or a directory is taken as that without a system call, the
// walk's own rule (d_type).  Anything else (a symbolic link, a special
// file, a name the listing lacks, ".", "..") is stat'd from the directory,
// following links as stat(2) of the whole path does.
//
// The answer is the whole path's: the directory is opened by the same path
// (its symbolic links followed as the whole path's would be); when it
// cannot be opened the whole path is stat'd for the exact errno; a
// directory swapped for a symbolic link after it was opened is the race a
// walk has too (it opens by path what it listed earlier), no wider.  One per
// list; not thread-safe.
class ListedStat {
public:
    ListedStat() = default;
    ~ListedStat();
    ListedStat(const ListedStat&) = delete;
    ListedStat& operator=(const ListedStat&) = delete;

    struct Answer {
        mode_t type = 0;  // S_IFREG, S_IFDIR, or another S_IFMT value (skipped)
        // A regular file on its directory's file system, and that disk-like
        // (see read_directory): a short read is the end of the file.
        bool short_read_is_eof = false;
    };
    // 0 or -errno; adds the system calls made to `syscalls`.
    int lookup(const char* path, Answer& out, std::uint64_t& syscalls);

private:
    void enter(std::string_view prefix, std::uint64_t& syscalls);
    int stat_at(const char* path, const char* name, Answer& out, std::uint64_t& syscalls);

    int dirfd_ = -1;         // the open directory of prefix_, or -1 (failed: whole paths)
    bool readable_ = false;  // dirfd_ can be listed (not O_PATH)
    std::string prefix_;     // its path up to and including the last '/'
    bool have_prefix_ = false;
    unsigned hits_ = 0;              // paths looked up in it so far
    bool listed_ = false;            // entries_ holds its listing
    std::vector<DirEntry> entries_;  // sorted by name
    dev_t dev_ = 0;                  // the directory's device
    bool eof_ = false;               // short_read_is_eof for its files
};

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
