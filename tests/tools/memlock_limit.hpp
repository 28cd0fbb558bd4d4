// Makes the calling process an ordinary user as far as pinned memory goes:
// drops CAP_IPC_LOCK (with it the kernel skips RLIMIT_MEMLOCK accounting for
// registered buffers) and lowers RLIMIT_MEMLOCK to `bytes`.  For forked
// children of a test that runs as root.  The capability leaves the bounding
// set too, so a program the child execs does not get it back.
#pragma once

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

// nullptr on success, else what could not be done.
inline const char* limit_memlock_without_ipc_lock(rlim_t bytes) {
    if (::prctl(PR_CAPBSET_DROP, CAP_IPC_LOCK, 0, 0, 0) != 0) return "PR_CAPBSET_DROP failed";
    __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct caps[2]{};
    if (::syscall(SYS_capget, &hdr, caps) != 0) return "capget failed";
    const unsigned bit = CAP_IPC_LOCK;
    caps[bit / 32].effective &= ~(1u << (bit % 32));
    caps[bit / 32].permitted &= ~(1u << (bit % 32));
    caps[bit / 32].inheritable &= ~(1u << (bit % 32));
    if (::syscall(SYS_capset, &hdr, caps) != 0) return "capset failed";
    const rlimit lim{bytes, bytes};
    if (::setrlimit(RLIMIT_MEMLOCK, &lim) != 0) return "setrlimit failed";
    return nullptr;
}
