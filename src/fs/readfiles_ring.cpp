// readfiles' ring engine: each file an open -> read -> read chain on a
// direct descriptor, slots reused as chains finish, one ring per thread.
#include "readfiles_internal.hpp"

#include "cli/size.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/kernel_owned.hpp"
#include "uringkit/sys/error.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>

namespace uringkit::fs::readfiles_detail {

using detail::make_ring;

namespace {

// ---- the ring engine ---------------------------------------------------------

// user_data: slot << 3 | step.
enum Step : std::uint64_t { kOpen, kRead1, kRead2, kClose, kContOpen, kContRead, kContClose };

class RingReader {
public:
    // `threaded`: one of several readers, each on its own thread and ring;
    // results are recorded for the calling thread to emit.
    RingReader(Ring& ring, const FileList& list, const ReadFilesOptions& o, Emitter& out,
               FileFeed::Cursor& feed, bool threaded)
        : ring_(ring),
          files_(list.paths),
          eof_(list.short_read_is_eof),
          o_(o),
          out_(out),
          feed_(feed),
          threaded_(threaded),
          nslots_(static_cast<unsigned>(std::min<std::size_t>(o.inflight, list.paths.size()))),
          slots_(nslots_),
          bufs_(read_buffer(std::size_t{nslots_} * 2 * o.block_size,
                            "2 x " + cli::format_bytes(o.block_size) + " for each of " +
                                std::to_string(nslots_) + " files in flight")) {
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
            hashers_.push_back(std::make_unique<Hasher>(o.algo));
            slots_[s].state = hashers_.back().get();
            free_.push_back(nslots_ - 1 - s);
        }
    }
    ~RingReader() {
        // run() threw with reads in flight: the kernel may still write into
        // bufs_ after this (closing a ring does not wait for its requests),
        // so keep that memory for the rest of the process instead of freeing it.
        if (outstanding_ > 0) keep_for_kernel(bufs_.release());
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
            const unsigned reaped =
                ring_.for_each_completion([this](const Completion& c) { complete(c); });
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
        Hasher* state = nullptr;
        std::uint64_t total = 0;
        int open_res = 0, r1 = 0, r2 = 0;
        int pending = 0;
        int error = 0;
        const char* stage = nullptr;
        bool short_read_is_eof = false;
        bool abandoned = false;  // stopped part-way (ReadFilesOptions::stop)
    };

    char* buf(unsigned slot, int half) const noexcept {
        return bufs_.get() +
               (std::size_t{slot} * 2 + static_cast<std::size_t>(half)) * o_.block_size;
    }
    std::uint64_t ud(unsigned slot, Step step) const noexcept {
        return std::uint64_t{slot} << 3 | step;
    }

    template <class Off>
    Sqe read_op(unsigned slot, int half, Off off) noexcept {
        const auto len = static_cast<std::uint32_t>(o_.block_size);
        if (fixed_buffers_)
            return ring_.prepare(op::ReadFixed(Fixed{slot}, buf(slot, half), len, off, 0));
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
        if (o_.hash) s.state->reset();
        Sqe open = ring_.prepare(
            op::OpenAt(AT_FDCWD, files_.c_str(file), O_RDONLY | O_NOCTTY).into_slot(slot));
        open.user_data(ud(slot, kOpen)).link();
        if (o_.async_open) open.async();
        read_op(slot, 0, ~std::uint64_t{0}).user_data(ud(slot, kRead1)).hardlink();
        if (!s.short_read_is_eof)
            read_op(slot, 1, ~std::uint64_t{0}).user_data(ud(slot, kRead2)).hardlink();
        ring_.prepare(op::Close(Fixed{slot})).user_data(ud(slot, kClose));
        s.pending = s.short_read_is_eof ? 3 : 4;
        outstanding_ += static_cast<unsigned>(s.pending);
        ++active_;
    }

    void consume(Slot& s, unsigned slot, int half, int n) noexcept {
        if (o_.hash) s.state->update(buf(slot, half), static_cast<std::size_t>(n));
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
        ring_
            .prepare(
                op::OpenAt(AT_FDCWD, files_.c_str(s.file), O_RDONLY | O_NOCTTY).into_slot(slot))
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
            const int r = ring_.reserve(next == Next::reopen ? 2 : 1,
                                        [this](const Completion& c) { complete(c); });
            if (r < 0) throw RingError("io_uring_enter", r);  // unfinished() reports the file
            --slots_[slot].pending;
            switch (next) {
                case Next::reopen:
                    reopen(slot);
                    break;
                case Next::read:
                    next_read(slot);
                    break;
                case Next::close:
                    close(slot);
                    break;
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
            case kOpen:
                s.open_res = c.res;
                break;
            case kRead1:
                s.r1 = c.res;
                break;
            case kRead2:
                s.r2 = c.res;
                break;
            case kClose:
                break;  // removing a direct descriptor cannot fail once the open worked
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
            case kContClose:
                break;
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
        if (o_.hash && !s.error) r.hash = s.state->digest();
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
    std::vector<std::unique_ptr<Hasher>> hashers_;  // one per slot, slots_[i].state
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

}  // namespace

// One ring per CPU, up to 4: beyond that the directory and inode locks of a
// shared tree, not the CPUs, set the pace.
unsigned ring_threads(const ReadFilesOptions& o) {
    if (o.threads) return o.threads;
    return std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
}

unsigned ring_entries(const ReadFilesOptions& o) {
    return pow2_at_least(o.inflight * 4);
}

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
    std::vector<std::string> trouble(nthreads), fallback(nthreads);
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
                try {
                    BlockingReader blocking(o);
                    for (std::size_t f : left) out.record(f, blocking.read(files.c_str(f), calls));
                    for (std::size_t i; cursor.take(i);)
                        out.record(i, blocking.read(files.c_str(i), calls));
                    fallback[t] = "its files were read with blocking calls";
                } catch (const BufferError& e) {
                    // Not even one block: its files fail with ENOMEM, each reported.
                    fallback[t] = std::string("its files could not be read: ") + e.what();
                    const Slot_result no_memory{{}, 0, ENOMEM, "read", false};
                    for (std::size_t f : left) out.record(f, no_memory);
                    for (std::size_t i; cursor.take(i);) out.record(i, no_memory);
                }
            }
            syscalls[t] = calls;
            out.worker_exited();
        });
    out.drain_in_order();
    for (std::thread& th : pool) th.join();
    for (unsigned t = 0; t < nthreads; ++t) {
        stats.syscalls += syscalls[t];
        if (!trouble[t].empty() && sink.note)
            sink.note({}, 0,
                      "ring thread " + std::to_string(t) + ": " + trouble[t] + "; " + fallback[t]);
    }
}

bool run_ring(Ring& ring, const FileList& list, const ReadFilesOptions& o, Emitter& out,
              ReadFilesStats& stats, const ReadFilesSink& sink) {
    FileFeed feed(list.paths.size(), list.paths.size(), o);
    FileFeed::Cursor cursor(feed);
    std::optional<RingReader> reader;
    try {
        reader.emplace(ring, list, o, out, cursor, false);
    } catch (const RingError& e) {
        // The sparse file table (5.19) is refused: EINVAL on older kernels.
        if (sink.note)
            sink.note(
                {}, 0,
                std::string("io_uring unusable (") + e.what() + "); reading with the sync engine");
        return false;
    } catch (const BufferError& e) {
        // The blocking reader needs one block where the ring needs two per file in flight.
        if (sink.note)
            sink.note(
                {}, 0,
                std::string(e.what()) + "; reading with the sync engine, one block at a time");
        return false;
    }
    stats.syscalls += reader->register_calls();
    reader->run();
    return true;
}

}  // namespace uringkit::fs::readfiles_detail
