// no_uring [--errno N] COMMAND [ARGS...]
//
// Runs COMMAND with io_uring forbidden by a seccomp filter, the way a
// container runtime's default profile or systemd's SystemCallFilter does:
// io_uring_setup, io_uring_enter and io_uring_register fail with EPERM (or
// with errno N; --errno 38 gives ENOSYS, as a kernel built without io_uring).
// Tests use it to inject "io_uring disabled" into a real process.
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
    int arg = 1;
    unsigned err = EPERM;
    if (argc > 2 && std::strcmp(argv[1], "--errno") == 0) {
        err = static_cast<unsigned>(std::atoi(argv[2]));
        arg = 3;
    }
    if (arg >= argc) {
        std::fprintf(stderr, "usage: no_uring [--errno N] COMMAND [ARGS...]\n");
        return 2;
    }
    const unsigned deny = SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA);
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_enter, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_register, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, deny),
    };
    sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        std::perror("no_uring: installing the seccomp filter");
        return 125;
    }
    execvp(argv[arg], argv + arg);
    std::fprintf(stderr, "no_uring: %s: %s\n", argv[arg], std::strerror(errno));
    return 127;
}
