#include "uringkit/sys/error.hpp"

#include <cerrno>
#include <cstring>
#include <string_view>

namespace uringkit {
namespace {
std::string message(const char* call, int err) {
    std::string m = call;
    m += ": ";
    m += std::strerror(err);
    const std::string why = explain(call, err);
    if (!why.empty()) {
        m += " (";
        m += why;
        m += ")";
    }
    return m;
}
}  // namespace

RingError::RingError(const char* call, int err)
    : std::system_error(errno_code(err)),
      call_(call),
      message_(message(call, err < 0 ? -err : err)) {}

std::string explain(const char* call, int err) {
    if (err < 0) err = -err;
    const std::string_view c = call;
    const bool setup = c == "io_uring_setup";
    // Registered (fixed) buffers: REGISTER_BUFFERS, BUFFERS2, BUFFERS_UPDATE.
    // Not a provided buffer ring (REGISTER_PBUF_RING) nor an mmap.
    const bool buffers = c.starts_with("io_uring_register(REGISTER_BUFFERS");
    const bool enter = c.starts_with("io_uring_enter");
    switch (err) {
        case ENOSYS:
            return "this kernel was built without io_uring (CONFIG_IO_URING=n)";
        case EPERM:
            if (setup)
                return "io_uring is disabled: see /proc/sys/kernel/io_uring_disabled, or a seccomp "
                       "profile (container runtime, systemd unit) forbids it";
            return "not permitted here (io_uring_disabled sysctl, seccomp, or missing capability)";
        case ENOMEM:
            // Registered buffers are pinned and, for a process without
            // CAP_IPC_LOCK, charged to its user's RLIMIT_MEMLOCK on every kernel
            // (io_account_mem).  The rings themselves were charged there before
            // 5.12, not on 6.1 (memory cgroup only), and are again on recent
            // kernels whose rings are io_uring memory regions (6.18: probe.md).
            if (buffers)
                return "registered buffers are pinned and, without CAP_IPC_LOCK, count against "
                       "RLIMIT_MEMLOCK together with the same user's other registered buffers; "
                       "raise "
                       "it (`ulimit -l`, systemd's LimitMEMLOCK) or register less memory";
            if (setup)
                return "out of memory, the memory cgroup's limit, or, without CAP_IPC_LOCK, "
                       "RLIMIT_MEMLOCK: recent kernels (6.18) and those before 5.12 charge the "
                       "rings "
                       "to it, 6.1 does not";
            return "out of memory";
        case EINVAL:
            if (setup) return "a setup flag or size this kernel does not know; try fewer flags";
            return "an argument or flag this kernel does not accept";
        case EOPNOTSUPP:
            return "this kernel or file does not support the operation";
        case EMFILE:
        case ENFILE:
            return "too many open files; raise `ulimit -n`";
        case EBUSY:
            if (enter)
                return "the completion queue is full and overflowing: the kernel takes no new "
                       "requests until completions are reaped";
            return "the resource is already registered, or the ring is busy";
        case EBADR:
            if (enter)
                return "the kernel dropped completions (the CQ overflowed and it could not keep "
                       "the "
                       "rest, or lacks IORING_FEAT_NODROP): results of requests are lost";
            return {};
        case EEXIST:
            if (enter)
                return "a SINGLE_ISSUER ring was entered from a thread other than the one that "
                       "created it";
            return {};
        case EFAULT:
            return "a buffer address is not valid user memory";
        default:
            return {};
    }
}

}  // namespace uringkit
