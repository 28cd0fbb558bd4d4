// A tree's small files: the thread pool and the linked-chain copier.  Internal to src/fs.
#pragma once

#include "copy_tree.hpp"

#include <span>
#include <vector>

namespace uringkit::fs::detail {

// The thread pool of copy_pool.cpp, for `files`: regular files in
// directories this copy created.  On return `files` holds those to copy
// another way.  Failures are reported; files not started because of a stop
// request are dropped.  A file whose stat is deferred gets it from the worker
// (t.st, t.st_res); one that turns out not to be a regular file goes back
// with its stat still deferred.  The files' directories are pinned in
// `dirs` for the pool's run (the threads create each file relative to its
// directory's descriptor).
//
// Clones on up to CopyOptions::clone_threads threads; back: what the file
// system declined to clone.
void clone_in_pool(Ctx& c, Tree& t, HeldDirs& dirs, FsPair& pair, std::vector<std::size_t>& files);
// Copies with read -> write on up to CopyOptions::copy_threads threads; back:
// deferred files that turn out large or sparse (stat'd), and files that
// ended before their size.
void copy_in_pool(Ctx& c, Tree& t, HeldDirs& dirs, std::vector<std::size_t>& files);
// Whether the tree's regular files (a sample of them) are in the page cache,
// so that copy_in_pool would not wait on the device.
bool tree_is_cached(Ctx& c, const Tree& t);

class ChainCopier {
public:
    // `files`: regular files of at most kSmallMax bytes whose directories
    // this copy created.  Failures are reported through the Ctx as they
    // come; the copy goes on with the next file.
    // Each file is created relative to its directory's descriptor in `dirs`,
    // pinned while its chain is in flight.
    ChainCopier(Ctx& c, const Tree& t, HeldDirs& dirs, std::span<const std::size_t> files);
    // Returns with no chain in flight (or, when the ring fails so that it
    // cannot even be drained, with the buffers kept: c.kernel_holds_buffers).
    void run();
    // Short transfers, to redo on the large-file path.
    const std::vector<std::size_t>& redo() const noexcept { return redo_; }
    const std::vector<std::size_t>& done() const noexcept { return done_; }
    // Files not started because of an interruption or a failed ring.
    const std::vector<std::size_t>& not_started() const noexcept { return not_started_; }
    bool interrupted() const noexcept { return interrupted_; }
    bool ring_failed() const noexcept { return ring_failed_; }

private:
    enum Step : unsigned {
        kOpenSrc,
        kOpenDst,
        kRead,
        kWrite,
        kFsync,
        kStatAfter,
        kCloseSrc,
        kCloseDst,
        kSteps
    };
    struct Slot {
        std::size_t entry = 0;
        int res[kSteps] = {};
        unsigned pending = 0;
    };

    std::uint64_t ud(unsigned slot, Step s) const noexcept;
    bool start(unsigned slot, std::size_t e);
    struct statx* size_after(unsigned slot) const;
    void complete(const Completion& cq);
    void evaluate(unsigned slot);

    Ctx& c_;
    const Tree& t_;
    HeldDirs& dirs_;
    std::span<const std::size_t> files_;
    std::vector<Slot> slots_;
    std::vector<unsigned> free_;
    std::vector<std::size_t> redo_, done_, not_started_;
    unsigned outstanding_ = 0;  // SQEs whose CQE has not been reaped
    bool interrupted_ = false, ring_failed_ = false;
};

}  // namespace uringkit::fs::detail
