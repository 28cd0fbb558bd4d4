// uring-reg: registered file and buffers.  The file table entry spares the
// kernel an fd lookup and reference per I/O; the registered buffer spares it
// pinning and mapping the user pages per I/O (which matters most for O_DIRECT).
#include "uring_loop.hpp"

#include "uringkit/ops/ops.hpp"

#include "cli/size.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/uio.h>

#include <cerrno>
#include <string>

namespace uringkit::engines {

// Registered buffers stay pinned while registered, and the kernel charges
// them to RLIMIT_MEMLOCK unless the process has CAP_IPC_LOCK (every kernel
// with io_uring; unlike the rings themselves, whose memlock charge ended in
// 5.12).  Say what was asked for against what the limit allows.
std::string memlock_refusal(std::size_t bytes) {
    rlimit rl{};
    const bool known = ::getrlimit(RLIMIT_MEMLOCK, &rl) == 0;
    const std::string limit = !known                         ? "unknown"
                              : rl.rlim_cur == RLIM_INFINITY ? "unlimited"
                                                             : cli::format_bytes(rl.rlim_cur);
    return fmt::format(
        "registering {} of I/O buffers: ENOMEM: registered buffers are pinned and count against "
        "RLIMIT_MEMLOCK ({}, less what this process has locked already); raise it with `ulimit "
        "-l`, or lower --iodepth or --bs",
        cli::format_bytes(bytes), limit);
}

}  // namespace uringkit::engines

namespace uringkit::engines::detail {
namespace {

class UringRegJob final : public UringJobBase {
public:
    explicit UringRegJob(const JobContext& ctx)
        : UringJobBase(ctx), ring_(make_ring(ctx.depth, lean_ring_options())) {
        register_or_unavailable([&] {
            const int fds[] = {ctx.fd};
            ring_.register_files(fds);
        });
        // One registered buffer spanning every slot: buf_index 0 for all,
        // and no limit on depth from the 16,384-entry buffer table.
        const iovec iov{buffers_.data(), buffers_.bytes()};
        try {
            ring_.register_buffers({&iov, 1});
        } catch (const RingError& e) {
            if (e.code().value() == ENOMEM) throw EngineUnavailable(memlock_refusal(iov.iov_len));
            throw EngineUnavailable(e.what());
        }
    }

    PhaseResult run(const Phase& ph) override {
        const std::uint32_t bs = w_.bs;
        return run_loop(ring_, ph, [&](Ring& ring, unsigned s, const Io& io) {
            void* buf = buffers_.slot(s);
            io_uring_sqe* sqe = next_sqe(ring);
            if (!sqe) return false;
            if (io.write)
                op::WriteFixed(Fixed{0}, buf, bs, io.offset, 0).prepare(*sqe);
            else
                op::ReadFixed(Fixed{0}, buf, bs, io.offset, 0).prepare(*sqe);
            sqe->user_data = s;
            return true;
        });
    }

private:
    Ring ring_;
};

}  // namespace

std::unique_ptr<EngineJob> start_uring_reg(const JobContext& ctx) {
    return std::make_unique<UringRegJob>(ctx);
}

}  // namespace uringkit::engines::detail
