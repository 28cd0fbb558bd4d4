// auto: what an application should do.  A lone read that the caller waits on
// (depth 1) goes straight to pread: one system call, no ring bookkeeping, and
// for a page-cache hit nothing is faster.  Once several I/Os can be in flight
// the ring wins, because one io_uring_enter carries a whole batch, except on
// a file system whose reads io_uring never tries inline (tmpfs: no
// FMODE_NOWAIT, sys::reads_go_to_workers): there every read is handed to an
// io-wq worker, and on a 256 MiB tmpfs file at depth 32 the ring did 296k
// IOPS against pread's 665k (bench/results/tmpfs_handoff.md), so pread it is
// at every depth.
#include "internal.hpp"

#include "uringkit/sys/page_cache.hpp"

#include <linux/magic.h>
#include <sys/statfs.h>

#include <string>

namespace uringkit::engines::detail {
namespace {

class AutoJob final : public EngineJob {
public:
    AutoJob(std::unique_ptr<EngineJob> inner, const char* ran, std::string path)
        : inner_(std::move(inner)), ran_(ran), path_(std::move(path)) {}
    PhaseResult run(const Phase& ph) override { return inner_->run(ph); }
    std::string note() const override { return path_; }
    std::string_view ran() const override { return ran_; }

private:
    std::unique_ptr<EngineJob> inner_;
    const char* ran_;
    std::string path_;
};

// Why the ring would hand each read of `fd` off, naming the file system
// where it is the usual one.
std::string handoff_reason(int fd) {
    struct statfs sf {};
    const bool tmpfs = ::fstatfs(fd, &sf) == 0 && sf.f_type == TMPFS_MAGIC;
    return std::string("auto: pread (") + (tmpfs ? "tmpfs" : "this file system") +
           ": reads would go to io-wq workers)";
}

}  // namespace

std::unique_ptr<EngineJob> start_auto(const JobContext& ctx) {
    if (ctx.depth <= 1)
        return std::make_unique<AutoJob>(start_pread(ctx), "pread",
                                         "auto: pread (one I/O in flight)");
    if (sys::reads_go_to_workers(ctx.fd))
        return std::make_unique<AutoJob>(start_pread(ctx), "pread", handoff_reason(ctx.fd));
    try {
        return std::make_unique<AutoJob>(start_uring(ctx), "uring", "auto: ring");
    } catch (const EngineUnavailable&) {
        // No io_uring here: an application falls back to plain pread.
        return std::make_unique<AutoJob>(start_pread(ctx), "pread",
                                         "auto: pread (io_uring unavailable)");
    }
}

}  // namespace uringkit::engines::detail
