// The readfiles pipeline's parts, shared by its files: collecting the
// inputs (readfiles_collect.cpp), the blocking engines
// (readfiles_blocking.cpp), the ring engine (readfiles_ring.cpp), and what
// they all hand results to (the Emitter, here).  Not installed.
#pragma once

#include "fs/readfiles.hpp"
#include "shared.hpp"
#include "uringkit/ring/ring.hpp"

#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace uringkit::fs::readfiles_detail {

using detail::aligned_buffer;
using detail::Buffer;

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline bool retryable(int res) noexcept {
    return res == -EINTR || res == -EAGAIN;
}

// ReadFilesOptions::stop was set: start nothing more, abandon reads in flight.
inline bool stopping(const ReadFilesOptions& o) noexcept {
    return o.stop && o.stop->load(std::memory_order_relaxed);
}

// The files to read, and for each whether a short read already means end of file.
struct FileList {
    PathList paths;
    std::vector<bool> short_read_is_eof;
};

// The inputs expanded: directories walked, explicit files stat'ed
// (ListedStat), symbolic links found in the walk stat'ed in one batch on
// `ring` (null: plain calls); skipped and failed inputs go to the sink.
FileList collect_files(const PathList& inputs, const ReadFilesOptions& o, Ring* ring,
                       const ReadFilesSink& sink, ReadFilesStats& stats);

// The read buffers could not be allocated: what() says how much, for what.
// The ring engine takes it as it takes a ring it cannot use (the blocking
// reader needs one block, not two per file in flight); elsewhere it ends
// read_files().
class BufferError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// aligned_buffer(), throwing BufferError for `what` ("2 x 64 KiB for each of
// 32 files in flight") instead of a bare std::bad_alloc.
Buffer read_buffer(std::size_t bytes, const std::string& what);

// ---- results in order --------------------------------------------------------

// One file's hash state, of the algorithm of ReadFilesOptions::algo
// (readfiles_hash.cpp); made once per reader or ring slot and reset per file.
class Hasher {
public:
    explicit Hasher(HashAlgo a);
    ~Hasher();
    Hasher(const Hasher&) = delete;
    Hasher& operator=(const Hasher&) = delete;
    void reset() noexcept;
    void update(const void* data, std::size_t n) noexcept;
    HashValue digest() const noexcept;

private:
    HashAlgo algo_;
    bool wide_;  // XXH3 and XXH128 through the AVX2 loop (xxh3_wide.hpp)
    void* state_ = nullptr;
};

struct Slot_result {
    HashValue hash;
    std::uint64_t bytes = 0;
    int error = 0;
    const char* stage = nullptr;
    bool abandoned = false;  // stopped part-way: no result to report
};

// Hands results to the sink, in input order when asked: a finished file waits
// until every file before it is out.  The table is sized before reading
// starts, so recording a result allocates nothing.
class Emitter {
public:
    Emitter(const PathList& files, const ReadFilesOptions& o, const ReadFilesSink& sink,
            ReadFilesStats& stats)
        : files_(files), ordered_(o.ordered), sink_(sink), stats_(stats) {
        if (ordered_) {
            results_.resize(files.size());
            done_ = std::make_unique<std::atomic<bool>[]>(files.size());
        }
    }
    // Ring and sync engines: called from one thread.
    void finish(std::size_t i, const Slot_result& r) {
        if (!ordered_) {
            emit(i, r);
            return;
        }
        results_[i] = r;
        done_[i].store(true, std::memory_order_release);
        while (next_ < files_.size() && done_[next_].load(std::memory_order_acquire)) {
            emit(next_, results_[next_]);
            ++next_;
        }
    }
    // Threadpool: workers record, the calling thread emits.
    void record(std::size_t i, const Slot_result& r) {
        if (!ordered_) {
            std::lock_guard lock(mutex_);
            emit(i, r);
            return;
        }
        results_[i] = r;
        // seq_cst with the mirror-image pair in drain_in_order(): either the
        // emitter sees this file done, or this sees the emitter waiting for it.
        done_[i].store(true, std::memory_order_seq_cst);
        if (waiting_for_.load(std::memory_order_seq_cst) == i) {
            wake_.fetch_add(1, std::memory_order_seq_cst);
            wake_.notify_one();
        }
    }
    // Threadpool and rings: how many threads record results, and each one
    // saying it is done.  After a stop some files are never recorded, so the
    // emitter stops waiting once every thread has exited.
    void expect_workers(unsigned n) noexcept { workers_ = n; }
    void worker_exited() noexcept {
        exited_.fetch_add(1, std::memory_order_seq_cst);
        wake_.fetch_add(1, std::memory_order_seq_cst);
        wake_.notify_one();
    }
    void drain_in_order() {
        if (!ordered_) return;
        const std::size_t n = files_.size();
        for (;;) {
            // Read before emitting: a worker that exits later bumps wake_ below.
            const bool all_exited = exited_.load(std::memory_order_seq_cst) == workers_;
            while (next_ < n && done_[next_].load(std::memory_order_acquire)) {
                emit(next_, results_[next_]);
                ++next_;
            }
            if (next_ == n || all_exited) return;
            // Wait for a file well ahead of the next one, woken only by the
            // worker that finishes it: the workers finish files roughly in
            // order, so one wake-up emits a run of them, instead of a futex
            // wait (and the yields before it) per file.
            std::size_t target = std::min(next_ + kWaitAhead, n - 1);
            if (done_[target].load(std::memory_order_acquire)) target = next_;
            waiting_for_.store(target, std::memory_order_seq_cst);
            const unsigned seen = wake_.load(std::memory_order_seq_cst);
            if (exited_.load(std::memory_order_seq_cst) == workers_) continue;
            if (!done_[target].load(std::memory_order_seq_cst))
                wake_.wait(seen, std::memory_order_seq_cst);
        }
    }

private:
    void emit(std::size_t i, const Slot_result& r) {
        // In order, nothing follows a file that was abandoned: what is
        // printed is always a complete prefix of the input.
        if (r.abandoned) cut_ = ordered_;
        if (r.abandoned || cut_) return;
        if (r.error) {
            ++stats_.failed;
        } else {
            ++stats_.files;
            stats_.bytes += r.bytes;
        }
        if (sink_.file)
            sink_.file(FileResult{files_[i], r.hash.low, r.bytes, r.error, r.stage, r.hash.high});
    }

    static constexpr std::size_t kWaitAhead = 64;
    const PathList& files_;
    bool ordered_;
    const ReadFilesSink& sink_;
    ReadFilesStats& stats_;
    std::vector<Slot_result> results_;
    std::unique_ptr<std::atomic<bool>[]> done_;
    std::atomic<std::size_t> waiting_for_{~std::size_t{0}};  // the file drain_in_order() sleeps on
    std::atomic<unsigned> wake_{0};                          // bumped to wake it
    std::size_t next_ = 0;
    unsigned workers_ = 0;
    std::atomic<unsigned> exited_{0};
    bool cut_ = false;
    std::mutex mutex_;
};

// What one thread needs to read files the blocking way: a buffer and a hash
// state, made once and reused for every file.
class BlockingReader {
public:
    explicit BlockingReader(const ReadFilesOptions& o)
        : o_(o),
          bs_(o.block_size),
          hash_(o.hash),
          buf_(read_buffer(o.block_size, "a block")),
          st_(o.algo) {}
    BlockingReader(const BlockingReader&) = delete;
    BlockingReader& operator=(const BlockingReader&) = delete;

    // open, read to end of file (st_size is not trusted: /proc files say 0), close.
    Slot_result read(const char* path, std::uint64_t& syscalls);

private:
    const ReadFilesOptions& o_;
    std::size_t bs_;
    bool hash_;
    Buffer buf_;
    Hasher st_;
};

// The threadpool engine's workers: --threads, or 8.
unsigned threadpool_workers(const ReadFilesOptions& o) noexcept;
void run_sync(const PathList& files, const ReadFilesOptions& o, Emitter& out,
              ReadFilesStats& stats);
void run_threadpool(const PathList& files, const ReadFilesOptions& o, Emitter& out,
                    ReadFilesStats& stats);

// ---- handing out files --------------------------------------------------------

// Gives file indexes, in input order, to one reader or several.  Each reader
// takes a run of `chunk` files at a time, so threads touch the shared counter
// once per run, not once per file, and nearby files stay on one ring.
class FileFeed {
public:
    FileFeed(std::size_t files, std::size_t chunk, const ReadFilesOptions& o)
        : files_(files), chunk_(std::max<std::size_t>(1, chunk)), o_(o) {}

    class Cursor {
    public:
        explicit Cursor(FileFeed& feed) : feed_(feed) {}
        bool take(std::size_t& file) noexcept {
            if (stopping(feed_.o_)) return false;
            if (cur_ == end_) {
                const std::size_t first =
                    feed_.next_.fetch_add(feed_.chunk_, std::memory_order_relaxed);
                if (first >= feed_.files_) return false;
                cur_ = first;
                end_ = std::min(first + feed_.chunk_, feed_.files_);
            }
            file = cur_++;
            return true;
        }
        // Files taken but not started: [cur, end).
        void untaken(std::vector<std::size_t>& out) {
            for (; cur_ < end_; ++cur_) out.push_back(cur_);
        }

    private:
        FileFeed& feed_;
        std::size_t cur_ = 0, end_ = 0;
    };

private:
    std::size_t files_, chunk_;
    const ReadFilesOptions& o_;
    std::atomic<std::size_t> next_{0};
};

// The ring engine (readfiles_ring.cpp).
unsigned ring_threads(const ReadFilesOptions& o);
unsigned ring_entries(const ReadFilesOptions& o);
// One ring on the calling thread.  False, having read nothing, when the ring
// refuses what the reader needs (the sparse file table of 5.19): the caller
// falls back to the blocking engine.
bool run_ring(Ring& ring, const FileList& list, const ReadFilesOptions& o, Emitter& out,
              ReadFilesStats& stats, const ReadFilesSink& sink);
// Several rings, one per thread (see readfiles_ring.cpp).
void run_rings(const FileList& list, const ReadFilesOptions& o, unsigned nthreads, Emitter& out,
               ReadFilesStats& stats, const ReadFilesSink& sink);

}  // namespace uringkit::fs::readfiles_detail
