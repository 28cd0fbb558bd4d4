// `uringkit bench --replay` as a library: a recorded trace (trace.hpp)
// replayed through the submission engines, in three modes, with the
// benchmark layer's noise-aware verdict.
//
// A trace is compiled once into per-thread programs of steps (the reads,
// writes, syncs and size changes, with open and close kept as ordering
// marks), spilled to an unlinked temporary file in chunks so memory does
// not grow with the trace.  Each run replays every thread's program on a
// thread of its own, all starting together; files are opened once per run
// (open and close are not replayed: only the I/O between them is).
//
// Modes:
//  - as_recorded: each thread's steps in order, one at a time;
//  - batched: up to `depth` steps in flight per thread, a step waiting for
//    every earlier step of its thread it depends on (same file and: either
//    one writes overlapping bytes, or either one is a barrier: fsync,
//    fdatasync, ftruncate, fallocate, open, close);
//  - timed: each step issued at its recorded time (open loop), latency
//    counted from that time, up to `depth` in flight per thread.
// Steps of different threads are never ordered: the trace does not say
// which of them waited for which.
#pragma once

#include "measure/paired.hpp"
#include "replay/trace.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace uringkit::replaybench {

// The trace's vocabulary (replay/trace.hpp), which a replay speaks throughout.
using replay::describe;
using replay::Event;
using replay::Format;
using replay::Op;
using replay::op_name;
using replay::Options;
using replay::Summary;
using replay::TraceError;
using replay::TraceReader;

enum class Mode : std::uint8_t { as_recorded, batched, timed };
const char* mode_name(Mode m);  // "as-recorded", "batched", "timed"
std::optional<Mode> parse_mode(std::string_view text);

// The engines a trace replays through, bench's names: pread (the program's
// own system calls, one at a time per thread), threadpool (those calls on a
// pool of workers per thread), libaio, uring (one ring per thread),
// uring-reg (its files and buffers registered), uring-sqpoll (a submission
// poll thread per ring), liburing (the uring loop on liburing) and auto
// (pread one at a time, uring with more in flight).  uring-iopoll is named
// and reported unavailable with the reason.
inline constexpr std::string_view kReplayEngines =
    "pread, threadpool, libaio, uring, uring-reg, uring-sqpoll, liburing, auto";
bool replay_engine_known(std::string_view name) noexcept;
// Reads and writes longer than this are replayed at this length.
inline constexpr std::uint64_t kMaxIoBytes = std::uint64_t{64} << 20;
// Trace threads with I/O a replay runs at most (one replay thread each).
inline constexpr std::size_t kMaxThreads = 1024;

// One step of a thread's program: 32 bytes.
struct Step {
    std::uint64_t offset = 0;  // read/write/trim/fallocate: the offset; ftruncate: the new size
    std::uint64_t length = 0;  // read/write: requested bytes; trim/fallocate: the range's length
    std::int64_t at_ns = -1;   // start time since the trace's first timestamp; -1: not recorded
    std::uint32_t file = 0;    // index into Program::files
    Op op = Op::read;
    std::uint8_t pad[3] = {};
};
static_assert(sizeof(Step) == 32);

// True when `b` (later) must wait for `a` (earlier, same thread) in batched mode.
bool depends(const Step& a, const Step& b) noexcept;
// Steps that move data or state (everything but open and close marks).
inline bool is_io(Op op) noexcept {
    return op != Op::open && op != Op::close;
}
inline bool is_write(Op op) noexcept {
    return op == Op::write || op == Op::ftruncate || op == Op::fallocate || op == Op::trim;
}

struct FileInfo {
    std::string path;              // as the trace names it
    std::uint64_t extent = 0;      // the furthest byte the trace reads or writes (or truncates to)
    std::uint32_t open_flags = 0;  // O_DIRECT|O_SYNC|O_DSYNC of its first recorded open
    std::uint64_t reads = 0, writes = 0;  // steps
};

// What the header says about the trace beyond describe(Summary).
struct TraceShape {
    std::uint64_t steps = 0;  // I/O steps (no open/close marks)
    std::uint64_t reads = 0, writes = 0, syncs = 0, other = 0;
    std::uint64_t read_bytes = 0, write_bytes = 0;  // requested
    std::array<std::uint64_t, 8>
        sizes{};  // read/write requests: <=4k, <=16k, <=64k, <=256k, <=1m, <=4m, <=16m, more
    std::uint64_t sequential =
        0;  // read/write at the end of its thread's previous one on that file
    std::uint64_t zero_length = 0;     // reads and writes of 0 bytes (at EOF, usually)
    std::uint64_t unknown_offset = 0;  // read/write the trace gives no offset for: left out
    std::uint64_t max_length = 0;      // the largest read/write
    bool timed = false;                // every step has a time
    std::int64_t span_ns = 0;          // first to last timestamp
};

// A trace compiled for replay.  Built by compile(); the steps live in a
// temporary file (or in memory when few), read back in chunks by cursors.
class Program {
public:
    Program();
    ~Program();
    Program(Program&&) noexcept;
    Program& operator=(Program&&) noexcept;

    const std::vector<FileInfo>& files() const noexcept { return files_; }
    const Summary& summary() const noexcept { return summary_; }
    const TraceShape& shape() const noexcept { return shape_; }
    std::size_t threads() const noexcept;
    std::uint32_t thread_id(std::size_t t) const noexcept;  // the trace's thread id
    std::uint64_t steps_of(std::size_t t) const noexcept;
    bool writes() const noexcept { return shape_.writes > 0; }
    // Bytes the compiled program keeps in memory (the chunks not spilled,
    // the index of the spilled ones); the rest is in the temporary file.
    std::size_t memory_bytes() const noexcept;
    std::uint64_t spilled_bytes() const noexcept;

    // Reads one thread's steps in order, one chunk in memory at a time.
    class Cursor {
    public:
        Cursor(const Program& p, std::size_t thread);
        // The next step, or nullptr at the end; valid until the next call.
        const Step* peek();
        void pop() noexcept { ++pos_; }
        void rewind() noexcept;

    private:
        bool load(std::size_t chunk);
        const Program* p_;
        std::size_t thread_, chunk_ = 0, pos_ = 0;
        std::vector<Step> buf_;
        const std::vector<Step>* cur_ = nullptr;
    };

    struct Impl;

private:
    friend Program compile(TraceReader& reader, std::size_t spill_steps);
    std::unique_ptr<Impl> impl_;
    std::vector<FileInfo> files_;
    Summary summary_;
    TraceShape shape_;
};

// Reads the whole trace (streaming) into a Program; once more than
// `spill_steps` steps are held, full chunks go to an unlinked temporary file
// in $TMPDIR.  Throws TraceError (a bad line) or std::system_error.
Program compile(TraceReader& reader, std::size_t spill_steps = std::size_t{1} << 18);

// Human lines describing the trace: threads, files, calls, bytes, sizes,
// sequential share, and the share of the program's time spent in I/O.
std::vector<std::string> describe_shape(const Program& p);

enum class Cache : std::uint8_t { warm, cold };

struct Config {
    std::vector<std::string> engines{"pread", "uring"};  // kReplayEngines; one twice: A/A
    std::vector<Mode> modes{Mode::as_recorded, Mode::batched};
    std::vector<unsigned> depths{32};  // batched and timed; as_recorded is depth 1
    unsigned rounds = 0;               // 0: the fewest that can give a verdict
    unsigned loops = 1;                // passes over the trace per run
    double confidence = 0.95;
    Cache cache = Cache::warm;
    bool allow_write = false;  // write the recorded paths themselves
    std::string scratch;       // replay into copies made in this directory
    bool verify = false;       // re-read each replayed read with pread and compare (slows runs)
};

// What stops a replay before it starts: the message names the file or
// option.  kind says which exit status the CLI gives it.
class ReplayError : public std::runtime_error {
public:
    enum Kind { usage, bad_input, failure };
    ReplayError(Kind k, const std::string& what) : std::runtime_error(what), kind_(k) {}
    Kind kind() const noexcept { return kind_; }

private:
    Kind kind_;
};

struct Run {
    std::string engine;  // label ("uring", "uring#2")
    Mode mode = Mode::as_recorded;
    unsigned depth = 1;
    unsigned round = 0;
    double seconds = 0;  // first step issued to last completed, over all threads
    std::uint64_t ios = 0, bytes = 0;
    std::uint64_t syscalls = 0;     // counted by the engine
    double cpu_s = 0;               // user + system of the process (poll threads included)
    double offload_cpu_s = 0;       // of it, the io-wq workers' (iou-wrk-*)
    std::uint64_t offload_ctx = 0;  // their context switches
    double lat_p50_ns = 0, lat_p99_ns = 0, lat_max_ns = 0;
    // Reads and writes that moved fewer bytes than asked: at the end of a
    // file, as the program itself saw, or because the file changed since.
    std::uint64_t short_ios = 0;
    std::uint64_t verify_failures = 0;
    std::string error;  // the run failed: why

    double ios_per_s() const noexcept {
        return seconds > 0 ? static_cast<double>(ios) / seconds : 0;
    }
    double cpu_us_per_io() const noexcept {
        return ios ? cpu_s * 1e6 / static_cast<double>(ios) : 0;
    }
    double syscalls_per_io() const noexcept {
        return ios ? static_cast<double>(syscalls) / static_cast<double>(ios) : 0;
    }
};

struct Unavailable {
    std::string engine, why;
};

// Records, for tests, when each step of each thread was issued and completed
// (ticks of one counter per thread).  Index: the step's place in its thread.
struct OrderLog {
    struct Entry {
        std::uint64_t issued = 0, completed = 0;
    };
    std::vector<std::vector<Entry>> threads;
};

struct Result {
    Config config;
    unsigned rounds = 0;
    std::vector<Run> runs;
    std::vector<Unavailable> unavailable;
    std::vector<std::string> notes;  // scratch copies, skipped engines' reasons, cache
    bool interrupted = false;
};

struct Progress {
    unsigned done = 0, total = 0;
    std::string engine;
    Mode mode;
    unsigned depth;
};
using ProgressFn = std::function<void(const Progress&)>;

// The rounds `config` gets for `program`: its own, or the fewest for a verdict.
unsigned rounds_of(const Config& config);

// Replays `program` per `config`.  Throws ReplayError before any run when
// the files cannot be used as asked (a write without --allow-write or
// --scratch, a missing file).  `order_log` (tests): filled by the last run.
Result run(const Program& program, const Config& config, const std::atomic<bool>* stop = nullptr,
           const ProgressFn& progress = {}, OrderLog* order_log = nullptr);

// Per mode and depth: each engine against pread (or the first listed), and
// a twin against its first listing, on time (Metric::iops: I/Os per second)
// and CPU per I/O; Comparison::iodepth is the cell's index in cells().
struct Cell {
    Mode mode;
    unsigned depth;
};
std::vector<Cell> cells(const Config& config);
std::vector<measure::Comparison> compare(const Result& result);

std::string format_report(const Program& program, const Result& result,
                          const std::vector<measure::Comparison>& comparisons);
std::vector<std::string> verdict_lines(const Result& result,
                                       const std::vector<measure::Comparison>& comparisons);
std::string to_json(const Program& program, const Result& result,
                    const std::vector<measure::Comparison>& comparisons);

}  // namespace uringkit::replaybench
