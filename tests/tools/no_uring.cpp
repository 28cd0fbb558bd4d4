// no_uring [--errno N] COMMAND [ARGS...]
// no_uring --refuse-register OPCODE [--refuse-register OPCODE ...] COMMAND [ARGS...]
// no_uring --kernel VERSION COMMAND [ARGS...]
// no_uring --fail-enter-after N [--errno N] COMMAND [ARGS...]
//
// Runs COMMAND with io_uring forbidden by a seccomp filter, the way a
// container runtime's default profile or systemd's SystemCallFilter does:
// io_uring_setup, io_uring_enter and io_uring_register fail with EPERM (or
// with errno N; --errno 38 gives ENOSYS, as a kernel built without io_uring).
// Tests use it to inject "io_uring disabled" into a real process.
// With --refuse-register only io_uring_register with those opcodes fails,
// with EINVAL, as on a kernel older than the opcodes (older_kernel.hpp).
// With --kernel 5.18, 5.19 or 6.0 io_uring_setup refuses the flags that
// kernel lacks and, before 6.0, multishot recvs complete with -EINVAL; with
// --fail-enter-after N io_uring_enter succeeds N times, then fails with EIO
// (or errno N) for good, io_uring_register too.  Both answer through a
// seccomp user-notification supervisor, this process, which stays the
// parent of COMMAND and exits with its status (uring_supervisor.hpp);
// --report then says on stderr, after COMMAND's exit, how often it refused.
#include "forbid_uring.hpp"
#include "older_kernel.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

pid_t supervised_child = -1;

// A signal meant for the command (a test stopping a server) is passed on.
void forward(int sig) {
    if (supervised_child > 0) ::kill(supervised_child, sig);
}

int supervise(const UringFaults& faults, bool report, char** argv) {
    const int listener = install_uring_notify_filter();
    if (listener < 0) {
        std::perror("no_uring: installing the seccomp user-notification filter");
        return 125;
    }
    const pid_t child = ::fork();
    if (child < 0) {
        std::perror("no_uring: fork");
        return 125;
    }
    if (child == 0) {
        ::close(listener);
        // Without its supervisor every io_uring call would fail (ENOSYS):
        // the command does not outlive this process.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        execvp(argv[0], argv);
        std::fprintf(stderr, "no_uring: %s: %s\n", argv[0], std::strerror(errno));
        _exit(127);
    }
    supervised_child = child;
    struct sigaction sa {};
    sa.sa_handler = forward;
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2})
        ::sigaction(sig, &sa, nullptr);
    // This process is filtered too (it installed the filter) but never calls
    // io_uring: it answers until the child exits (its pidfd turns readable).
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child, 0));
    UringFaultCounts counts;
    serve_uring_notifications(listener, faults, counts, pidfd);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (report)
        std::fprintf(
            stderr, "no_uring: %lu setups refused, %lu multishot recvs refused, %lu calls failed\n",
            counts.setups_refused.load(), counts.recvs_refused.load(), counts.calls_failed.load());
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

}  // namespace

int main(int argc, char** argv) {
    int arg = 1;
    unsigned err = EPERM;
    bool err_given = false;
    std::vector<unsigned> refused;
    UringFaults faults;
    bool supervised = false, report = false;
    for (;;) {
        if (arg + 1 < argc && std::strcmp(argv[arg], "--report") == 0) {
            report = true;
            ++arg;
            continue;
        }
        if (arg + 1 >= argc) break;
        if (std::strcmp(argv[arg], "--errno") == 0) {
            err = static_cast<unsigned>(std::atoi(argv[arg + 1]));
            err_given = true;
        } else if (std::strcmp(argv[arg], "--refuse-register") == 0) {
            refused.push_back(static_cast<unsigned>(std::atoi(argv[arg + 1])));
        } else if (std::strcmp(argv[arg], "--kernel") == 0) {
            if (!older_kernel_faults(argv[arg + 1], faults)) {
                std::fprintf(stderr, "no_uring: --kernel %s: not one of 5.18, 5.19, 6.0\n",
                             argv[arg + 1]);
                return 2;
            }
            supervised = true;
        } else if (std::strcmp(argv[arg], "--fail-enter-after") == 0) {
            faults.fail_enter_after = std::atol(argv[arg + 1]);
            supervised = true;
        } else {
            break;
        }
        arg += 2;
    }
    if (arg >= argc) {
        std::fprintf(
            stderr,
            "usage: no_uring [--errno N | --refuse-register OPCODE... | --kernel 5.18|5.19|6.0 | "
            "--fail-enter-after N [--errno N]] [--report] COMMAND [ARGS...]\n");
        return 2;
    }
    if (!refused.empty() && !refuse_register_opcodes(refused)) {
        std::perror("no_uring: installing the seccomp filter");
        return 125;
    }
    if (supervised) {
        faults.enter_errno = err_given ? static_cast<int>(err) : EIO;
        return supervise(faults, report, argv + arg);
    }
    if (refused.empty() && !forbid_io_uring(err, false)) {
        std::perror("no_uring: installing the seccomp filter");
        return 125;
    }
    execvp(argv[arg], argv + arg);
    std::fprintf(stderr, "no_uring: %s: %s\n", argv[arg], std::strerror(errno));
    return 127;
}
