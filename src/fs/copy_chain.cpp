// Small files of a tree, one linked chain each on two fixed-file slots:
//   open src -> create dst -> read -> write [-> fsync] -> statx src -> close src -> close dst
// Everything is IOSQE_IO_LINK, so a failure or a short read or write cancels
// the rest of the chain (-ECANCELED); a short transfer is then redone on the
// large-file path, which continues short transfers.  Only files in
// directories this copy created take this path: each is created at its name,
// relative to its directory's held descriptor, with O_EXCL | O_NOFOLLOW, and
// removed again if its chain fails.
#include "copy_chain.hpp"

#include <unistd.h>

#include <algorithm>

namespace uringkit::fs::detail {

ChainCopier::ChainCopier(Ctx& c, const Tree& t, HeldDirs& dirs, std::span<const std::size_t> files)
    : c_(c), t_(t), dirs_(dirs), files_(files), slots_(c.small_slots) {
    for (unsigned s = 0; s < slots_.size(); ++s)
        free_.push_back(static_cast<unsigned>(slots_.size()) - 1 - s);
}

void ChainCopier::run() {
    Ring& ring = *c_.ring;
    std::size_t next = 0;
    while ((next < files_.size() && !ring_failed_) || outstanding_ > 0) {
        if (c_.stop_requested()) interrupted_ = true;
        // A new directory is opened only while the pinned ones leave room
        // in the descriptor budget (each chain pins its file's directory).
        while (!ring_failed_ && !interrupted_ && next < files_.size() && !free_.empty() &&
               ring.sq_space_left() >= kSteps &&
               (dirs_.held(t_.parent[files_[next]]) >= 0 || dirs_.pinned() < dirs_.budget() ||
                outstanding_ == 0)) {
            if (start(free_.back(), files_[next++])) free_.pop_back();
        }
        if (outstanding_ == 0) break;
        const unsigned want = std::max(1u, outstanding_ / 2);
        const int r = ring.submit_and_wait(want);
        if (r < 0 && r != -EBUSY && r != -EAGAIN && r != -EINTR) {
            ring_failed_ = true;
            c_.ring_failed = true;
            c_.report({CopyStatus::failure, errno_message(t_.dst[0], "io_uring_enter", r)});
            break;
        }
        ring.for_each_completion([this](const Completion& cq) { complete(cq); });
    }
    if (outstanding_ > 0 &&
        !drain(
            c_, [this] { return outstanding_; }, [this](const Completion& cq) { complete(cq); })) {
        c_.report({CopyStatus::failure,
                   std::to_string(outstanding_) +
                       " file operations are still in the kernel after io_uring_enter failed; "
                       "their buffers are kept"});
        // Their files were created O_EXCL in directories this copy made:
        // the names go, whatever the kernel still does with the files.
        for (const Slot& s : slots_)
            if (s.pending > 0) {
                ++c_.syscalls();
                ::unlinkat(dirs_.held(t_.parent[s.entry]), t_.name(s.entry), 0);
            }
    }
    if (interrupted_ || ring_failed_)  // what never started is not copied
        for (; next < files_.size(); ++next) not_started_.push_back(files_[next]);
}

std::uint64_t ChainCopier::ud(unsigned slot, Step s) const noexcept {
    return std::uint64_t{slot} << 4 | s;
}

bool ChainCopier::start(unsigned slot, std::size_t e) {
    Ring& ring = *c_.ring;
    const std::size_t dir = t_.parent[e];
    const int dirfd = dirs_.get(dir);
    if (dirfd < 0) {
        c_.report({CopyStatus::failure, dir_failure_message(std::string(t_.dst[dir]), dirfd)});
        return false;
    }
    dirs_.pin(dir);  // until the chain's last completion (evaluate)
    Slot& s = slots_[slot];
    s.entry = e;
    std::fill(std::begin(s.res), std::end(s.res), 0);
    const struct statx& st = t_.st[e];
    const auto size = static_cast<std::uint32_t>(st.stx_size);
    const Fixed a{2 * slot}, b{2 * slot + 1};
    unsigned n = 0;
    ring.prepare(op::OpenAt(AT_FDCWD, t_.src.c_str(e), O_RDONLY | O_NOCTTY).into_slot(a.index))
        .user_data(ud(slot, kOpenSrc))
        .link();
    // The source's permission bits less the umask, no set-ID bits: cp's rule.
    ring.prepare(op::OpenAt(dirfd, t_.name(e), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW,
                            c_.o.preserve.creation_bits(st.stx_mode))
                     .into_slot(b.index))
        .user_data(ud(slot, kOpenDst))
        .link();
    n += 2;
    if (size > 0) {
        char* buf = c_.small_block(slot);
        if (c_.fixed_small) {
            ring.prepare(op::ReadFixed(a, buf, size, 0, 1)).user_data(ud(slot, kRead)).link();
            ring.prepare(op::WriteFixed(b, buf, size, 0, 1)).user_data(ud(slot, kWrite)).link();
        } else {
            ring.prepare(op::Read(a, buf, size, 0)).user_data(ud(slot, kRead)).link();
            ring.prepare(op::Write(b, buf, size, 0)).user_data(ud(slot, kWrite)).link();
        }
        n += 2;
    }
    if (c_.o.fsync) {
        ring.prepare(op::Fsync(b)).user_data(ud(slot, kFsync)).link();
        ++n;
    }
    // The source's size after its bytes were read: a file that grew since
    // the walk's statx is reported as on the large-file path, never copied
    // short with status 0.  The statx buffer sits past the data in the
    // slot's block, which lives as long as the ring's buffers.
    ring.prepare(
            op::Statx(AT_FDCWD, t_.src.c_str(e), AT_SYMLINK_NOFOLLOW, STATX_SIZE, size_after(slot)))
        .user_data(ud(slot, kStatAfter))
        .link();
    ring.prepare(op::Close(a)).user_data(ud(slot, kCloseSrc)).link();
    ring.prepare(op::Close(b)).user_data(ud(slot, kCloseDst));
    n += 3;
    s.pending = n;
    outstanding_ += n;
    return true;
}

struct statx* ChainCopier::size_after(unsigned slot) const {
    return reinterpret_cast<struct statx*>(c_.small_block(slot) + kSmallMax);
}

void ChainCopier::complete(const Completion& cq) {
    --outstanding_;
    const auto slot = static_cast<unsigned>(cq.user_data >> 4);
    const auto step = static_cast<Step>(cq.user_data & 15);
    Slot& s = slots_[slot];
    s.res[step] = cq.res;
    if (--s.pending > 0) return;
    evaluate(slot);
    free_.push_back(slot);
}

void ChainCopier::evaluate(unsigned slot) {
    Slot& s = slots_[slot];
    const std::size_t e = s.entry;
    const auto size = static_cast<int>(t_.st[e].stx_size);
    const int* r = s.res;
    const std::string dst(t_.dst[e]);
    bool redo = false;
    std::optional<Failure> failure;
    if (r[kOpenSrc] < 0) {
        failure =
            Failure{CopyStatus::bad_input, quoted_message("cannot open", t_.src[e], r[kOpenSrc])};
    } else if (r[kOpenDst] < 0) {
        failure = Failure{status_of_write(r[kOpenDst]),
                          quoted_message("cannot create regular file", dst, r[kOpenDst])};
    } else if (size > 0 && r[kRead] < 0 && r[kRead] != -EINTR && r[kRead] != -EAGAIN) {
        failure = Failure{CopyStatus::failure, io_message(t_.src[e], "read", 0, r[kRead])};
    } else if (size > 0 && r[kRead] != size) {
        redo = true;  // short (the large path checks whether the file shrank) or EINTR/EAGAIN
    } else if (size > 0 && r[kWrite] < 0 && r[kWrite] != -EINTR && r[kWrite] != -EAGAIN &&
               r[kWrite] != -ECANCELED) {
        failure = Failure{status_of_write(r[kWrite]), io_message(dst, "write", 0, r[kWrite])};
    } else if (size > 0 && r[kWrite] != size) {
        redo = true;
    } else if (c_.o.fsync && r[kFsync] < 0) {
        failure = Failure{status_of_write(r[kFsync]), errno_message(dst, "fsync", r[kFsync])};
    } else if (r[kStatAfter] < 0) {
        failure =
            Failure{CopyStatus::failure, quoted_message("cannot stat", t_.src[e], r[kStatAfter])};
    } else if (size_after(slot)->stx_size != t_.st[e].stx_size) {
        failure = Failure{CopyStatus::failure,
                          std::string(t_.src[e]) + ": changed size while being copied (" +
                              std::to_string(size) + " -> " +
                              std::to_string(size_after(slot)->stx_size) + " bytes)"};
    } else if (r[kCloseSrc] < 0 || r[kCloseDst] < 0) {
        const int err = r[kCloseDst] < 0 ? r[kCloseDst] : r[kCloseSrc];
        failure =
            Failure{status_of_write(err),
                    errno_message(r[kCloseDst] < 0 ? dst : std::string(t_.src[e]), "close", err)};
    } else {
        ++c_.result.files;
        ++c_.result.ring_files;
        c_.result.bytes += static_cast<std::uint64_t>(size);
        done_.push_back(e);
        if (!c_.o.verify)
            file_done(c_, static_cast<std::uint64_t>(size));  // else once verified (copy_tree.cpp)
        dirs_.unpin(t_.parent[e]);
        return;
    }
    // A chain cut short leaves its closes -ECANCELED and the files in their
    // slots (an unlinked destination included) until the slots are reused:
    // empty both slots now.
    if (r[kCloseSrc] != 0 || r[kCloseDst] != 0) {
        const int none[2] = {-1, -1};
        ++c_.syscalls();
        (void)c_.ring->update_files(2 * slot, none);
    }
    if (r[kOpenDst] >= 0) {  // created by this chain: it must not stay half-written
        ++c_.syscalls();
        ::unlinkat(dirs_.held(t_.parent[e]), t_.name(e), 0);
    }
    dirs_.unpin(t_.parent[e]);
    if (redo) redo_.push_back(e);
    if (failure) c_.report(*failure);
}

}  // namespace uringkit::fs::detail
