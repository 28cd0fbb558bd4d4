// What the operation headers (rw, fs, net, control) share: the field writer
// the transfers use, and what a prepared SQE asks of the kernel.  The shape
// every operation follows is described in ops.hpp.
#pragma once

#include "uringkit/cxx20.hpp"
#include "uringkit/ring/sqe.hpp"
#include "uringkit/sys/uapi.hpp"

#include <cstdint>

namespace uringkit::op {

namespace detail {
inline void rw(io_uring_sqe& s, std::uint8_t code, File f, const void* addr, std::uint32_t len,
               std::uint64_t off) noexcept {
    s.opcode = code;
    f.apply(s);
    s.addr = reinterpret_cast<std::uintptr_t>(addr);
    s.len = len;
    s.off = off;
}
}  // namespace detail

// Whether a prepared SQE asks for more than one completion (multishot accept,
// recv, poll, timeout, read): such an SQE belongs in a stream.
inline bool is_multishot(const io_uring_sqe& s) noexcept {
    switch (s.opcode) {
        case IORING_OP_ACCEPT:
            return (s.ioprio & IORING_ACCEPT_MULTISHOT) != 0;
        case IORING_OP_RECV:
        case IORING_OP_RECVMSG:
            return (s.ioprio & IORING_RECV_MULTISHOT) != 0;
        case IORING_OP_POLL_ADD:
            return (s.len & IORING_POLL_ADD_MULTI) != 0;
        case IORING_OP_TIMEOUT:
            return (s.timeout_flags & IORING_TIMEOUT_MULTISHOT) != 0;
        case sys::opcode::read_multishot:
            return true;
        default:
            return false;
    }
}

}  // namespace uringkit::op
