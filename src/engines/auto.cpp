// auto: what an application should do.  A lone read that the caller waits on
// (depth 1) goes straight to pread: one system call, no ring bookkeeping, and
// for a page-cache hit nothing is faster.  Once several I/Os can be in flight
// the ring wins, because one io_uring_enter carries a whole batch.
#include "internal.hpp"

namespace uringkit::engines::detail {
namespace {

class AutoJob final : public EngineJob {
public:
    AutoJob(std::unique_ptr<EngineJob> inner, const char* ran, const char* path)
        : inner_(std::move(inner)), ran_(ran), path_(path) {}
    PhaseResult run(const Phase& ph) override { return inner_->run(ph); }
    std::string note() const override { return path_; }
    std::string_view ran() const override { return ran_; }

private:
    std::unique_ptr<EngineJob> inner_;
    const char* ran_;
    const char* path_;
};

}  // namespace

std::unique_ptr<EngineJob> start_auto(const JobContext& ctx) {
    if (ctx.depth <= 1)
        return std::make_unique<AutoJob>(start_pread(ctx), "pread",
                                         "auto: pread (one I/O in flight)");
    try {
        return std::make_unique<AutoJob>(start_uring(ctx), "uring", "auto: ring");
    } catch (const EngineUnavailable&) {
        // No io_uring here: an application falls back to plain pread.
        return std::make_unique<AutoJob>(start_pread(ctx), "pread",
                                         "auto: pread (io_uring unavailable)");
    }
}

}  // namespace uringkit::engines::detail
