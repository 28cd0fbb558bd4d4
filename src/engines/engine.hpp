// The submission engines `uringkit bench` compares: one interface, one file per
// engine under src/engines/.  An engine runs whole phases (ramp, measured run)
// itself, so the timed loop has no virtual call per I/O, allocates nothing and
// takes no lock; it counts the system calls it makes as it makes them.
#pragma once

#include "engines/workload.hpp"
#include "measure/histogram.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace uringkit::engines {

// Everything one job thread needs to build its engine instance.
struct JobContext {
    int fd = -1;  // this job's own descriptor (O_DIRECT when the workload is direct)
    const Workload* workload = nullptr;
    unsigned depth = 1;  // I/Os kept in flight
    unsigned batch = 1;  // I/Os per submit and completions waited for per reap
    unsigned job = 0;    // index of this job among `jobs`
    unsigned jobs = 1;
    std::uint32_t buffer_align =
        4096;  // alignment of the I/O buffers (O_DIRECT needs the logical block size)
    // uring, uring-async, uring-sqpoll: SQ and CQ entries of the ring; 0: the
    // depth (CQ twice that).  Below the depth the CQ can overflow (a test knob).
    unsigned ring_entries = 0;
    unsigned sq_thread_idle_ms = 0;  // uring-sqpoll: 0 for its own default (50 ms)
};

// One phase of a run: the engine issues I/Os until the deadline, the I/O
// budget or the stop flag, then drains what is in flight and returns.
struct Phase {
    std::uint64_t deadline_ns = UINT64_MAX;        // CLOCK_MONOTONIC
    std::uint64_t max_ios = UINT64_MAX;            // I/Os to issue at most
    const std::atomic<bool>* stop = nullptr;       // set by a signal handler: stop issuing
    measure::LatencyHistogram* latency = nullptr;  // null: do not record (ramp)
    std::atomic<std::uint64_t>* progress =
        nullptr;  // completed I/Os, stored once per batch for the progress line
    // Start the offsets from the first again, so every engine and round
    // measures the same blocks whatever its ramp drew.
    bool restart_offsets = false;
};

struct PhaseResult {
    std::uint64_t ios = 0;  // completed I/Os
    std::uint64_t bytes = 0;
    std::uint64_t writes = 0;    // of the completed I/Os, the writes (randrw mixes them)
    std::uint64_t syscalls = 0;  // system calls the engine made for them
    std::uint64_t submits = 0;   // calls that handed I/O to the kernel or the pool
    // Where the kernel pushed back (the uring engines): enters that had to
    // wake the sleeping SQPOLL thread, reaps that found completions parked
    // in the CQ overflow list, enters answered -EAGAIN/-EBUSY/-EINTR and retried.
    std::uint64_t sq_wakeups = 0;
    std::uint64_t cq_overflows = 0;
    std::uint64_t enter_retries = 0;
    // The first failed I/O: -errno, or 1 for a short transfer, 2 for a verify mismatch.
    int error = 0;
    std::uint64_t error_offset = 0;
    std::int64_t error_res = 0;
};

// One engine instance on one job thread; created on the thread that runs it
// (rings made with SINGLE_ISSUER and a registered ring fd belong to it).
class EngineJob {
public:
    virtual ~EngineJob() = default;
    virtual PhaseResult run(const Phase& phase) = 0;
    // A note for the results, e.g. which path `auto` took.
    virtual std::string note() const { return {}; }
    // The engine that actually ran, for an engine that picks one (auto);
    // empty for the others.
    virtual std::string_view ran() const { return {}; }
};

// Thrown by start() when the engine cannot run here; the row reads
// "unavailable: <reason>" and the other engines still run.
class EngineUnavailable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct EngineInfo {
    std::string_view name;
    std::string_view summary;
    // Builds the engine for one job; throws EngineUnavailable (or std::exception on failure).
    std::unique_ptr<EngineJob> (*start)(const JobContext& ctx);
    // The most I/Os it keeps in flight whatever the depth asked: 1 for an
    // engine that waits for each I/O before issuing the next (pread); 0 when
    // it keeps the depth in flight.  The table says so rather than show a
    // depth the engine never had.
    unsigned most_in_flight = 0;
    // The device path its I/O takes: "block" (the file system and block
    // layer, or the page cache) or "nvme-passthrough" (NVMe commands through
    // /dev/ngXnY).  And how it learns of a completion: "blocking" (the
    // calling thread waits in the system call), "interrupt" (the device
    // interrupts; a page-cache hit completes inline) or "polled" (IOPOLL).
    std::string_view io_path = "block";
    std::string_view completion = "interrupt";
};

// Every engine built into this binary, in the order the table lists them.
std::span<const EngineInfo> all_engines() noexcept;
const EngineInfo* find_engine(std::string_view name) noexcept;
// The default set: everything except uring-iopoll (O_DIRECT only).
std::span<const std::string_view> default_engines() noexcept;

// Why registering `bytes` of buffers failed with ENOMEM: RLIMIT_MEMLOCK,
// what it allows, and how to raise it (uring-reg, here and in the replay).
std::string memlock_refusal(std::size_t bytes);

// Monotonic nanoseconds (CLOCK_MONOTONIC through the vDSO: no system call).
std::uint64_t now_ns() noexcept;

// Page-aligned I/O buffers, one per slot, touched once at setup so the timed
// loop takes no page faults.
class BufferArena {
public:
    BufferArena(unsigned slots, std::uint32_t size, std::uint32_t align);
    ~BufferArena();
    BufferArena(const BufferArena&) = delete;
    BufferArena& operator=(const BufferArena&) = delete;
    unsigned char* slot(unsigned i) const noexcept { return base_ + std::size_t{i} * stride_; }
    void* data() const noexcept { return base_; }
    std::size_t bytes() const noexcept { return bytes_; }

private:
    unsigned char* base_ = nullptr;
    std::size_t stride_ = 0;
    std::size_t bytes_ = 0;
};

// Checks one completed transfer; fills `r` with the first error and returns false on failure.
inline bool check_transfer(PhaseResult& r, std::int64_t res, std::uint32_t bs, std::uint64_t offset,
                           const void* buf, bool write, bool verify) noexcept {
    if (res == bs && !(verify && !write && !stamp_ok(buf, offset))) return true;
    if (r.error == 0) {
        r.error = res < 0 ? static_cast<int>(res) : (res != bs ? 1 : 2);
        r.error_offset = offset;
        r.error_res = res;
    }
    return false;
}

// "read at offset 4096: Input/output error", "short read at offset 0: 100 of 4096 bytes", ...
std::string describe_error(const PhaseResult& r, std::uint32_t bs);

}  // namespace uringkit::engines
