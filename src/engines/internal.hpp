// Engine entry points and helpers shared by the engine files (not installed).
#pragma once

#include "engines/engine.hpp"

#include <memory>

namespace uringkit::engines::detail {

std::unique_ptr<EngineJob> start_pread(const JobContext& ctx);
std::unique_ptr<EngineJob> start_threadpool(const JobContext& ctx);
std::unique_ptr<EngineJob> start_libaio(const JobContext& ctx);
std::unique_ptr<EngineJob> start_uring(const JobContext& ctx);
std::unique_ptr<EngineJob> start_uring_async(const JobContext& ctx);
std::unique_ptr<EngineJob> start_uring_reg(const JobContext& ctx);
std::unique_ptr<EngineJob> start_uring_sqpoll(const JobContext& ctx);
std::unique_ptr<EngineJob> start_uring_iopoll(const JobContext& ctx);
std::unique_ptr<EngineJob> start_uring_hybrid(const JobContext& ctx);
std::unique_ptr<EngineJob> start_uring_cmd(const JobContext& ctx);
std::unique_ptr<EngineJob> start_uring_cmd_reg(const JobContext& ctx);
std::unique_ptr<EngineJob> start_liburing(const JobContext& ctx);
std::unique_ptr<EngineJob> start_auto(const JobContext& ctx);

// Stores the completed count for the progress line: a relaxed store to a
// word only this job writes, once per batch.
inline void publish_progress(const Phase& ph, std::uint64_t ios) noexcept {
    if (ph.progress) ph.progress->store(ios, std::memory_order_relaxed);
}
inline bool stop_requested(const Phase& ph) noexcept {
    return ph.stop && ph.stop->load(std::memory_order_relaxed);
}

}  // namespace uringkit::engines::detail
