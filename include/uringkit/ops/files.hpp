// Typed operations on files beyond ops.hpp's core set: openat2, linkat,
// sync_file_range, ftruncate, fadvise, splice, the xattr calls.  Same shape as ops.hpp: the
// required arguments in the constructor, a `code` for the probe, prepare()
// writes every field the opcode reads.  The kernel release that added each
// opcode is in its comment (sys::opcode_since() has them all).
#pragma once

#include "uringkit/ops/ops.hpp"
#include "uringkit/sys/uapi.hpp"

#include <linux/openat2.h>

namespace uringkit::op {

// openat2(2) with its struct open_how (5.6); `how` must live until the completion.
class OpenAt2 {
public:
    static constexpr std::uint8_t code = IORING_OP_OPENAT2;
    OpenAt2(int dirfd, const char* path, const open_how* how) noexcept : dirfd_(dirfd), path_(path), how_(how) {}
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

// linkat(2) (5.15).
class LinkAt {
public:
    static constexpr std::uint8_t code = IORING_OP_LINKAT;
    LinkAt(int old_dirfd, const char* old_path, int new_dirfd, const char* new_path, int flags = 0) noexcept
        : old_dirfd_(old_dirfd), old_path_(old_path), new_dirfd_(new_dirfd), new_path_(new_path), flags_(flags) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = old_dirfd_;
        s.addr = reinterpret_cast<std::uintptr_t>(old_path_);
        s.len = static_cast<std::uint32_t>(new_dirfd_);
        s.addr2 = reinterpret_cast<std::uintptr_t>(new_path_);
        s.hardlink_flags = static_cast<std::uint32_t>(flags_);
    }

private:
    int old_dirfd_;
    const char* old_path_;
    int new_dirfd_;
    const char* new_path_;
    int flags_;
};

// sync_file_range(2) (5.2): SYNC_FILE_RANGE_WRITE ... over [offset, offset+len).
class SyncFileRange {
public:
    static constexpr std::uint8_t code = IORING_OP_SYNC_FILE_RANGE;
    SyncFileRange(File f, std::uint64_t offset, std::uint32_t len, unsigned flags) noexcept
        : f_(f), off_(offset), len_(len), flags_(flags) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.off = off_;
        s.len = len_;
        s.sync_range_flags = flags_;
    }

private:
    File f_;
    std::uint64_t off_;
    std::uint32_t len_;
    unsigned flags_;
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
class Fadvise {
public:
    static constexpr std::uint8_t code = IORING_OP_FADVISE;
    Fadvise(File f, std::uint64_t offset, std::uint32_t len, int advice) noexcept
        : f_(f), off_(offset), len_(len), advice_(advice) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.off = off_;
        s.len = len_;
        s.fadvise_advice = static_cast<std::uint32_t>(advice_);
    }

private:
    File f_;
    std::uint64_t off_;
    std::uint32_t len_;
    int advice_;
};

// splice(2) (5.7): `len` bytes from `in` to `out`; one side must be a pipe.
// An offset of -1 means the descriptor's own position (and is required for a pipe).
class Splice {
public:
    static constexpr std::uint8_t code = IORING_OP_SPLICE;
    Splice(int in, std::int64_t in_offset, File out, std::int64_t out_offset, std::uint32_t len, unsigned flags = 0) noexcept
        : in_(in), in_off_(in_offset), out_(out), out_off_(out_offset), len_(len), flags_(flags) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        out_.apply(s);
        s.off = static_cast<std::uint64_t>(out_off_);
        s.splice_fd_in = in_;
        s.splice_off_in = static_cast<std::uint64_t>(in_off_);
        s.len = len_;
        s.splice_flags = flags_;
    }

private:
    int in_;
    std::int64_t in_off_;
    File out_;
    std::int64_t out_off_;
    std::uint32_t len_;
    unsigned flags_;
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
    FSetXattr(File f, const char* name, const void* value, std::uint32_t size, int flags = 0) noexcept
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
    SetXattr(const char* path, const char* name, const void* value, std::uint32_t size, int flags = 0) noexcept
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
