// A streaming reader of recorded file I/O: strace output (`strace -f -ttt -T
// [-y]`, see docs/replay.md for the exact command) or fio iologs (versions 2
// and 3).  It turns the trace into events, each tagged with the thread that
// issued it, one at a time: memory grows with threads, descriptors and
// distinct files, never with the number of lines.
#pragma once

#include <array>
#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace uringkit::replay {

// A line that cannot be parsed (unless Options::lenient): the message names
// the line number and the start of the line.
class TraceError : public std::runtime_error {
public:
    TraceError(std::uint64_t line, const std::string& what)
        : std::runtime_error(what), line_(line) {}
    std::uint64_t line() const noexcept { return line_; }

private:
    std::uint64_t line_;
};

enum class Format { strace, fio_iolog_v2, fio_iolog_v3 };
const char* format_name(Format f);

// trim comes only from fio iologs (strace's list has no discard call).
enum class Op : std::uint8_t {
    read,
    write,
    fsync,
    fdatasync,
    ftruncate,
    fallocate,
    trim,
    open,
    close,
    sync_range  // sync_file_range(2): offset, length, its SYNC_FILE_RANGE_* flags
};
inline constexpr std::size_t op_count = 10;
const char* op_name(Op op);

// An offset the trace does not determine: a read(2) or write(2) after a
// write on an O_APPEND descriptor, or on a descriptor whose position the
// trace never saw set.
inline constexpr std::uint64_t unknown_offset = UINT64_MAX;

struct Event {
    std::uint32_t thread = 0;  // strace's pid column (a thread id); 0 without -f and for iologs
    Op op = Op::read;
    std::uint32_t file = 0;    // index into TraceReader::files()
    std::uint64_t offset = 0;  // read/write/trim/fallocate: the byte offset; 0 otherwise
    // Requested bytes (read/write/trim/fallocate), the new size (ftruncate); 0 otherwise.
    std::uint64_t length = 0;
    // What the call returned: bytes for read/write (an iolog records requests,
    // so there it is the length), the descriptor for open, 0 otherwise.
    std::int64_t result = 0;
    // open: the O_* flags (<fcntl.h> values); fallocate: the mode; sync_range: its flags.
    std::uint32_t flags = 0;
    std::optional<std::int64_t>
        time_ns;  // when the call started: -ttt (epoch), -tt (since midnight), iolog v3
    std::optional<std::int64_t> duration_ns;  // strace -T
    std::uint64_t line = 0;                   // the line that completed the call (1-based)

    bool operator==(const Event&) const = default;
};

// Why a call produced no event.  Descriptor-table bookkeeping (dup, fcntl,
// lseek, clone) is not a skip: it shapes later events.
enum class SkipReason : std::uint8_t {
    failed,                // returned an error (-1 E..., or ? when the process died in the call)
    inherited_descriptor,  // a descriptor never opened in the trace: 0/1/2, inherited, or made by
                           // an untraced call
    socket,                // -y showed socket:[...] (or -yy's TCP:[...] and friends)
    pipe,                  // -y showed pipe:[...]
    device,                // a path under /dev (ttys, /dev/null, raw devices are never replayed)
    pseudo_file,           // /proc, /sys, anon_inode:..., memfd
    directory,             // opened with O_DIRECTORY (kept only to resolve openat's dirfd)
    other_call,            // a system call outside the list docs/replay.md gives
    unfinished,            // started, never resumed before its thread or the trace ended
    orphan_resume,         // a "<... resumed>" whose start is not in the trace
    iolog_wait,            // fio v2 "wait": think time, not I/O
    malformed,             // a line that could not be parsed (Options::lenient)
};
inline constexpr std::size_t skip_reason_count = 12;
const char* skip_reason_text(SkipReason r);

struct Summary {
    Format format = Format::strace;
    std::uint64_t lines = 0;
    std::size_t threads = 0;                      // distinct threads with at least one event
    std::size_t threads_seen = 0;                 // distinct pids in the trace
    std::size_t files = 0;                        // distinct files with at least one event
    std::array<std::uint64_t, op_count> calls{};  // events per Op
    std::uint64_t bytes_read = 0;                 // returned bytes
    std::uint64_t bytes_written = 0;
    std::uint64_t unknown_offsets = 0;  // reads/writes emitted with unknown_offset
    // SEEK_END/SEEK_DATA/SEEK_HOLE: the position came from lseek's result,
    // since the file's size is not in the trace.
    std::uint64_t seeks_from_result = 0;
    std::array<std::uint64_t, skip_reason_count> skipped{};
    std::optional<std::int64_t> first_ns, last_ns;  // the span of the timestamped lines
    std::int64_t io_duration_ns = 0;                // sum of -T over the events (all threads)
    std::uint64_t events_with_duration = 0;

    std::uint64_t events() const;
    std::uint64_t skipped_total() const;
};

// Plain-text lines for people: counts, bytes, skips by reason, the span and
// the share of it spent inside I/O calls.
std::string describe(const Summary& s);

struct Options {
    // Count and skip lines that cannot be parsed instead of throwing TraceError.
    bool lenient = false;
};

class TraceReader {
public:
    // Reads the first lines to detect the format; throws TraceError on an
    // empty or unrecognised input.  `in` must outlive the reader.
    explicit TraceReader(std::istream& in, Options options = {});
    // Opens `path`; throws std::system_error when it cannot be read.
    static TraceReader open(const std::string& path, Options options = {});
    TraceReader(TraceReader&&) noexcept;
    TraceReader& operator=(TraceReader&&) noexcept;
    ~TraceReader();

    // The next event in trace order, or nullopt at the end.  Throws TraceError.
    std::optional<Event> next();

    Format format() const;
    // Distinct paths, indexed by Event::file; grows as files appear.
    const std::vector<std::string>& files() const;
    // Complete once next() has returned nullopt.
    const Summary& summary() const;

    // The reader's own state, for callers (and tests) that watch its size.
    struct State {
        std::size_t descriptors = 0;   // live descriptor entries over all tables
        std::size_t tables = 0;        // distinct descriptor tables
        std::size_t live_threads = 0;  // pids with a table
        std::size_t pending = 0;       // unfinished calls waiting for their resume
        std::size_t buffered = 0;      // events parsed, not yet returned
    };
    State state() const;

    class Source;  // one per format (src/replay/)

private:
    TraceReader(std::unique_ptr<std::istream> owned, Options options);
    std::unique_ptr<std::istream> owned_;
    std::unique_ptr<Source> source_;
};

// Every event of `reader`, split by thread in trace order (the whole trace
// in memory: for tests and small traces).
struct ThreadEvents {
    std::uint32_t thread;
    std::vector<Event> events;
};
std::vector<ThreadEvents> read_by_thread(TraceReader& reader);

}  // namespace uringkit::replay
