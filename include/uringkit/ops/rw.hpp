// Moving bytes in and out of descriptors: read and write, vectored, through
// registered buffers, into provided buffers, and splice.
#pragma once

#include "uringkit/ops/prep.hpp"

#include <sys/uio.h>

#include <cstdint>

namespace uringkit::op {

// pread(2); offset -1 means the file position (IORING_FEAT_RW_CUR_POS).
class Read {
public:
    static constexpr std::uint8_t code = IORING_OP_READ;
    Read(File f, void* buf, std::uint32_t len, std::uint64_t offset) noexcept
        : f_(f), buf_(buf), len_(len), off_(offset) {}
    Read& rw_flags(int flags) noexcept { rw_flags_ = flags; return *this; }
    void prepare(io_uring_sqe& s) const noexcept {
        detail::rw(s, code, f_, buf_, len_, off_);
        s.rw_flags = rw_flags_;
    }

private:
    File f_;
    void* buf_;
    std::uint32_t len_;
    std::uint64_t off_;
    int rw_flags_ = 0;
};

// A read into a buffer the kernel picks from a provided-buffer group: pair with
// Sqe::buffer_select(group); the completion names the buffer.
class ReadProvided {
public:
    static constexpr std::uint8_t code = IORING_OP_READ;
    ReadProvided(File f, std::uint32_t len, std::uint64_t offset) noexcept : f_(f), len_(len), off_(offset) {}
    void prepare(io_uring_sqe& s) const noexcept { detail::rw(s, code, f_, nullptr, len_, off_); }

private:
    File f_;
    std::uint32_t len_;
    std::uint64_t off_;
};

class Write {
public:
    static constexpr std::uint8_t code = IORING_OP_WRITE;
    Write(File f, const void* buf, std::uint32_t len, std::uint64_t offset) noexcept
        : f_(f), buf_(buf), len_(len), off_(offset) {}
    Write& rw_flags(int flags) noexcept { rw_flags_ = flags; return *this; }
    void prepare(io_uring_sqe& s) const noexcept {
        detail::rw(s, code, f_, buf_, len_, off_);
        s.rw_flags = rw_flags_;
    }

private:
    File f_;
    const void* buf_;
    std::uint32_t len_;
    std::uint64_t off_;
    int rw_flags_ = 0;
};

class Readv {
public:
    static constexpr std::uint8_t code = IORING_OP_READV;
    Readv(File f, const iovec* iov, unsigned count, std::uint64_t offset) noexcept
        : f_(f), iov_(iov), n_(count), off_(offset) {}
    Readv& rw_flags(int flags) noexcept { rw_flags_ = flags; return *this; }
    void prepare(io_uring_sqe& s) const noexcept {
        detail::rw(s, code, f_, iov_, n_, off_);
        s.rw_flags = rw_flags_;
    }

private:
    File f_;
    const iovec* iov_;
    unsigned n_;
    std::uint64_t off_;
    int rw_flags_ = 0;
};

class Writev {
public:
    static constexpr std::uint8_t code = IORING_OP_WRITEV;
    Writev(File f, const iovec* iov, unsigned count, std::uint64_t offset) noexcept
        : f_(f), iov_(iov), n_(count), off_(offset) {}
    Writev& rw_flags(int flags) noexcept { rw_flags_ = flags; return *this; }
    void prepare(io_uring_sqe& s) const noexcept {
        detail::rw(s, code, f_, iov_, n_, off_);
        s.rw_flags = rw_flags_;
    }

private:
    File f_;
    const iovec* iov_;
    unsigned n_;
    std::uint64_t off_;
    int rw_flags_ = 0;
};

// Read into registered buffer `buf_index`; [buf, buf+len) must lie inside it.
class ReadFixed {
public:
    static constexpr std::uint8_t code = IORING_OP_READ_FIXED;
    ReadFixed(File f, void* buf, std::uint32_t len, std::uint64_t offset, std::uint16_t buf_index) noexcept
        : f_(f), buf_(buf), len_(len), off_(offset), index_(buf_index) {}
    void prepare(io_uring_sqe& s) const noexcept {
        detail::rw(s, code, f_, buf_, len_, off_);
        s.buf_index = index_;
    }

private:
    File f_;
    void* buf_;
    std::uint32_t len_;
    std::uint64_t off_;
    std::uint16_t index_;
};

class WriteFixed {
public:
    static constexpr std::uint8_t code = IORING_OP_WRITE_FIXED;
    WriteFixed(File f, const void* buf, std::uint32_t len, std::uint64_t offset, std::uint16_t buf_index) noexcept
        : f_(f), buf_(buf), len_(len), off_(offset), index_(buf_index) {}
    void prepare(io_uring_sqe& s) const noexcept {
        detail::rw(s, code, f_, buf_, len_, off_);
        s.buf_index = index_;
    }

private:
    File f_;
    const void* buf_;
    std::uint32_t len_;
    std::uint64_t off_;
    std::uint16_t index_;
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

}  // namespace uringkit::op
