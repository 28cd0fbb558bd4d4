// async::wait_child (async/process.hpp): IORING_OP_WAITID with the siginfo
// in this coroutine's frame, which outlives the operation.
#include "uringkit/async/process.hpp"

#include "uringkit/ops/sync.hpp"

#include <sys/wait.h>

namespace uringkit::async {

Task<ChildExit> wait_child(Loop& loop, pid_t pid, std::stop_token stop) {
    siginfo_t info{};
    const op::Waitid wait(P_PID, static_cast<id_t>(pid), &info, WEXITED);
    ChildExit out;
    if (stop.stop_possible())
        out.result = co_await loop.submit(wait, stop);
    else
        out.result = co_await loop.submit(wait);
    if (out.result.ok()) {
        out.code = info.si_code;
        out.status = info.si_status;
    }
    co_return out;
}

}  // namespace uringkit::async
