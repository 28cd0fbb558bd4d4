#include "uringkit/fs/readfiles.hpp"

#include "uringkit/fs/walk.hpp"
#include "shared.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/kernel_owned.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/error.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

namespace uringkit::fs {
namespace {

using detail::aligned_buffer;
using detail::Buffer;
using detail::make_ring;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

bool retryable(int res) noexcept { return res == -EINTR || res == -EAGAIN; }

// ReadFilesOptions::stop was set: start nothing more, abandon reads in flight.
bool stopping(const ReadFilesOptions& o) noexcept {
    return o.stop && o.stop->load(std::memory_order_relaxed);
}

// ---- collecting the files --------------------------------------------------

struct Candidate {
    bool needs_stat;          // a symlink or DT_UNKNOWN entry: its target decides
    bool short_read_is_eof;   // found in a directory of a disk-like file system
};

// The files to read, and for each whether a short read already means end of file.
struct FileList {
    PathList paths;
    std::vector<bool> short_read_is_eof;
};

class Collector {
public:
    Collector(const ReadFilesSink& sink, ReadFilesStats& stats) : sink_(sink), stats_(stats) {}

    FileList collect(std::span<const std::string> inputs, Ring* ring) {
        // Explicit inputs: stat them all (following links) in one batch.
        std::vector<const char*> ptrs;
        for (const std::string& in : inputs) ptrs.push_back(in.c_str());
        std::vector<struct statx> st(inputs.size());
        std::vector<int> res(inputs.size());
        if (const int r = stat_batch(ring, ptrs, 0, STATX_TYPE, st, res, stats_.syscalls); r < 0)
            throw RingError("io_uring_enter", r);
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            if (res[i] < 0) {
                fail(inputs[i], -res[i]);
            } else if (S_ISDIR(st[i].stx_mode)) {
                walk(inputs[i]);
            } else if (S_ISREG(st[i].stx_mode)) {
                add(inputs[i], false, false);
            } else {
                skip(inputs[i], st[i].stx_mode);
            }
        }
        return resolve(ring);
    }

private:
    void add(std::string_view path, bool needs_stat, bool eof) {
        candidates_.push(path);
        kinds_.push_back({needs_stat, eof});
        pending_ += needs_stat;
    }
    void fail(std::string_view path, int err) {
        ++stats_.failed;
        if (sink_.note) sink_.note(path, err, "");
    }
    void skip(std::string_view path, mode_t mode) {
        ++stats_.skipped;
        if (sink_.note) sink_.note(path, 0, std::string("skipped: ") + kind_name(mode) + ", not read");
    }

    void walk(const std::string& dir) {
        std::vector<DirEntry> entries;
        bool eof = false;
        const int r = read_directory(dir.c_str(), entries, stats_.syscalls, &eof);
        if (r < 0) fail(dir, -r);
        std::string path;
        for (const DirEntry& e : entries) {
            path = dir;
            if (path.empty() || path.back() != '/') path += '/';
            path += e.name;
            switch (e.type) {
            case EntryType::regular: add(path, false, eof); break;
            case EntryType::directory: walk(path); break;
            case EntryType::symlink:
            case EntryType::unknown: add(path, true, false); break;
            case EntryType::other: {
                struct stat sb{};
                ++stats_.syscalls;
                skip(path, ::lstat(path.c_str(), &sb) == 0 ? sb.st_mode : S_IFSOCK);
                break;
            }
            }
        }
    }

    // Symlinks and entries of unknown type: stat the targets in one batch,
    // keep the regular files in their place in the order.
    FileList resolve(Ring* ring) {
        FileList out;
        if (pending_ == 0) {
            out.paths = std::move(candidates_);
            for (const Candidate& k : kinds_) out.short_read_is_eof.push_back(k.short_read_is_eof);
            return out;
        }
        std::vector<const char*> ptrs;
        std::vector<std::size_t> which;
        for (std::size_t i = 0; i < candidates_.size(); ++i)
            if (kinds_[i].needs_stat) {
                ptrs.push_back(candidates_.c_str(i));
                which.push_back(i);
            }
        std::vector<struct statx> st(ptrs.size());
        std::vector<int> res(ptrs.size());
        if (const int r = stat_batch(ring, ptrs, 0, STATX_TYPE, st, res, stats_.syscalls); r < 0)
            throw RingError("io_uring_enter", r);
        std::size_t k = 0;
        for (std::size_t i = 0; i < candidates_.size(); ++i) {
            if (!kinds_[i].needs_stat) {
                out.paths.push(candidates_[i]);
                out.short_read_is_eof.push_back(kinds_[i].short_read_is_eof);
                continue;
            }
            const std::size_t j = k++;
            if (res[j] < 0)
                fail(candidates_[i], -res[j]);
            else if (S_ISREG(st[j].stx_mode)) {
                out.paths.push(candidates_[i]);
                out.short_read_is_eof.push_back(false);  // the target may be anywhere
            }
            else if (S_ISDIR(st[j].stx_mode)) {
                ++stats_.skipped;
                if (sink_.note) sink_.note(candidates_[i], 0, "skipped: symbolic link to a directory, not followed");
            } else
                skip(candidates_[i], st[j].stx_mode);
        }
        return out;
    }

    const ReadFilesSink& sink_;
    ReadFilesStats& stats_;
    PathList candidates_;
    std::vector<Candidate> kinds_;
    std::size_t pending_ = 0;
};

// ---- results in order --------------------------------------------------------

struct Slot_result {
    std::uint64_t hash = 0;
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
    Emitter(const PathList& files, const ReadFilesOptions& o, const ReadFilesSink& sink, ReadFilesStats& stats)
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
            if (!done_[target].load(std::memory_order_seq_cst)) wake_.wait(seen, std::memory_order_seq_cst);
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
        if (sink_.file) sink_.file(FileResult{files_[i], r.hash, r.bytes, r.error, r.stage});
    }

    static constexpr std::size_t kWaitAhead = 64;
    const PathList& files_;
    bool ordered_;
    const ReadFilesSink& sink_;
    ReadFilesStats& stats_;
    std::vector<Slot_result> results_;
    std::unique_ptr<std::atomic<bool>[]> done_;
    std::atomic<std::size_t> waiting_for_{~std::size_t{0}};  // the file drain_in_order() sleeps on
    std::atomic<unsigned> wake_{0};                           // bumped to wake it
    std::size_t next_ = 0;
    unsigned workers_ = 0;
    std::atomic<unsigned> exited_{0};
    bool cut_ = false;
    std::mutex mutex_;
};

// ---- sync and threadpool engines ------------------------------------------------

// What one thread needs to read files the blocking way: a buffer and a hash
// state, made once and reused for every file.
class BlockingReader {
public:
    explicit BlockingReader(const ReadFilesOptions& o)
        : o_(o), bs_(o.block_size), hash_(o.hash), buf_(aligned_buffer(o.block_size)), st_(XXH64_createState()) {}
    ~BlockingReader() { XXH64_freeState(st_); }
    BlockingReader(const BlockingReader&) = delete;
    BlockingReader& operator=(const BlockingReader&) = delete;

    // open, read to end of file (st_size is not trusted: /proc files say 0), close.
    Slot_result read(const char* path, std::uint64_t& syscalls);

private:
    const ReadFilesOptions& o_;
    std::size_t bs_;
    bool hash_;
    Buffer buf_;
    XXH64_state_t* st_;
};

Slot_result BlockingReader::read(const char* path, std::uint64_t& syscalls) {
    Slot_result r;
    ++syscalls;
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        r.error = errno;
        r.stage = "open";
        return r;
    }
    if (hash_) XXH64_reset(st_, 0);
    for (;;) {
        ++syscalls;
        const ssize_t n = ::read(fd, buf_.get(), bs_);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            r.error = errno;
            r.stage = "read";
            break;
        }
        if (n == 0) break;
        if (hash_) XXH64_update(st_, buf_.get(), static_cast<std::size_t>(n));
        r.bytes += static_cast<std::uint64_t>(n);
        if (stopping(o_)) {
            r.abandoned = true;
            break;
        }
    }
    ++syscalls;
    ::close(fd);
    if (hash_ && !r.error) r.hash = XXH64_digest(st_);
    return r;
}

void run_sync(const PathList& files, const ReadFilesOptions& o, Emitter& out, ReadFilesStats& stats) {
    BlockingReader reader(o);
    for (std::size_t i = 0; i < files.size() && !stopping(o); ++i)
        out.finish(i, reader.read(files.c_str(i), stats.syscalls));
}

void run_threadpool(const PathList& files, const ReadFilesOptions& o, Emitter& out, ReadFilesStats& stats) {
    const unsigned nthreads = std::max(1u, std::min<unsigned>(o.threads ? o.threads : 8, static_cast<unsigned>(files.size())));
    std::atomic<std::size_t> next{0};
    std::vector<std::uint64_t> syscalls(nthreads, 0);
    std::vector<std::thread> pool;
    out.expect_workers(nthreads);
    for (unsigned t = 0; t < nthreads; ++t)
        pool.emplace_back([&, t] {
            BlockingReader reader(o);
            std::uint64_t calls = 0;
            for (std::size_t i; !stopping(o) && (i = next.fetch_add(1, std::memory_order_relaxed)) < files.size();)
                out.record(i, reader.read(files.c_str(i), calls));
            syscalls[t] = calls;
            out.worker_exited();
        });
    out.drain_in_order();
    for (std::thread& th : pool) th.join();
    for (std::uint64_t c : syscalls) stats.syscalls += c;
}

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
                const std::size_t first = feed_.next_.fetch_add(feed_.chunk_, std::memory_order_relaxed);
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

// ---- the ring engine ---------------------------------------------------------

// user_data: slot << 3 | step.
enum Step : std::uint64_t { kOpen, kRead1, kRead2, kClose, kContOpen, kContRead, kContClose };

class RingReader {
public:
    // `threaded`: one of several readers, each on its own thread and ring;
    // results are recorded for the calling thread to emit.
    RingReader(Ring& ring, const FileList& list, const ReadFilesOptions& o, Emitter& out, FileFeed::Cursor& feed,
               bool threaded)
        : ring_(ring), files_(list.paths), eof_(list.short_read_is_eof), o_(o), out_(out), feed_(feed),
          threaded_(threaded),
          nslots_(static_cast<unsigned>(std::min<std::size_t>(o.inflight, list.paths.size()))),
          slots_(nslots_), bufs_(aligned_buffer(std::size_t{nslots_} * 2 * o.block_size)) {
        ring_.register_files_sparse(nslots_);
        const iovec iov{bufs_.get(), std::size_t{nslots_} * 2 * o.block_size};
        try {
            ring_.register_buffers({&iov, 1});
            fixed_buffers_ = true;
        } catch (const RingError&) {
            fixed_buffers_ = false;  // e.g. RLIMIT_MEMLOCK on an old kernel: plain reads still work
        }
        followups_.reserve(nslots_);
        for (unsigned s = 0; s < nslots_; ++s) {
            slots_[s].state = XXH64_createState();
            free_.push_back(nslots_ - 1 - s);
        }
    }
    ~RingReader() {
        // run() threw with reads in flight: the kernel may still write into
        // bufs_ after this (closing a ring does not wait for its requests),
        // so keep that memory for the rest of the process instead of freeing it.
        if (outstanding_ > 0) keep_for_kernel(bufs_.release());
        for (Slot& s : slots_) XXH64_freeState(s.state);
    }
    RingReader(const RingReader&) = delete;
    RingReader& operator=(const RingReader&) = delete;

    // Returns the register calls made (for the system-call count).
    unsigned register_calls() const noexcept { return 2; }

    void run() {
        bool more = true;
        unsigned stalls = 0;
        while (more || active_ > 0) {
            run_followups();
            while (more && !free_.empty() && ring_.sq_space_left() >= 4) {
                std::size_t file;
                if (!feed_.take(file)) {
                    more = false;
                    break;
                }
                start(free_.back(), file);
                free_.pop_back();
            }
            if (active_ == 0) break;  // the feed ran dry just now: nothing to wait for
            // Wait for half of what is outstanding, not for one CQE: with
            // DEFER_TASKRUN the kernel runs the chains' next steps while we
            // wait, so one io_uring_enter moves many files along.  (Waiting
            // for all of it stalls the pipeline behind the slowest file.)
            const unsigned want = std::max(1u, outstanding_ / 2);
            const int r = ring_.submit_and_wait(want);
            const unsigned reaped = ring_.for_each_completion([this](const Completion& c) { complete(c); });
            if (r >= 0 || reaped > 0) {
                stalls = 0;
                continue;
            }
            // CQ backpressure (-EBUSY) or no memory for requests (-EAGAIN)
            // eases once completions come; another error, or backpressure
            // that never eases, ends the run.
            if ((r == -EBUSY || r == -EAGAIN) && ++stalls <= Ring::kReserveStalls) {
                (void)ring_.wait_for_completion(Ring::kReserveStallWait);
                continue;
            }
            throw RingError("io_uring_enter", r);
        }
    }

    // After run() threw: the files this reader started and did not finish.
    void unfinished(std::vector<std::size_t>& out) const {
        std::vector<bool> idle(nslots_, false);
        for (unsigned f : free_) idle[f] = true;
        for (unsigned i = 0; i < nslots_; ++i)
            if (!idle[i]) out.push_back(slots_[i].file);
    }

private:
    enum class Next : std::uint8_t { reopen, read, close };
    struct Slot {
        std::size_t file = 0;
        XXH64_state_t* state = nullptr;
        std::uint64_t total = 0;
        int open_res = 0, r1 = 0, r2 = 0;
        int pending = 0;
        int error = 0;
        const char* stage = nullptr;
        bool short_read_is_eof = false;
        bool abandoned = false;  // stopped part-way (ReadFilesOptions::stop)
    };

    char* buf(unsigned slot, int half) const noexcept {
        return bufs_.get() + (std::size_t{slot} * 2 + static_cast<std::size_t>(half)) * o_.block_size;
    }
    std::uint64_t ud(unsigned slot, Step step) const noexcept { return std::uint64_t{slot} << 3 | step; }

    template <class Off>
    Sqe read_op(unsigned slot, int half, Off off) noexcept {
        const auto len = static_cast<std::uint32_t>(o_.block_size);
        if (fixed_buffers_) return ring_.prepare(op::ReadFixed(Fixed{slot}, buf(slot, half), len, off, 0));
        return ring_.prepare(op::Read(Fixed{slot}, buf(slot, half), len, off));
    }

    // open -> read (A) -> read (B) -> close.  Both reads use the file position
    // (offset -1), so B continues wherever A stopped; A is hard-linked so that
    // a short read, which is the normal end of a small file, does not cancel
    // B; B hard-links the close, which therefore runs whatever the reads did.
    // A failed open cancels all three (the slot stays empty).
    //
    // On a disk-like file system a short read is already the end of the file,
    // so the chain is open -> read -> close: three SQEs per file.
    void start(unsigned slot, std::size_t file) {
        Slot& s = slots_[slot];
        s = Slot{file, s.state, 0, 0, 0, 0, 0, 0, nullptr, eof_[file]};
        if (o_.hash) XXH64_reset(s.state, 0);
        Sqe open = ring_.prepare(op::OpenAt(AT_FDCWD, files_.c_str(file), O_RDONLY | O_NOCTTY).into_slot(slot));
        open.user_data(ud(slot, kOpen)).link();
        if (o_.async_open) open.async();
        read_op(slot, 0, ~std::uint64_t{0}).user_data(ud(slot, kRead1)).hardlink();
        if (!s.short_read_is_eof) read_op(slot, 1, ~std::uint64_t{0}).user_data(ud(slot, kRead2)).hardlink();
        ring_.prepare(op::Close(Fixed{slot})).user_data(ud(slot, kClose));
        s.pending = s.short_read_is_eof ? 3 : 4;
        outstanding_ += static_cast<unsigned>(s.pending);
        ++active_;
    }

    void consume(Slot& s, unsigned slot, int half, int n) noexcept {
        if (o_.hash) XXH64_update(s.state, buf(slot, half), static_cast<std::size_t>(n));
        s.total += static_cast<std::uint64_t>(n);
    }
    void fail(Slot& s, int res, const char* stage) noexcept {
        if (!s.error) {
            s.error = -res;
            s.stage = stage;
        }
    }

    // The file is still short of its end: open it again and read on from
    // `total` with one read at a time (pread semantics, explicit offsets).
    void reopen(unsigned slot) {
        Slot& s = slots_[slot];
        if (stopping(o_)) {  // not read to its end yet, and no more reads now
            s.abandoned = true;
            return finish(slot);
        }
        ring_.prepare(op::OpenAt(AT_FDCWD, files_.c_str(s.file), O_RDONLY | O_NOCTTY).into_slot(slot))
            .user_data(ud(slot, kContOpen))
            .link();
        read_op(slot, 0, s.total).user_data(ud(slot, kContRead));
        s.pending = 2;
        outstanding_ += 2;
    }
    void next_read(unsigned slot) {
        read_op(slot, 0, slots_[slot].total).user_data(ud(slot, kContRead));
        ++slots_[slot].pending;
        ++outstanding_;
    }
    void close(unsigned slot) {
        ring_.prepare(op::Close(Fixed{slot})).user_data(ud(slot, kContClose));
        ++slots_[slot].pending;
        ++outstanding_;
    }

    // A completion decides a slot's next step; it is prepared here, after the
    // reap, where making room in the SQ may reap again (CQ backpressure) and
    // a ring that cannot submit ends the run with its error.
    // The owed step counts as pending, so the slot is not finished meanwhile.
    void follow_up(unsigned slot, Next next) {
        ++slots_[slot].pending;
        followups_.push_back({slot, next});
    }
    void run_followups() {
        while (!followups_.empty()) {
            const auto [slot, next] = followups_.back();
            followups_.pop_back();
            const int r = ring_.reserve(next == Next::reopen ? 2 : 1, [this](const Completion& c) { complete(c); });
            if (r < 0) throw RingError("io_uring_enter", r);  // unfinished() reports the file
            --slots_[slot].pending;
            switch (next) {
            case Next::reopen: reopen(slot); break;
            case Next::read: next_read(slot); break;
            case Next::close: close(slot); break;
            }
        }
    }

    void complete(const Completion& c) {
        --outstanding_;
        const auto slot = static_cast<unsigned>(c.user_data >> 3);
        const auto step = static_cast<Step>(c.user_data & 7);
        Slot& s = slots_[slot];
        --s.pending;
        switch (step) {
        case kOpen: s.open_res = c.res; break;
        case kRead1: s.r1 = c.res; break;
        case kRead2: s.r2 = c.res; break;
        case kClose: break;  // removing a direct descriptor cannot fail once the open worked
        case kContOpen:
            if (c.res < 0) fail(s, c.res, "open");
            break;
        case kContRead:
            if (c.res == -ECANCELED) break;  // the reopen failed
            if (c.res > 0) {
                consume(s, slot, 0, c.res);
                if (stopping(o_)) {  // abandon the file: close it, report nothing
                    s.abandoned = true;
                    follow_up(slot, Next::close);
                } else {
                    follow_up(slot, Next::read);
                }
            } else if (retryable(c.res)) {
                follow_up(slot, Next::read);
            } else {
                if (c.res < 0) fail(s, c.res, "read");
                follow_up(slot, Next::close);
            }
            break;
        case kContClose: break;
        }
        if (s.pending > 0) return;
        if (step <= kClose)
            end_of_chain(slot);
        else
            finish(slot);
    }

    // All four CQEs of the first chain are in: hash what the two reads got, in
    // order, and decide whether the file is complete.
    void end_of_chain(unsigned slot) {
        Slot& s = slots_[slot];
        if (s.open_res < 0) {
            fail(s, s.open_res, "open");
            return finish(slot);
        }
        if (retryable(s.r1)) return follow_up(slot, Next::reopen);
        if (s.r1 < 0) {
            fail(s, s.r1, "read");
            return finish(slot);
        }
        consume(s, slot, 0, s.r1);
        if (s.short_read_is_eof) {
            if (static_cast<std::size_t>(s.r1) < o_.block_size) return finish(slot);
            return follow_up(slot, Next::reopen);  // a full block: there may be more
        }
        if (retryable(s.r2)) return follow_up(slot, Next::reopen);
        if (s.r2 < 0) {
            fail(s, s.r2, "read");
            return finish(slot);
        }
        if (s.r2 == 0) return finish(slot);  // end of file confirmed
        consume(s, slot, 1, s.r2);
        follow_up(slot, Next::reopen);
    }

    void finish(unsigned slot) {
        Slot& s = slots_[slot];
        Slot_result r;
        r.bytes = s.total;
        r.error = s.error;
        r.stage = s.stage;
        r.abandoned = s.abandoned;
        if (o_.hash && !s.error) r.hash = XXH64_digest(s.state);
        if (threaded_)
            out_.record(s.file, r);
        else
            out_.finish(s.file, r);
        free_.push_back(slot);
        --active_;
    }

    Ring& ring_;
    const PathList& files_;
    const std::vector<bool>& eof_;
    const ReadFilesOptions& o_;
    Emitter& out_;
    FileFeed::Cursor& feed_;
    bool threaded_;
    unsigned nslots_;
    std::vector<Slot> slots_;
    std::vector<unsigned> free_;
    Buffer bufs_;
    bool fixed_buffers_ = false;
    std::size_t active_ = 0;
    unsigned outstanding_ = 0;  // SQEs prepared whose CQE has not been reaped
    std::vector<std::pair<unsigned, Next>> followups_;  // at most one per slot
};

unsigned pow2_at_least(unsigned n) {
    unsigned p = 1;
    while (p < n) p <<= 1;
    return p;
}

// One ring per CPU, up to 4: beyond that the directory and inode locks of a
// shared tree, not the CPUs, set the pace.
unsigned ring_threads(const ReadFilesOptions& o) {
    if (o.threads) return o.threads;
    return std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
}

unsigned ring_entries(const ReadFilesOptions& o) { return pow2_at_least(o.inflight * 4); }

// Several rings, one per thread, each running its own chains on its own CPU;
// the calling thread emits the results in order.  A thread whose ring cannot
// be set up, or whose ring fails mid-way, reads its files (also the ones it
// had in flight) the blocking way, so no file is lost or reported twice.
void run_rings(const FileList& list, const ReadFilesOptions& o, unsigned nthreads, Emitter& out,
               ReadFilesStats& stats, const ReadFilesSink& sink) {
    const PathList& files = list.paths;
    // Runs of inflight/2 files: enough to fill a ring between visits to the
    // counter, small enough that the threads finish together.
    FileFeed feed(files.size(), std::max(1u, o.inflight / 2), o);
    std::vector<std::uint64_t> syscalls(nthreads, 0);
    std::vector<std::string> trouble(nthreads);
    std::vector<std::thread> pool;
    out.expect_workers(nthreads);
    for (unsigned t = 0; t < nthreads; ++t)
        pool.emplace_back([&, t] {
            FileFeed::Cursor cursor(feed);
            std::vector<std::size_t> left;
            std::uint64_t calls = 0;
            std::string why;
            // Created here: a SINGLE_ISSUER ring belongs to the thread that sets it up.
            if (std::optional<Ring> ring = make_ring(ring_entries(o), why)) {
                std::optional<RingReader> reader;
                try {
                    reader.emplace(*ring, list, o, out, cursor, true);
                    calls += reader->register_calls();
                    reader->run();
                } catch (const std::exception& e) {
                    trouble[t] = e.what();
                    if (reader) reader->unfinished(left);
                    cursor.untaken(left);
                }
                calls += ring->enter_calls();
            } else {
                trouble[t] = "io_uring unavailable (" + why + ")";
            }
            if (!trouble[t].empty()) {
                BlockingReader blocking(o);
                for (std::size_t f : left) out.record(f, blocking.read(files.c_str(f), calls));
                for (std::size_t i; cursor.take(i);) out.record(i, blocking.read(files.c_str(i), calls));
            }
            syscalls[t] = calls;
            out.worker_exited();
        });
    out.drain_in_order();
    for (std::thread& th : pool) th.join();
    for (unsigned t = 0; t < nthreads; ++t) {
        stats.syscalls += syscalls[t];
        if (!trouble[t].empty() && sink.note)
            sink.note({}, 0, "ring thread " + std::to_string(t) + ": " + trouble[t] + "; its files were read with blocking calls");
    }
}

}  // namespace

const char* engine_name(ReadEngine e) noexcept {
    switch (e) {
    case ReadEngine::ring: return "ring";
    case ReadEngine::threadpool: return "threadpool";
    case ReadEngine::sync: return "sync";
    }
    return "?";
}

void print_xxhsum_line(std::FILE* out, std::uint64_t hash, std::string_view path) {
    static const char digits[] = "0123456789abcdef";
    char hex[18];
    for (int i = 15; i >= 0; --i, hash >>= 4) hex[i] = digits[hash & 15];
    hex[16] = hex[17] = ' ';
    std::fwrite(hex, 1, sizeof hex, out);
    std::fwrite(path.data(), 1, path.size(), out);
    std::fputc('\n', out);
}

ReadFilesStats read_files(std::span<const std::string> inputs, const ReadFilesOptions& o,
                          const ReadFilesSink& sink) {
    if (o.block_size == 0 || o.block_size > (1u << 30) || o.block_size % 512)
        throw std::invalid_argument("block size must be a multiple of 512 bytes, at most 1 GiB");
    if (o.inflight == 0 || o.inflight > 4096) throw std::invalid_argument("inflight must be 1..4096");
    ReadFilesStats stats;
    stats.engine = o.engine;

    std::optional<Ring> ring;
    if (o.engine == ReadEngine::ring) {
        std::string why;
        ring = make_ring(ring_entries(o), why);
        if (!ring) {
            stats.engine = ReadEngine::sync;
            if (sink.note) sink.note({}, 0, "io_uring unavailable (" + why + "); reading with the sync engine");
        }
    }

    const auto t0 = Clock::now();
    const FileList list = Collector(sink, stats).collect(inputs, ring ? &*ring : nullptr);
    const PathList& files = list.paths;
    stats.walk_seconds = seconds_since(t0);

    const auto t1 = Clock::now();
    Emitter out(files, o, sink, stats);
    if (!files.empty()) {
        switch (stats.engine) {
        case ReadEngine::ring: {
            const auto nthreads = static_cast<unsigned>(
                std::min<std::size_t>(ring_threads(o), (files.size() + o.inflight - 1) / o.inflight));
            if (nthreads > 1) {
                run_rings(list, o, nthreads, out, stats, sink);
                break;
            }
            FileFeed feed(files.size(), files.size(), o);
            FileFeed::Cursor cursor(feed);
            std::optional<RingReader> reader;
            try {
                reader.emplace(*ring, list, o, out, cursor, false);
            } catch (const RingError& e) {
                // The sparse file table (5.19) is refused: EINVAL on older kernels.
                if (sink.note) sink.note({}, 0, std::string("io_uring unusable (") + e.what() + "); reading with the sync engine");
                stats.engine = ReadEngine::sync;
                run_sync(files, o, out, stats);
                break;
            }
            stats.syscalls += reader->register_calls();
            reader->run();
            break;
        }
        case ReadEngine::threadpool: run_threadpool(files, o, out, stats); break;
        case ReadEngine::sync: run_sync(files, o, out, stats); break;
        }
    }
    stats.seconds = seconds_since(t1);
    if (ring) stats.syscalls += ring->enter_calls();
    return stats;
}

}  // namespace uringkit::fs
