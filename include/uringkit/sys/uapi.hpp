// Kernel ABI for io_uring: the installed <linux/io_uring.h> (Debian 12 ships
// the 6.1 header) plus the constants that newer kernels added.  Each one is
// guarded so a newer header wins, and carries the release that introduced it.
// A constant defined here does not mean the running kernel has the feature:
// `uringkit probe` and the tests find that out by trying.
#pragma once

#include <linux/io_uring.h>
#include "uringkit/cxx20.hpp"

#include <cstdint>

// ---- setup flags ---------------------------------------------------------
#ifndef IORING_SETUP_NO_MMAP
#define IORING_SETUP_NO_MMAP (1U << 14)  // 6.5
#endif
#ifndef IORING_SETUP_REGISTERED_FD_ONLY
#define IORING_SETUP_REGISTERED_FD_ONLY (1U << 15)  // 6.5
#endif
#ifndef IORING_SETUP_NO_SQARRAY
#define IORING_SETUP_NO_SQARRAY (1U << 16)  // 6.6
#endif
#ifndef IORING_SETUP_HYBRID_IOPOLL
#define IORING_SETUP_HYBRID_IOPOLL (1U << 17)  // 6.13: sleep before polling, then poll
#endif

// ---- features ------------------------------------------------------------
#ifndef IORING_FEAT_RSRC_TAGS
#define IORING_FEAT_RSRC_TAGS (1U << 10)  // 5.13
#endif
#ifndef IORING_FEAT_CQE_SKIP
#define IORING_FEAT_CQE_SKIP (1U << 11)  // 5.17
#endif
#ifndef IORING_FEAT_LINKED_FILE
#define IORING_FEAT_LINKED_FILE (1U << 12)  // 5.17
#endif
#ifndef IORING_FEAT_REG_REG_RING
#define IORING_FEAT_REG_REG_RING (1U << 13)  // 6.3
#endif
#ifndef IORING_FEAT_RECVSEND_BUNDLE
#define IORING_FEAT_RECVSEND_BUNDLE (1U << 14)  // 6.10
#endif
#ifndef IORING_FEAT_MIN_TIMEOUT
#define IORING_FEAT_MIN_TIMEOUT (1U << 15)  // 6.12
#endif
#ifndef IORING_FEAT_RW_ATTR
#define IORING_FEAT_RW_ATTR (1U << 16)  // 6.14
#endif
#ifndef IORING_FEAT_NO_IOWAIT
#define IORING_FEAT_NO_IOWAIT (1U << 17)  // 6.15
#endif
// cqe->flags: the provided buffer named will get more completions (a ring
// registered with IOU_PBUF_RING_INC consumes a buffer a piece at a time).
#ifndef IORING_CQE_F_BUF_MORE
#define IORING_CQE_F_BUF_MORE (1U << 4)  // 6.12
#endif
// sqe->msg_ring_flags of IORING_OP_MSG_RING: the target's CQE takes its
// flags from sqe->file_index.
#ifndef IORING_MSG_RING_FLAGS_PASS
#define IORING_MSG_RING_FLAGS_PASS (1U << 1)  // 6.3
#endif
// sqe->ioprio of a recv or send: one CQE covers several provided buffers.
#ifndef IORING_RECVSEND_BUNDLE
#define IORING_RECVSEND_BUNDLE (1U << 4)  // 6.10, with IORING_FEAT_RECVSEND_BUNDLE
#endif
// sqe->timeout_flags of IORING_OP_TIMEOUT: the timeout fires again and
// again (sqe->off times, 0: until removed), each CQE but the last with
// IORING_CQE_F_MORE.
#ifndef IORING_TIMEOUT_MULTISHOT
#define IORING_TIMEOUT_MULTISHOT (1U << 6)  // 6.4
#endif
// sqe->install_fd_flags of IORING_OP_FIXED_FD_INSTALL: the new descriptor
// is not close-on-exec (it is by default).
#ifndef IORING_FIXED_FD_NO_CLOEXEC
#define IORING_FIXED_FD_NO_CLOEXEC (1U << 0)  // 6.8
#endif

// ---- futex2 flags (<linux/futex.h> of 6.7) ------------------------------
// What IORING_OP_FUTEX_WAIT/WAKE read from sqe->fd, and each futex_waitv's
// flags: the word's size, and whether it is private to this process (the
// 6.1 header has only the futex_waitv spellings, FUTEX_32 and
// FUTEX_PRIVATE_FLAG, which are the same bits).
#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32 0x02U  // 6.7 (futex_waitv: 5.16)
#endif
#ifndef FUTEX2_PRIVATE
#define FUTEX2_PRIVATE 128U  // 6.7 (futex_waitv: 5.16, as FUTEX_PRIVATE_FLAG)
#endif

namespace uringkit::sys {

// Opcodes after IORING_OP_SENDMSG_ZC (the last one in the 6.1 header).  They
// are plain numbers in the kernel's enum, so they are spelled out here rather
// than #defined over the header's enumerators.
namespace opcode {
inline constexpr std::uint8_t read_multishot = 49;    // 6.7
inline constexpr std::uint8_t waitid = 50;            // 6.7
inline constexpr std::uint8_t futex_wait = 51;        // 6.7
inline constexpr std::uint8_t futex_wake = 52;        // 6.7
inline constexpr std::uint8_t futex_waitv = 53;       // 6.7
inline constexpr std::uint8_t fixed_fd_install = 54;  // 6.8
inline constexpr std::uint8_t ftruncate = 55;         // 6.9
inline constexpr std::uint8_t bind = 56;              // 6.11
inline constexpr std::uint8_t listen = 57;            // 6.11
inline constexpr std::uint8_t recv_zc = 58;           // 6.15
inline constexpr std::uint8_t epoll_wait = 59;        // 6.15
inline constexpr std::uint8_t readv_fixed = 60;       // 6.15
inline constexpr std::uint8_t writev_fixed = 61;      // 6.15
inline constexpr std::uint8_t pipe = 62;              // 6.16
// One past the highest opcode this build knows a name for.
inline constexpr std::uint8_t known_count = 63;
}  // namespace opcode

// Register opcodes after IORING_REGISTER_FILE_ALLOC_RANGE (6.1's last).
namespace register_op {
inline constexpr unsigned pbuf_status = 26;      // 6.8
inline constexpr unsigned napi = 27;             // 6.9
inline constexpr unsigned unregister_napi = 28;  // 6.9
inline constexpr unsigned clock = 29;            // 6.12
inline constexpr unsigned clone_buffers = 30;    // 6.12
inline constexpr unsigned send_msg_ring = 31;    // 6.13
inline constexpr unsigned zcrx_ifq = 32;         // 6.15
inline constexpr unsigned resize_rings = 33;     // 6.13
inline constexpr unsigned mem_region = 34;       // 6.13
// Flag OR-ed into the register opcode when the "fd" is a registered ring index.
inline constexpr unsigned use_registered_ring = 1U << 31;  // 6.3
}  // namespace register_op

// The IORING_ENTER_EXT_ARG block as 6.12 defines it: the 6.1 header calls
// the third field `pad`; since IORING_FEAT_MIN_TIMEOUT it is the batch wait.
struct getevents_arg {
    std::uint64_t sigmask;
    std::uint32_t sigmask_sz;
    std::uint32_t min_wait_usec;  // 6.12: return after this long if any CQE is ready
    std::uint64_t ts;
};
static_assert(sizeof(getevents_arg) == sizeof(io_uring_getevents_arg));

// Name of an opcode for people ("read_fixed"), or nullptr when unknown.
const char* opcode_name(unsigned op) noexcept;
// The Linux release that added an opcode ("5.6"), or nullptr when unknown.
const char* opcode_since(unsigned op) noexcept;

// Names of IORING_FEAT_* bits, in bit order; nullptr for unknown bits.
const char* feature_name(unsigned bit) noexcept;

}  // namespace uringkit::sys
