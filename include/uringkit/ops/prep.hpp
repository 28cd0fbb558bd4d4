// What the operation headers (rw, fs, net, control) share: the field writer
// the transfers use, and what a prepared SQE asks of the kernel.  The shape
// every operation follows is described in ops.hpp.
#pragma once

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

}  // namespace uringkit::op
