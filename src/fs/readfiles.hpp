// `readfiles`: read and hash every regular file under some paths.
//
// The ring engine runs one open -> read -> close chain per file on a
// fixed-file slot (a direct descriptor, never in the process fd table), with
// up to `inflight` files in flight and every buffer registered.  Where a short
// read does not prove end of file (procfs, sysfs: files that say size 0 and
// answer in pieces) the chain is open -> read -> read -> close and the second
// read confirms it (it returns 0).  A file smaller than the block size costs
// one chain and no system call of its own; a larger file continues with
// further reads.  Several threads may each run a ring over their share of
// the files; results still come out in input order.  The threadpool and sync
// engines run the same job the usual ways, for comparison.
#pragma once

#include "fs/path_list.hpp"
#include "fs/readfiles_hash.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace uringkit::fs {

enum class ReadEngine { ring, threadpool, sync };
const char* engine_name(ReadEngine e) noexcept;

struct ReadFilesOptions {
    ReadEngine engine = ReadEngine::ring;
    bool hash = true;                 // hash each file (libxxhash, seed 0); false: only count bytes
    HashAlgo algo = HashAlgo::xxh64;  // which hash (xxhsum -H0..-H3)
    bool ordered = true;              // results in input order (false: as they complete)
    // Directories given are walked; false: each input must be a file, and a
    // directory fails with EISDIR (`readfiles --check`: one result per line).
    bool walk = true;
    unsigned inflight = 32;  // ring: files in flight (fixed-file slots)
    // ring: threads, each with its own ring and `inflight` files (0: one per
    // CPU, up to 4; fewer when there are not enough files to fill them);
    // threadpool: blocking workers (0: 8).
    unsigned threads = 0;
    std::size_t block_size =
        64 *
        1024;  // 32 x 64 KiB keeps the registered buffers in cache; 16 MiB of them cost ~10% CPU
    // ring: run each chain on an io-wq worker (IOSQE_ASYNC on the open), so
    // several files are opened and read at once on other CPUs while this
    // thread hashes; false keeps everything on the submitting thread.
    bool async_open = false;
    // Set (by a SIGINT/SIGTERM handler): start no new file, abandon the reads
    // of files in flight, and emit only what was complete: in input order,
    // the files before the first one that was not finished.
    const std::atomic<bool>* stop = nullptr;
};

struct FileResult {
    std::string_view path;
    std::uint64_t hash;       // the hash of ReadFilesOptions::algo, seed 0 (0 when off);
                              // XXH128's low half
    std::uint64_t bytes;      // bytes read
    int error;                // 0, or the positive errno
    const char* stage;        // "open" or "read" when error != 0
    std::uint64_t hash_high;  // XXH128's high half (0 for the others)
    HashValue value() const noexcept { return {hash, hash_high}; }
};

struct ReadFilesSink {
    // Every file that was read or failed, in input order unless !ordered.
    std::function<void(const FileResult&)> file;
    // Skipped entries (FIFOs, devices, a symlink to a directory), the engine
    // fallback, directories that could not be listed (`error` != 0).
    std::function<void(std::string_view path, int error, std::string_view message)> note;
    // While the inputs are listed, before any file is read: after each
    // directory, the files found so far and the directories listed (a walk
    // of a cold tree can take longer than the reading; may be empty).
    std::function<void(std::uint64_t files, std::uint64_t dirs)> listing;
};

struct ReadFilesStats {
    std::uint64_t files = 0;    // files read completely
    std::uint64_t failed = 0;   // files or directories that could not be opened or read
    std::uint64_t skipped = 0;  // special files left alone
    std::uint64_t bytes = 0;
    // System calls the job made: io_uring_enter and register calls (the NOP
    // that proves each ring works included), the directory walk and any
    // statx(2)/open/read/close; not counted: the ring's one-time setup
    // (io_uring_setup, mmap) and teardown.
    std::uint64_t syscalls = 0;
    double seconds = 0;  // reading, after the walk
    double walk_seconds = 0;
    ReadEngine engine = ReadEngine::ring;  // the engine that ran (after any fallback)
    // Where the file system of the first file hands every ring read to an
    // io-wq worker (tmpfs: sys::reads_go_to_workers), what the ring engine
    // does about it and why, for --summary; empty elsewhere.
    std::string path_reason;
};

// The memory the read buffers take at most: `threads` readers of
// `per_thread` bytes each.  A ring holds two blocks for each file in flight
// (the one being hashed and the next); a blocking reader one block.
struct BufferNeed {
    unsigned threads = 1;
    std::uint64_t per_thread = 0;
    std::uint64_t total() const noexcept { return per_thread * threads; }
};
BufferNeed read_buffers_needed(const ReadFilesOptions& options) noexcept;

// Walks `inputs` (directories depth-first, entries in byte order of name) and
// reads every regular file.  Throws for bad options, and when the read
// buffers cannot be allocated even for reading one file at a time
// (std::runtime_error naming how much); per-file problems go to the sink and
// the counts.
ReadFilesStats read_files(const PathList& inputs, const ReadFilesOptions& options,
                          const ReadFilesSink& sink);
inline ReadFilesStats read_files(std::span<const std::string> inputs,
                                 const ReadFilesOptions& options, const ReadFilesSink& sink) {
    PathList list;
    for (const std::string& in : inputs) list.push(in);
    return read_files(list, options, sink);
}

// Writes "<16 hex digits>  <path>\n" to `out`, exactly as xxhsum 0.8.1 -H1
// prints it (the name as given, without escaping).  Allocates nothing.
// False, with errno set, when `out` refused it (a full disk, a closed pipe).
bool print_xxhsum_line(std::FILE* out, std::uint64_t hash, std::string_view path);

}  // namespace uringkit::fs
