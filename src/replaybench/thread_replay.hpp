// One trace thread's replay on one engine (not installed): what a replay
// thread is given and what it hands back.  replay_sync.cpp and
// replay_uring.cpp each implement replay_thread_* below.
#pragma once

#include "measure/histogram.hpp"
#include "measure/io_workers.hpp"
#include "replaybench/replaybench.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace uringkit::replaybench::detail {

// Every replay thread sets up (its ring, its buffers), then waits here; the
// run's clock and its CPU count start when the last one arrives and the CPU
// count ends when the last one finishes, so neither set-up nor tear-down
// (ring creation, buffer fill, unmapping) is measured.
class StartGate {
public:
    explicit StartGate(std::size_t threads) : waiting_(threads), running_(threads) {}
    // Called once by each thread after its set-up (or its failure): returns
    // the common start, CLOCK_MONOTONIC.
    std::uint64_t arrive_and_wait() noexcept;
    // Called once by each thread when its last step has completed, before
    // its tear-down.
    void finish() noexcept;
    // The process's user + system CPU between the start and the last finish
    // (the poll threads of uring-sqpoll included).
    double cpu_seconds() const noexcept { return cpu_end_ - cpu_start_; }
    // The io-wq workers' share of it (io_workers.hpp), over the same span.
    // Each thread samples them as it finishes, while its ring (and so its
    // workers, which exit with their thread) still exists.
    measure::KernelThreadCost io_workers() const {
        return kernel_threads_.cost(measure::KernelThreadKind::io_worker);
    }

private:
    std::mutex kernel_threads_lock_;  // taken at the start and at each finish only
    measure::KernelThreadTracker kernel_threads_;
    std::atomic<std::size_t> waiting_, running_;
    std::atomic<std::uint64_t> start_{0};
    double cpu_start_ = 0, cpu_end_ = 0;
};

struct ThreadJob {
    const Program* program = nullptr;
    std::size_t thread = 0;
    Mode mode = Mode::as_recorded;
    unsigned depth = 1;  // steps in flight at most (1 for as_recorded)
    unsigned loops = 1;
    const std::vector<int>* fds = nullptr;  // per file
    StartGate* gate = nullptr;
    std::int64_t loop_span_ns = 0;   // timed: how far each loop's times are shifted
    std::uint64_t max_io_bytes = 0;  // longest read/write replayed (longer ones are clamped)
    bool verify = false;
    bool sqpoll = false;      // uring engine: with a submission poll thread
    bool registered = false;  // uring engine: registered files and buffers
    const std::atomic<bool>* stop = nullptr;
    std::vector<OrderLog::Entry>* order = nullptr;  // tests: per step index
};

struct ThreadResult {
    std::uint64_t ios = 0, bytes = 0, syscalls = 0;
    std::uint64_t short_ios = 0, verify_failures = 0;
    std::uint64_t start_ns = 0;  // the gate's start
    std::uint64_t end_ns = 0;    // when its last step completed
    measure::LatencyHistogram latency;
    std::string error;        // the first failed step
    std::string unavailable;  // the engine cannot run here (ring setup refused)
};

// pread (and auto at depth 1): one system call at a time.
ThreadResult replay_thread_sync(const ThreadJob& job);
// uring, uring-sqpoll, uring-reg (job.sqpoll, job.registered).
ThreadResult replay_thread_uring(const ThreadJob& job);
// The peers, scheduled as the ring engines are (replay_peers.cpp).
ThreadResult replay_thread_liburing(const ThreadJob& job);
ThreadResult replay_thread_libaio(const ThreadJob& job);
ThreadResult replay_thread_threadpool(const ThreadJob& job);

// One step as its own system call (pread64, pwrite64, fsync, ...): -errno or the result.
long long run_step_sync(int fd, const Step& s, unsigned char* buf, std::uint32_t len) noexcept;

// Helpers both executors share (replay_sync.cpp).
std::uint64_t monotonic_ns() noexcept;
// Sleeps until `t` (CLOCK_MONOTONIC) or until `stop` is set, checked every kStopSliceNs.
inline constexpr std::uint64_t kStopSliceNs = 50'000'000;
void sleep_until_ns(std::uint64_t t, const std::atomic<bool>* stop) noexcept;
// "read of /data/x at 4096 (65536 bytes): Input/output error"
std::string step_error(const Program& p, const Step& s, long long res);
// Compares `got` (a replayed read) with a pread of the same bytes; true when equal.
bool verify_read(int fd, const Step& s, const unsigned char* got, std::size_t n,
                 std::vector<unsigned char>& scratch) noexcept;
// When a timed step is due, counting the loop it belongs to.
inline std::uint64_t due_ns(const ThreadJob& j, std::uint64_t start, const Step& s,
                            unsigned loop) noexcept {
    return start + static_cast<std::uint64_t>(s.at_ns) +
           static_cast<std::uint64_t>(j.loop_span_ns) * loop;
}
// Bytes one step moves, clamped to the buffer.
inline std::uint32_t io_len(const ThreadJob& j, const Step& s) noexcept {
    return static_cast<std::uint32_t>(s.length < j.max_io_bytes ? s.length : j.max_io_bytes);
}

}  // namespace uringkit::replaybench::detail
