// Waiting for a child process without a thread or SIGCHLD handler:
// IORING_OP_WAITID (Linux 6.7) reaps the child and says how it ended.
//
//     const pid_t pid = fork_and_exec(...);
//     async::ChildExit e = co_await async::wait_child(loop, pid);
//     if (e.exited()) use(e.status);
//
// The siginfo the kernel fills lives in wait_child's own frame, which the
// loop keeps until the operation's final completion (a loop that ends early
// cancels it first).  Before 6.7 the result is -EOPNOTSUPP and the child is
// left unreaped.
#pragma once

#include "uringkit/async/loop.hpp"
#include "uringkit/async/result.hpp"
#include "uringkit/async/task.hpp"
#include "uringkit/cxx20.hpp"

#include <signal.h>
#include <sys/types.h>

#include <stop_token>

namespace uringkit::async {

struct ChildExit {
    Result result;   // res 0 when the child was reaped; else -ECHILD, -ECANCELED, -EOPNOTSUPP
    int code = 0;    // si_code: CLD_EXITED, CLD_KILLED or CLD_DUMPED
    int status = 0;  // the exit status (CLD_EXITED), else the signal that ended it

    bool exited() const noexcept { return result.ok() && code == CLD_EXITED; }
    bool signalled() const noexcept {
        return result.ok() && (code == CLD_KILLED || code == CLD_DUMPED);
    }
};

// Waits until child `pid` ends and reaps it.  Stop `stop` on the loop's thread.
Task<ChildExit> wait_child(Loop& loop, pid_t pid, std::stop_token stop = {});

}  // namespace uringkit::async
