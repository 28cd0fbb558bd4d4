#include "uringkit/sys/uapi.hpp"

#include <array>

namespace uringkit::sys {
namespace {
constexpr std::array<const char*, opcode::known_count> kOpcodeNames = {
    "nop",
    "readv",
    "writev",
    "fsync",
    "read_fixed",
    "write_fixed",
    "poll_add",
    "poll_remove",
    "sync_file_range",
    "sendmsg",
    "recvmsg",
    "timeout",
    "timeout_remove",
    "accept",
    "async_cancel",
    "link_timeout",
    "connect",
    "fallocate",
    "openat",
    "close",
    "files_update",
    "statx",
    "read",
    "write",
    "fadvise",
    "madvise",
    "send",
    "recv",
    "openat2",
    "epoll_ctl",
    "splice",
    "provide_buffers",
    "remove_buffers",
    "tee",
    "shutdown",
    "renameat",
    "unlinkat",
    "mkdirat",
    "symlinkat",
    "linkat",
    "msg_ring",
    "fsetxattr",
    "setxattr",
    "fgetxattr",
    "getxattr",
    "socket",
    "uring_cmd",
    "send_zc",
    "sendmsg_zc",
    "read_multishot",
    "waitid",
    "futex_wait",
    "futex_wake",
    "futex_waitv",
    "fixed_fd_install",
    "ftruncate",
    "bind",
    "listen",
    "recv_zc",
    "epoll_wait",
    "readv_fixed",
    "writev_fixed",
    "pipe",
};

// From the kernel's io_uring history (and liburing's man pages), in opcode order.
constexpr std::array<const char*, opcode::known_count> kOpcodeSince = {
    "5.1",  "5.1",  "5.1",  "5.1",  "5.1",  "5.1",  "5.1",  "5.1",  "5.2",  "5.3",  "5.3",
    "5.4",  "5.5",  "5.5",  "5.5",  "5.5",  "5.5",  "5.6",  "5.6",  "5.6",  "5.6",  "5.6",
    "5.6",  "5.6",  "5.6",  "5.6",  "5.6",  "5.6",  "5.6",  "5.6",  "5.7",  "5.7",  "5.7",
    "5.8",  "5.11", "5.11", "5.11", "5.15", "5.15", "5.15", "5.18", "5.19", "5.19", "5.19",
    "5.19", "5.19", "5.19", "6.0",  "6.1",  "6.7",  "6.7",  "6.7",  "6.7",  "6.7",  "6.8",
    "6.9",  "6.11", "6.11", "6.15", "6.15", "6.15", "6.15", "6.16",
};

constexpr std::array<const char*, 18> kFeatureNames = {
    "single_mmap", "nodrop",      "submit_stable",   "rw_cur_pos",   "cur_personality",
    "fast_poll",   "poll_32bits", "sqpoll_nonfixed", "ext_arg",      "native_workers",
    "rsrc_tags",   "cqe_skip",    "linked_file",     "reg_reg_ring", "recvsend_bundle",
    "min_timeout", "rw_attr",     "no_iowait",
};
}  // namespace

const char* opcode_name(unsigned op) noexcept {
    return op < kOpcodeNames.size() ? kOpcodeNames[op] : nullptr;
}

const char* opcode_since(unsigned op) noexcept {
    return op < kOpcodeSince.size() ? kOpcodeSince[op] : nullptr;
}

const char* feature_name(unsigned bit) noexcept {
    return bit < kFeatureNames.size() ? kFeatureNames[bit] : nullptr;
}

}  // namespace uringkit::sys
