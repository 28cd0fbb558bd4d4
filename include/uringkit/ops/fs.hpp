// Operations on files and directories: open, close, pipes, direct
// descriptors made regular, stat, sync, allocate, truncate and advise, the
// directory entries (mkdir, symlink, link, rename, unlink) and the xattr
// calls.  Where an opcode is newer than 5.6 its comment names the release
// that added it (sys::opcode_since() has them all).
#pragma once

#include "uringkit/cxx20.hpp"
#include "uringkit/ops/prep.hpp"
#include "uringkit/sys/uapi.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>

#include <cstdint>

namespace uringkit::op {

// openat(2).  The result is a new fd, or with into_slot()/into_any_slot() the
// file goes straight into the registered file table (5.15) and never gets a
// normal descriptor: res is 0 (a chosen slot) or the slot the kernel picked.
class OpenAt {
public:
    static constexpr std::uint8_t code = IORING_OP_OPENAT;
    OpenAt(int dirfd, const char* path, int flags, mode_t mode = 0) noexcept
        : dirfd_(dirfd), path_(path), flags_(flags), mode_(mode) {}
    OpenAt& into_slot(unsigned index) noexcept {
        slot_ = index + 1;
        return *this;
    }
    OpenAt& into_any_slot() noexcept {
        slot_ = IORING_FILE_INDEX_ALLOC;
        return *this;
    }
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = dirfd_;
        s.addr = reinterpret_cast<std::uintptr_t>(path_);
        s.len = mode_;
        s.open_flags = static_cast<std::uint32_t>(flags_);
        s.file_index = slot_;
    }

private:
    int dirfd_;
    const char* path_;
    int flags_;
    mode_t mode_;
    std::uint32_t slot_ = 0;  // 0: a normal fd; otherwise slot+1 or IORING_FILE_INDEX_ALLOC
};

// openat2(2) with its struct open_how (5.6); `how` must live until the completion.
class OpenAt2 {
public:
    static constexpr std::uint8_t code = IORING_OP_OPENAT2;
    OpenAt2(int dirfd, const char* path, const open_how* how) noexcept
        : dirfd_(dirfd), path_(path), how_(how) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = dirfd_;
        s.addr = reinterpret_cast<std::uintptr_t>(path_);
        s.len = sizeof(open_how);
        s.off = reinterpret_cast<std::uintptr_t>(how_);
    }

private:
    int dirfd_;
    const char* path_;
    const open_how* how_;
};

// close(2) of a descriptor, or removal of a registered slot (Fixed, 5.15).
class Close {
public:
    static constexpr std::uint8_t code = IORING_OP_CLOSE;
    explicit Close(File f) noexcept : f_(f) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        if (f_.fixed())
            s.file_index = static_cast<std::uint32_t>(f_.raw()) + 1;
        else
            s.fd = f_.raw();
    }

private:
    File f_;
};

// A regular descriptor for registered slot `slot` (IORING_OP_FIXED_FD_INSTALL,
// 6.8): res is the new fd, close-on-exec unless .no_cloexec().  The slot
// keeps its file too.  Only a Fixed slot is accepted: the opcode reads the
// file through IOSQE_FIXED_FILE, so a plain fd could not be meant.
class FixedFdInstall {
public:
    static constexpr std::uint8_t code = sys::opcode::fixed_fd_install;
    explicit FixedFdInstall(Fixed slot) noexcept : f_(slot) {}
    FixedFdInstall& no_cloexec() noexcept {
        flags_ = IORING_FIXED_FD_NO_CLOEXEC;
        return *this;
    }
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.rw_flags = static_cast<int>(flags_);  // install_fd_flags (the 6.1 header lacks the name)
    }

private:
    File f_;
    std::uint32_t flags_ = 0;
};

// pipe2(2) (IORING_OP_PIPE, 6.16): writes the read and the write end to
// fds[0] and fds[1] (which must live until the completion); `flags`:
// O_CLOEXEC, O_NONBLOCK, O_DIRECT.  With into_slot()/into_any_slot() both
// ends go into the registered file table instead (O_CLOEXEC refused) and
// fds receives their slots: into_slot(i) takes slots i and i+1.
class Pipe {
public:
    static constexpr std::uint8_t code = sys::opcode::pipe;
    explicit Pipe(int* fds, int flags = 0) noexcept : fds_(fds), flags_(flags) {}
    Pipe& into_slot(unsigned index) noexcept {
        slot_ = index + 1;
        return *this;
    }
    Pipe& into_any_slot() noexcept {
        slot_ = IORING_FILE_INDEX_ALLOC;
        return *this;
    }
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.addr = reinterpret_cast<std::uintptr_t>(fds_);
        s.rw_flags = flags_;  // pipe_flags (the 6.1 header lacks the name)
        s.file_index = slot_;
    }

private:
    int* fds_;
    int flags_;
    std::uint32_t slot_ = 0;
};

// statx(2) into `out`.
class Statx {
public:
    static constexpr std::uint8_t code = IORING_OP_STATX;
    Statx(int dirfd, const char* path, int flags, unsigned mask, struct statx* out) noexcept
        : dirfd_(dirfd), path_(path), flags_(flags), mask_(mask), out_(out) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = dirfd_;
        s.addr = reinterpret_cast<std::uintptr_t>(path_);
        s.len = mask_;
        s.off = reinterpret_cast<std::uintptr_t>(out_);
        s.statx_flags = static_cast<std::uint32_t>(flags_);
    }

private:
    int dirfd_;
    const char* path_;
    int flags_;
    unsigned mask_;
    struct statx* out_;
};

// fsync(2), or fdatasync(2) with .datasync().
class Fsync {
public:
    static constexpr std::uint8_t code = IORING_OP_FSYNC;
    explicit Fsync(File f) noexcept : f_(f) {}
    Fsync& datasync() noexcept {
        flags_ = IORING_FSYNC_DATASYNC;
        return *this;
    }
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.fsync_flags = flags_;
    }

private:
    File f_;
    std::uint32_t flags_ = 0;
};

// A byte range of a file and one more argument, in the field that is
// sync_range_flags for sync_file_range(2) and fadvise_advice for
// posix_fadvise(2): the two encode alike.
template <std::uint8_t Code, class Arg>
class BasicRange {
public:
    static constexpr std::uint8_t code = Code;
    BasicRange(File f, std::uint64_t offset, std::uint32_t len, Arg arg) noexcept
        : f_(f), off_(offset), len_(len), arg_(arg) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.off = off_;
        s.len = len_;
        s.sync_range_flags = static_cast<std::uint32_t>(arg_);
    }

private:
    File f_;
    std::uint64_t off_;
    std::uint32_t len_;
    Arg arg_;
};
// sync_file_range(2) (5.2): SYNC_FILE_RANGE_WRITE ... over [offset, offset+len).
using SyncFileRange = BasicRange<IORING_OP_SYNC_FILE_RANGE, unsigned>;

// fallocate(2).  The SQE encoding is odd: the mode goes in len, the length in addr.
class Fallocate {
public:
    static constexpr std::uint8_t code = IORING_OP_FALLOCATE;
    Fallocate(File f, int mode, std::uint64_t offset, std::uint64_t length) noexcept
        : f_(f), mode_(mode), off_(offset), len_(length) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.off = off_;
        s.addr = len_;
        s.len = static_cast<std::uint32_t>(mode_);
    }

private:
    File f_;
    int mode_;
    std::uint64_t off_;
    std::uint64_t len_;
};

// ftruncate(2) (6.9).
class Ftruncate {
public:
    static constexpr std::uint8_t code = sys::opcode::ftruncate;
    Ftruncate(File f, std::uint64_t length) noexcept : f_(f), len_(length) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.off = len_;
    }

private:
    File f_;
    std::uint64_t len_;
};

// posix_fadvise(2) (5.6): POSIX_FADV_DONTNEED ... over [offset, offset+len).
using Fadvise = BasicRange<IORING_OP_FADVISE, int>;

// mkdirat(2) (5.15).
class MkdirAt {
public:
    static constexpr std::uint8_t code = IORING_OP_MKDIRAT;
    MkdirAt(int dirfd, const char* path, mode_t mode) noexcept
        : dirfd_(dirfd), path_(path), mode_(mode) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = dirfd_;
        s.addr = reinterpret_cast<std::uintptr_t>(path_);
        s.len = mode_;
    }

private:
    int dirfd_;
    const char* path_;
    mode_t mode_;
};

// symlinkat(2) (5.15): a link at (newdirfd, linkpath) pointing to `target`.
class SymlinkAt {
public:
    static constexpr std::uint8_t code = IORING_OP_SYMLINKAT;
    SymlinkAt(const char* target, int newdirfd, const char* linkpath) noexcept
        : target_(target), dirfd_(newdirfd), path_(linkpath) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = dirfd_;
        s.addr = reinterpret_cast<std::uintptr_t>(target_);
        s.addr2 = reinterpret_cast<std::uintptr_t>(path_);
    }

private:
    const char* target_;
    int dirfd_;
    const char* path_;
};

// Two paths, each relative to its directory: linkat(2) and renameat2(2)
// encode them alike (the old in fd and addr, the new in len and addr2, the
// flags in the field that is hardlink_flags for one and rename_flags for
// the other).
template <std::uint8_t Code, class Flags>
class BasicPathPair {
public:
    static constexpr std::uint8_t code = Code;
    BasicPathPair(int old_dirfd, const char* old_path, int new_dirfd, const char* new_path,
                  Flags flags = 0) noexcept
        : old_dirfd_(old_dirfd),
          old_path_(old_path),
          new_dirfd_(new_dirfd),
          new_path_(new_path),
          flags_(flags) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = old_dirfd_;
        s.addr = reinterpret_cast<std::uintptr_t>(old_path_);
        s.len = static_cast<std::uint32_t>(new_dirfd_);
        s.addr2 = reinterpret_cast<std::uintptr_t>(new_path_);
        s.rename_flags = static_cast<std::uint32_t>(flags_);
    }

private:
    int old_dirfd_;
    const char* old_path_;
    int new_dirfd_;
    const char* new_path_;
    Flags flags_;
};
// linkat(2) (5.15).
using LinkAt = BasicPathPair<IORING_OP_LINKAT, int>;
// renameat2(2) (5.11); flags: RENAME_NOREPLACE, RENAME_EXCHANGE.
using RenameAt = BasicPathPair<IORING_OP_RENAMEAT, unsigned>;

// unlinkat(2) (5.11); flags: AT_REMOVEDIR.
class UnlinkAt {
public:
    static constexpr std::uint8_t code = IORING_OP_UNLINKAT;
    UnlinkAt(int dirfd, const char* path, int flags = 0) noexcept
        : dirfd_(dirfd), path_(path), flags_(flags) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = dirfd_;
        s.addr = reinterpret_cast<std::uintptr_t>(path_);
        s.unlink_flags = static_cast<std::uint32_t>(flags_);
    }

private:
    int dirfd_;
    const char* path_;
    int flags_;
};

// fgetxattr(2) (5.19): the value of attribute `name` of `f` into `value`
// (`size` bytes; 0 asks only for its length).  res: the value's length, or
// -ERANGE when `size` is too small, -ENODATA when there is none.  `name`
// and `value` must live until the completion.
class FGetXattr {
public:
    static constexpr std::uint8_t code = IORING_OP_FGETXATTR;
    FGetXattr(File f, const char* name, void* value, std::uint32_t size) noexcept
        : f_(f), name_(name), value_(value), size_(size) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.addr = reinterpret_cast<std::uintptr_t>(name_);
        s.addr2 = reinterpret_cast<std::uintptr_t>(value_);
        s.len = size_;
    }

private:
    File f_;
    const char* name_;
    void* value_;
    std::uint32_t size_;
};

// fsetxattr(2) (5.19): `flags` 0, XATTR_CREATE or XATTR_REPLACE.
class FSetXattr {
public:
    static constexpr std::uint8_t code = IORING_OP_FSETXATTR;
    FSetXattr(File f, const char* name, const void* value, std::uint32_t size,
              int flags = 0) noexcept
        : f_(f), name_(name), value_(value), size_(size), flags_(flags) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.addr = reinterpret_cast<std::uintptr_t>(name_);
        s.addr2 = reinterpret_cast<std::uintptr_t>(value_);
        s.len = size_;
        s.xattr_flags = static_cast<std::uint32_t>(flags_);
    }

private:
    File f_;
    const char* name_;
    const void* value_;
    std::uint32_t size_;
    int flags_;
};

// getxattr(2) by path (5.19).  A symbolic link is followed (there is no
// lgetxattr opcode): use it on paths known not to be links.
class GetXattr {
public:
    static constexpr std::uint8_t code = IORING_OP_GETXATTR;
    GetXattr(const char* path, const char* name, void* value, std::uint32_t size) noexcept
        : path_(path), name_(name), value_(value), size_(size) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.addr = reinterpret_cast<std::uintptr_t>(name_);
        s.addr2 = reinterpret_cast<std::uintptr_t>(value_);
        s.addr3 = reinterpret_cast<std::uintptr_t>(path_);
        s.len = size_;
    }

private:
    const char* path_;
    const char* name_;
    void* value_;
    std::uint32_t size_;
};

// setxattr(2) by path (5.19); follows a symbolic link, as GetXattr.
class SetXattr {
public:
    static constexpr std::uint8_t code = IORING_OP_SETXATTR;
    SetXattr(const char* path, const char* name, const void* value, std::uint32_t size,
             int flags = 0) noexcept
        : path_(path), name_(name), value_(value), size_(size), flags_(flags) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.addr = reinterpret_cast<std::uintptr_t>(name_);
        s.addr2 = reinterpret_cast<std::uintptr_t>(value_);
        s.addr3 = reinterpret_cast<std::uintptr_t>(path_);
        s.len = size_;
        s.xattr_flags = static_cast<std::uint32_t>(flags_);
    }

private:
    const char* path_;
    const char* name_;
    const void* value_;
    std::uint32_t size_;
    int flags_;
};

}  // namespace uringkit::op
