// The exact number of requests io_uring handed to its io-wq workers: a
// perf_event_open counter on the `io_uring:io_uring_queue_async_work`
// tracepoint, which fires once per hand-off in the task that queues it (the
// submitting thread, or the SQPOLL thread for an SQPOLL ring).  It needs the
// tracepoint's id from tracefs (only where tracefs is already mounted: this
// never mounts anything) and the right to count a kernel tracepoint (root,
// CAP_PERFMON, or perf_event_paranoid <= 1 for one's own threads).  Where
// either is missing, `why_not` says which, and nothing is counted.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace uringkit::measure {

// The tracepoint's id, or 0 with `why_not` ("tracefs not mounted", ...).
std::uint64_t async_work_tracepoint_id(std::string& why_not);

// Counters of one tracepoint on a set of threads of this process, summed.
class TracepointCounter {
public:
    TracepointCounter() = default;
    ~TracepointCounter();
    TracepointCounter(const TracepointCounter&) = delete;
    TracepointCounter& operator=(const TracepointCounter&) = delete;
    // Opens one counting event per thread; false with `why_not` when the
    // kernel refuses one (then none is kept).
    bool open(std::uint64_t id, std::span<const int> tids, std::string& why_not);
    bool counting() const noexcept { return !fds_.empty(); }
    // The events counted so far on all the threads (their sum).
    std::uint64_t read() const noexcept;
    void close() noexcept;

private:
    std::vector<int> fds_;
};

}  // namespace uringkit::measure
