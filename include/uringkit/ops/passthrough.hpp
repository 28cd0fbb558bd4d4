// IORING_OP_URING_CMD (5.19): a command the file's driver defines, passed
// through without a system call of its own.
//
// - SocketCmd: the socket commands (6.7: SIOCINQ, SIOCOUTQ; 6.7:
//   getsockopt/setsockopt), a 64-byte SQE like any other operation.
// - NvmeCmd: an NVMe I/O command to a namespace's generic char device
//   (/dev/ngXnY), or an admin Identify to the controller (/dev/nvmeX),
//   struct nvme_uring_cmd (72 bytes) in a 128-byte SQE: its prepare() takes
//   a BigSqe&, so only a BigRing (ring/big_ring.hpp) takes it;
//   its CQE's res is the NVMe status (0, a positive NVMe status code, or
//   -errno) and the 32-byte CQE's big[0] the command's result.
#pragma once

#include "uringkit/cxx20.hpp"
#include "uringkit/ops/prep.hpp"

#include <linux/nvme_ioctl.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace uringkit::op {

// The socket commands (include/uapi/linux/io_uring.h, enum io_uring_socket_op).
enum class SocketCommand : std::uint32_t {
    siocinq = 0,   // res: bytes waiting to be read
    siocoutq = 1,  // res: bytes not yet sent (or not yet acknowledged, TCP)
};

class SocketCmd {
public:
    static constexpr std::uint8_t code = IORING_OP_URING_CMD;
    SocketCmd(File socket, SocketCommand cmd) noexcept : f_(socket), cmd_(cmd) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.cmd_op = static_cast<std::uint32_t>(cmd_);
    }

private:
    File f_;
    SocketCommand cmd_;
};

// One NVMe I/O command (the NVM command set's read, write and flush) on the
// namespace's generic char device.  Logical blocks are the namespace's LBA
// size (nvme::Namespace::lba_size); `blocks` is at least 1 (NVMe counts
// from 0: the command carries blocks - 1), and `buf` must hold blocks *
// that size and stay valid until the completion.
class NvmeCmd {
public:
    static constexpr std::uint8_t code = IORING_OP_URING_CMD;
    // NVMe's I/O opcodes (NVM Command Set specification, figure "Opcodes for NVM Commands").
    static constexpr std::uint8_t kFlush = 0x00, kWrite = 0x01, kRead = 0x02;
    static constexpr std::uint8_t kIdentify = 0x06;  // admin command set

    static NvmeCmd read(File ng, std::uint32_t nsid, std::uint64_t first_lba, std::uint32_t blocks,
                        void* buf, std::uint32_t bytes) noexcept {
        return NvmeCmd(ng, nsid, kRead, first_lba, blocks, buf, bytes);
    }
    static NvmeCmd write(File ng, std::uint32_t nsid, std::uint64_t first_lba, std::uint32_t blocks,
                         const void* buf, std::uint32_t bytes) noexcept {
        return NvmeCmd(ng, nsid, kWrite, first_lba, blocks, const_cast<void*>(buf), bytes);
    }
    static NvmeCmd flush(File ng, std::uint32_t nsid) noexcept {
        return NvmeCmd(ng, nsid, kFlush, 0, 0, nullptr, 0);
    }
    // An admin Identify (opcode 0x06) sent to the controller's char device
    // (/dev/nvmeX, root only): `cns` 0 is the namespace's data structure
    // (its size in blocks first), 1 the controller's.  `buf` holds 4096 bytes.
    static NvmeCmd identify(File controller, std::uint32_t nsid, std::uint8_t cns,
                            void* buf) noexcept {
        NvmeCmd c(controller, nsid, kIdentify, 0, 0, buf, 4096);
        c.cmd_.cdw10 = cns;
        c.admin_ = true;
        return c;
    }
    // The buffer lies in registered buffer `index` (IORING_URING_CMD_FIXED, 6.0).
    NvmeCmd& fixed_buffer(std::uint16_t index) noexcept {
        fixed_ = true;
        buf_index_ = index;
        return *this;
    }
    // Gives up on the command after this long (0: the driver's default).
    NvmeCmd& timeout_ms(std::uint32_t ms) noexcept {
        cmd_.timeout_ms = ms;
        return *this;
    }
    const nvme_uring_cmd& command() const noexcept { return cmd_; }

    // struct nvme_uring_cmd runs past the first 64 bytes: a BigSqe only.
    void prepare(BigSqe& big) const noexcept {
        io_uring_sqe& s = big.sqe();
        s.opcode = code;
        f_.apply(s);
        s.cmd_op = admin_ ? NVME_URING_CMD_ADMIN : NVME_URING_CMD_IO;
        if (fixed_) {
            s.uring_cmd_flags = IORING_URING_CMD_FIXED;
            s.buf_index = buf_index_;
        }
        // The command starts at the SQE's cmd field (offset 48) and ends in
        // the second 64 bytes of the 128-byte slot.
        static_assert(offsetof(io_uring_sqe, cmd) + sizeof(nvme_uring_cmd) <= 128);
        std::memcpy(big.bytes() + offsetof(io_uring_sqe, cmd), &cmd_, sizeof cmd_);
    }

private:
    NvmeCmd(File f, std::uint32_t nsid, std::uint8_t opcode, std::uint64_t slba,
            std::uint32_t blocks, void* buf, std::uint32_t bytes) noexcept
        : f_(f) {
        cmd_.opcode = opcode;
        cmd_.nsid = nsid;
        cmd_.addr = reinterpret_cast<std::uintptr_t>(buf);
        cmd_.data_len = bytes;
        if (opcode == kRead || opcode == kWrite) {
            cmd_.cdw10 = static_cast<std::uint32_t>(slba);        // starting LBA, low
            cmd_.cdw11 = static_cast<std::uint32_t>(slba >> 32);  // starting LBA, high
            cmd_.cdw12 = blocks - 1;                              // 0's based count
        }
    }
    File f_;
    nvme_uring_cmd cmd_{};
    bool fixed_ = false;
    bool admin_ = false;
    std::uint16_t buf_index_ = 0;
};

}  // namespace uringkit::op
