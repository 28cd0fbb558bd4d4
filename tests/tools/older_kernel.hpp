// A seccomp filter that makes the running kernel answer like an older one:
// io_uring_register with an opcode the older kernel does not know fails with
// EINVAL, exactly what such a kernel's io_uring_register says for an opcode
// past its IORING_REGISTER_LAST.  It runs the fallback paths of features
// newer than the oldest supported kernel on any kernel.
//
// Seccomp sees only the system call's registers, never the memory they point
// to, so setup flags (inside io_uring_params) and SQE flags cannot be
// refused by a plain filter: older_kernel_faults() below describes them for
// the user-notification supervisor (uring_supervisor.hpp), which reads that
// memory.  Like forbid_uring.hpp, the filters bind the calling thread and
// the threads it creates afterwards.
#pragma once

#include "uring_supervisor.hpp"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>
#include <string_view>
#include <vector>

// False, with errno set, when the filter cannot be installed.
inline bool refuse_register_opcodes(const std::vector<unsigned>& opcodes, unsigned err = EINVAL) {
    if (opcodes.empty() || opcodes.size() > 200) {
        errno = EINVAL;
        return false;
    }
    const auto n = static_cast<unsigned char>(opcodes.size());
    std::vector<sock_filter> f{
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_register, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        // The opcode is the second argument, an unsigned int: the low half on little-endian x86-64.
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[1])),
    };
    // Opcode i jumps over the n - 1 - i remaining comparisons and the allow to the deny.
    for (unsigned i = 0; i < n; ++i)
        f.push_back(
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, opcodes[i], static_cast<unsigned char>(n - i), 0));
    f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)));
    sock_fprog prog{static_cast<unsigned short>(f.size()), f.data()};
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
           prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

// The faults that make the running kernel's io_uring_setup and multishot
// recv answer like Linux `version` ("5.18", "5.19" or "6.0"): every setup
// flag newer than that kernel is EINVAL (flags are numbered in the order they
// arrived: COOP_TASKRUN and TASKRUN_FLAG 5.19, SINGLE_ISSUER 6.0,
// DEFER_TASKRUN 6.1, ...) and, before 6.0, a multishot recv completes with
// -EINVAL.  False for a version it does not describe.
inline bool older_kernel_faults(std::string_view version, UringFaults& out) {
    unsigned first_missing = 0;
    if (version == "5.18")
        first_missing = IORING_SETUP_COOP_TASKRUN;
    else if (version == "5.19")
        first_missing = IORING_SETUP_SINGLE_ISSUER;
    else if (version == "6.0")
        first_missing = IORING_SETUP_DEFER_TASKRUN;
    else
        return false;
    out.refuse_setup_flags = ~(first_missing - 1);
    out.refuse_multishot_recv = version != "6.0";
    return true;
}
