// no_uring [--errno N] COMMAND [ARGS...]
//
// Runs COMMAND with io_uring forbidden by a seccomp filter, the way a
// container runtime's default profile or systemd's SystemCallFilter does:
// io_uring_setup, io_uring_enter and io_uring_register fail with EPERM (or
// with errno N; --errno 38 gives ENOSYS, as a kernel built without io_uring).
// Tests use it to inject "io_uring disabled" into a real process.
#include "forbid_uring.hpp"

#include <unistd.h>

#include <cerrno>
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
    if (!forbid_io_uring(err, false)) {
        std::perror("no_uring: installing the seccomp filter");
        return 125;
    }
    execvp(argv[arg], argv + arg);
    std::fprintf(stderr, "no_uring: %s: %s\n", argv[arg], std::strerror(errno));
    return 127;
}
