// Moving bytes in and out of descriptors: read and write, vectored, through
// registered buffers, into provided buffers, and splice.
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
        Code == IORING_OP_READ_FIXED || Code == IORING_OP_WRITE_FIXED;

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

}  // namespace uringkit::op
