// The kernel threads io_uring runs on behalf of this process, and what they
// cost: io-wq workers (`iou-wrk-TID`, where a request that cannot complete
// without blocking is handed over) and SQPOLL threads (`iou-sqp-TID`).  Both
// are threads of this process (Linux 5.12+), so /proc/self/task lists them and
// getrusage(RUSAGE_SELF) already counts their CPU; this says how much of it
// was theirs.  Read off the hot path: a snapshot opens a few /proc files per
// kernel thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace uringkit::measure {

enum class KernelThreadKind { io_worker, sq_poll };

// One kernel thread's figures since it started.
struct KernelThreadFigures {
    int tid = 0;
    KernelThreadKind kind = KernelThreadKind::io_worker;
    std::uint64_t cpu_ns = 0;  // /proc/self/task/TID/schedstat (ns); stat's ticks where absent
    std::uint64_t vcsw = 0;    // voluntary context switches (status)
    std::uint64_t ivcsw = 0;   // involuntary ones
};

// The io_uring kernel threads of this process now.
std::vector<KernelThreadFigures> kernel_threads_now();

// What the kernel threads cost over an interval.
struct KernelThreadCost {
    double cpu_s = 0;
    std::uint64_t vcsw = 0, ivcsw = 0;
    unsigned threads = 0;  // that ran in the interval (present at either end, or seen between)
    unsigned started = 0;  // not there at the start
    unsigned exited = 0;   // gone at the end: counted up to the last sample that saw them
};

// The cost of the io-wq workers and SQPOLL threads over one measured phase.
// begin() and end() bracket it; sample() in between (the bench sampler calls
// it every window) keeps the latest figures of each thread, so one that exits
// before end() (an idle io-wq worker exits after 5 s) loses only what it did
// after the last sample: /proc forgets a thread once it has exited.
class KernelThreadTracker {
public:
    void begin();
    void sample();
    void end() { sample(); }
    KernelThreadCost cost(KernelThreadKind kind) const;

private:
    struct Seen {
        KernelThreadFigures first;  // at begin(), or zero for one that started later
        KernelThreadFigures last;
        bool present_at_begin = false;
        bool present_now = false;
    };
    std::vector<Seen> seen_;
};

}  // namespace uringkit::measure
