// Moving bytes in and out of descriptors: read and write, vectored, through
// registered buffers, into provided buffers (once or multishot), splice and
// tee.
#pragma once

#include "uringkit/cxx20.hpp"
#include "uringkit/ops/prep.hpp"

#include <sys/uio.h>

#include <cstdint>

namespace uringkit::op {

// The read/write family: one SQE shape (file, buffer, length, offset) for
// every opcode in it.  `Buffer` is what addr points to: the bytes (void* to
// read into, const void* to write from) or, for the vectored opcodes, the
// iovec array, whose length is then the iovec count.  The registered-buffer
// opcodes take the buffer's index as a fifth constructor argument; the
// others take .rw_flags() (RWF_NOWAIT, RWF_HIPRI, ...).
template <std::uint8_t Code, class Buffer>
class BasicReadWrite {
    static constexpr bool registered =
        Code == IORING_OP_READ_FIXED || Code == IORING_OP_WRITE_FIXED ||
        Code == sys::opcode::readv_fixed || Code == sys::opcode::writev_fixed;

public:
    static constexpr std::uint8_t code = Code;
    BasicReadWrite(File f, Buffer buf, std::uint32_t len, std::uint64_t offset) noexcept
        requires(!registered)
        : f_(f), buf_(buf), len_(len), off_(offset) {}
    BasicReadWrite(File f, Buffer buf, std::uint32_t len, std::uint64_t offset,
                   std::uint16_t buf_index) noexcept requires registered : f_(f),
                                                                           buf_(buf),
                                                                           len_(len),
                                                                           off_(offset),
                                                                           index_(buf_index) {}
    BasicReadWrite& rw_flags(int flags) noexcept requires(!registered) {
        rw_flags_ = flags;
        return *this;
    }
    void prepare(io_uring_sqe& s) const noexcept {
        detail::rw(s, code, f_, buf_, len_, off_);
        if constexpr (registered)
            s.buf_index = index_;
        else
            s.rw_flags = rw_flags_;
    }

private:
    File f_;
    Buffer buf_;
    std::uint32_t len_;
    std::uint64_t off_;
    int rw_flags_ = 0;
    std::uint16_t index_ = 0;
};

// pread(2); offset -1 means the file position (IORING_FEAT_RW_CUR_POS).
using Read = BasicReadWrite<IORING_OP_READ, void*>;
using Write = BasicReadWrite<IORING_OP_WRITE, const void*>;
using Readv = BasicReadWrite<IORING_OP_READV, const iovec*>;
using Writev = BasicReadWrite<IORING_OP_WRITEV, const iovec*>;
// Read into registered buffer `buf_index`; [buf, buf+len) must lie inside it.
using ReadFixed = BasicReadWrite<IORING_OP_READ_FIXED, void*>;
using WriteFixed = BasicReadWrite<IORING_OP_WRITE_FIXED, const void*>;
// Vectored through registered buffer `buf_index` (6.15): every iovec of the
// array must lie inside that one buffer; `len` is the iovec count, as for Readv.
using ReadvFixed = BasicReadWrite<sys::opcode::readv_fixed, const iovec*>;
using WritevFixed = BasicReadWrite<sys::opcode::writev_fixed, const iovec*>;

// A read into a buffer the kernel picks from provided-buffer group `group`
// (a BufferRing); the completion names the buffer.  Sets IOSQE_BUFFER_SELECT
// itself, as Recv::provided() does: the group is part of the operation.
class ReadProvided {
public:
    static constexpr std::uint8_t code = IORING_OP_READ;
    ReadProvided(File f, std::uint16_t group, std::uint32_t len, std::uint64_t offset) noexcept
        : f_(f), len_(len), off_(offset), group_(group) {}
    void prepare(io_uring_sqe& s) const noexcept {
        detail::rw(s, code, f_, nullptr, len_, off_);
        s.flags |= IOSQE_BUFFER_SELECT;
        s.buf_group = group_;
    }

private:
    File f_;
    std::uint32_t len_;
    std::uint64_t off_;
    std::uint16_t group_;
};

// A read that stays armed (IORING_OP_READ_MULTISHOT, 6.7): each time data
// arrives on a pollable file (a pipe, an eventfd, a tun device) the kernel
// fills a buffer of provided-buffer group `group` and posts a completion
// naming it, with IORING_CQE_F_MORE while the request goes on.  A completion
// without IORING_CQE_F_MORE ends it: EOF (res 0), -ENOBUFS (the group ran
// dry: recycle and re-arm), an error or a cancel.  A regular file gets
// -EBADFD.  Each read is up to one buffer: sqe->len stays 0, which every
// kernel reads as the buffer's size (later ones refuse anything else).
// Multishot: a ring-level operation (Loop::submit() refuses it).
class ReadMultishot {
public:
    static constexpr std::uint8_t code = sys::opcode::read_multishot;
    ReadMultishot(File f, std::uint16_t group) noexcept : f_(f), group_(group) {}
    // Where a seekable file is read from (a pipe takes 0 or -1).
    ReadMultishot& offset(std::uint64_t off) noexcept {
        off_ = off;
        return *this;
    }
    void prepare(io_uring_sqe& s) const noexcept {
        detail::rw(s, code, f_, nullptr, 0, off_);
        s.flags |= IOSQE_BUFFER_SELECT;
        s.buf_group = group_;
    }

private:
    File f_;
    std::uint16_t group_;
    std::uint64_t off_ = 0;
};

// splice(2) (5.7): `len` bytes from `in` to `out`; one side must be a pipe.
// An offset of -1 means the descriptor's own position (and is required for a pipe).
class Splice {
public:
    static constexpr std::uint8_t code = IORING_OP_SPLICE;
    Splice(int in, std::int64_t in_offset, File out, std::int64_t out_offset, std::uint32_t len,
           unsigned flags = 0) noexcept
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

// tee(2) (5.8): copies up to `len` bytes from pipe `in` to pipe `out` without
// consuming them, so `in` still holds them for its reader.  res: the bytes
// copied.  `in` is a plain descriptor unless `flags` has SPLICE_F_FD_IN_FIXED
// (then it is a registered slot), as for Splice.
class Tee {
public:
    static constexpr std::uint8_t code = IORING_OP_TEE;
    Tee(int in, File out, std::uint32_t len, unsigned flags = 0) noexcept
        : in_(in), out_(out), len_(len), flags_(flags) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        out_.apply(s);
        s.splice_fd_in = in_;
        s.len = len_;
        s.splice_flags = flags_;
    }

private:
    int in_;
    File out_;
    std::uint32_t len_;
    unsigned flags_;
};

}  // namespace uringkit::op
