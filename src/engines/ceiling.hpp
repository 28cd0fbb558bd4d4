// The most that removing system calls could give on this machine, measured
// at the start of each bench run (a few milliseconds): the cost of a bare
// system call and of the engine's unit of work, a pread of one block of the
// benchmarked file.  If a ring removed every system call and nothing else,
// each read would cost pread_ns - syscall_ns, so reads could go at most
// pread_ns / (pread_ns - syscall_ns) times as fast.  An estimate, not a
// bound: registered files and buffers also remove work inside the read, and
// the ring adds its own per-request cost (SQE, CQE, task work).
#pragma once

#include "engines/runner.hpp"
#include "measure/paired.hpp"

#include <optional>
#include <string>
#include <vector>

namespace uringkit::engines {

class Target;

struct Ceiling {
    double syscall_ns = 0;  // a bare system call: getppid(2), which does no work
    double pread_ns = 0;  // one pread(2) of `bs` bytes of the file (cached or O_DIRECT as the job)
    std::string unit;     // what pread_ns timed, in words: "4 KiB pread of a cached block"
    bool measured() const noexcept { return syscall_ns > 0 && pread_ns > syscall_ns; }
    // pread_ns / (pread_ns - syscall_ns); 0 when not measured.
    double gain() const noexcept { return measured() ? pread_ns / (pread_ns - syscall_ns) : 0; }
};

// "206 ns", "1.43 µs", "104 µs": a measured duration in the header and verdict.
std::string format_ns(double ns);

// Times both, each as the median of nine batches (a batch that a
// preemption or an interrupt lands in then does not move it).  Reads only
// the first blocks of the target, at most 64 KiB, with the job's own
// O_DIRECT setting; never writes.  Unmeasured (zeros) when the file cannot
// be read.
Ceiling measure_ceiling(const Target& target, const Workload& workload);

// "uring at depth 32 is 1.05x pread; removing every system call would give
// about 1.17x here: it reaches 30% of that (...)" for each depth where a ring
// engine was measured faster than pread on a read workload; the best such
// engine at that depth.  Nothing for writes, or when pread did not run, or
// when the ceiling was not measured.
std::vector<std::string> ceiling_lines(const Results& results,
                                       const std::vector<measure::Comparison>& comparisons,
                                       const Ceiling& ceiling, RwMode rw);

}  // namespace uringkit::engines
