// no_uring [--errno N] COMMAND [ARGS...]
// no_uring --refuse-register OPCODE [--refuse-register OPCODE ...] COMMAND [ARGS...]
//
// Runs COMMAND with io_uring forbidden by a seccomp filter, the way a
// container runtime's default profile or systemd's SystemCallFilter does:
// io_uring_setup, io_uring_enter and io_uring_register fail with EPERM (or
// with errno N; --errno 38 gives ENOSYS, as a kernel built without io_uring).
// Tests use it to inject "io_uring disabled" into a real process.
// With --refuse-register only io_uring_register with those opcodes fails,
// with EINVAL, as on a kernel older than the opcodes (older_kernel.hpp).
#include "forbid_uring.hpp"
#include "older_kernel.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
    int arg = 1;
    unsigned err = EPERM;
    std::vector<unsigned> refused;
    if (argc > 2 && std::strcmp(argv[1], "--errno") == 0) {
        err = static_cast<unsigned>(std::atoi(argv[2]));
        arg = 3;
    }
    while (arg + 1 < argc && std::strcmp(argv[arg], "--refuse-register") == 0) {
        refused.push_back(static_cast<unsigned>(std::atoi(argv[arg + 1])));
        arg += 2;
    }
    if (arg >= argc) {
        std::fprintf(stderr, "usage: no_uring [--errno N | --refuse-register OPCODE...] COMMAND [ARGS...]\n");
        return 2;
    }
    if (!refused.empty() ? !refuse_register_opcodes(refused) : !forbid_io_uring(err, false)) {
        std::perror("no_uring: installing the seccomp filter");
        return 125;
    }
    execvp(argv[arg], argv + arg);
    std::fprintf(stderr, "no_uring: %s: %s\n", argv[arg], std::strerror(errno));
    return 127;
}
