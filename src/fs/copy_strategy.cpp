// Which path a regular file's bytes take, decided here and nowhere else:
//
//   1. FICLONE, unless --reflink=never: the copy shares the source's extents
//      (XFS with reflink, btrfs, bcachefs, OCFS2, NFS 4.2, SMB): no data
//      moves and no new blocks are used.  --reflink=always fails a file that
//      cannot be cloned.
//   2. copy_file_range within one file system where it wins (see
//      kernel_copy_wins) or copies on the server (NFS, SMB), within one file
//      system whose reads the ring would hand to io-wq workers (tmpfs), and
//      for a lone small file anywhere it works, which then needs no ring.
//   3. The ring (copy_range.cpp) otherwise: between file systems, where
//      read -> write pairs were measured faster, with --direct or
//      --source-reads direct, and for the small files of a tree (the chains).
//
// What the kernel answers is remembered per (source, destination) file
// system pair: a refused FICLONE or copy_file_range (EOPNOTSUPP, EXDEV, ...)
// is tried once per pair, not once per file.
#include "copy_internal.hpp"

#include "uringkit/sys/page_cache.hpp"

#include <sys/statfs.h>

#include <cstdio>
#include <cstring>

namespace uringkit::fs::detail {
namespace {

constexpr unsigned long kExt4 = 0xEF53, kXfs = 0x58465342, kBtrfs = 0x9123683E, kTmpfs = 0x01021994,
                        kNfs = 0x6969, kSmb2 = 0xFE534D42, kCifs = 0xFF534D42,
                        kBcachefs = 0xCA451A4E, kOcfs2 = 0x7461636F, kOverlay = 0x794C7630,
                        kF2fs = 0xF2F52010;

// Where copy_file_range is taken for a file's bytes when both sides are on
// one file system of this type (bench/results/files_cp_strategy.md):
// - ext4: page cache to page cache in the kernel, one copy instead of the
//   ring's two (into user memory and out), no io-wq workers;
// - XFS, btrfs (when not cloned: --reflink=auto on a file system made
//   without reflink); f2fs likewise splice page to page;
// - NFS, SMB: the server copies, nothing crosses the network.
// tmpfs is not on the list by name: it is found by what its files do
// (sys::reads_go_to_workers, in pair_of), which covers any file system like it.
bool kernel_copy_wins(unsigned long type) noexcept {
    switch (type) {
        case kExt4:
        case kXfs:
        case kBtrfs:
        case kF2fs:
        case kNfs:
        case kSmb2:
        case kCifs:
        case kBcachefs:
        case kOcfs2:
            return true;
        default:
            return false;
    }
}

// Files up to this size outside a tree's chains go by copy_file_range
// wherever it works, whatever the type: one system call instead of a ring
// and its buffers.
constexpr std::uint64_t kLoneFileMax = 1 << 20;

bool clone_declined(int err) noexcept {
    err = err < 0 ? -err : err;
    return err == EOPNOTSUPP || err == ENOTTY || err == EXDEV || err == ENOSYS;
}

FsPair& pair_of(Ctx& c, int sfd, dev_t sdev, int dfd) {
    struct stat dst_st {};
    ++c.syscalls();
    if (::fstat(dfd, &dst_st) != 0) dst_st.st_dev = 0;
    if (FsPair* p = c.strategy.find(sdev, dst_st.st_dev)) return *p;
    FsPair p;
    p.src_dev = sdev;
    p.dst_dev = dst_st.st_dev;
    struct statfs sf {};
    c.syscalls() += 2;
    if (::fstatfs(sfd, &sf) == 0) p.src_type = static_cast<unsigned long>(sf.f_type);
    if (::fstatfs(dfd, &sf) == 0) p.dst_type = static_cast<unsigned long>(sf.f_type);
    ++c.syscalls();
    p.src_reads_on_workers = sys::reads_go_to_workers(sfd);
    return c.strategy.add(p);
}

// Said once per copy (CopyResult::path_reason), for --summary.
void say_path(Ctx& c, const FsPair& p, const char* path, const char* why) {
    if (!c.result.path_reason.empty()) return;
    c.result.path_reason =
        fs_label(p.src_type) + " to " + fs_label(p.dst_type) + ": " + path + " (" + why + ")";
}

bool may_clone(const Ctx& c, const FsPair& p) {
    if (c.o.reflink == Reflink::never) return false;
    return c.o.reflink == Reflink::always || p.reflink != Known::no;
}

// The path for the bytes of a file that was not cloned.
CopyPath byte_path(Ctx& c, const FsPair& p, std::uint64_t size) {
    if (c.o.force_fallback || c.o.direct || c.o.source_reads == SourceReads::direct)
        return CopyPath::ring;
    if (p.kernel == Known::no || c.o.engine == ByteEngine::ring) return CopyPath::ring;
    const bool same_type = p.src_type == p.dst_type;
    // Within one such file system copy_file_range clones: not when told never to share.
    if (c.o.reflink == Reflink::never && same_type && kernel_copy_may_clone(p.src_type))
        return CopyPath::ring;
    if (c.o.engine == ByteEngine::kernel) return CopyPath::kernel;
    if (!same_type) return CopyPath::ring;  // EXDEV between local file systems since Linux 5.19
    if (kernel_copy_wins(p.src_type)) return CopyPath::kernel;
    if (p.src_reads_on_workers) {
        // tmpfs: each ring read is handed to an io-wq worker.  On a 256 MiB
        // copy the ring took 1.32x the CPU of copy_file_range, and
        // read/write calls the same as it (bench/results/tmpfs_handoff.md).
        say_path(c, p, "copy_file_range", "reads on the ring would go to io-wq workers");
        return CopyPath::kernel;
    }
    // A small file, or no io_uring here: one in-kernel copy beats setting up
    // a ring, and read/write's two copies.
    if (size <= kLoneFileMax && !c.ring) return CopyPath::kernel;
    if (c.ring_tried && !c.ring) return CopyPath::kernel;
    return CopyPath::ring;
}

}  // namespace

FsPair* StrategyCache::find(dev_t src, dev_t dst) noexcept {
    for (FsPair& p : pairs_)
        if (p.src_dev == src && p.dst_dev == dst) return &p;
    return nullptr;
}
FsPair& StrategyCache::add(const FsPair& p) {
    pairs_.push_back(p);
    return pairs_.back();
}

bool kernel_copy_may_clone(unsigned long t) noexcept {
    return t == kXfs || t == kBtrfs || t == kBcachefs || t == kOcfs2 || t == kNfs || t == kSmb2 ||
           t == kCifs || t == kOverlay;
}

const char* fs_name(unsigned long t) noexcept {
    switch (t) {
        case kExt4:
            return "ext4";
        case kXfs:
            return "xfs";
        case kBtrfs:
            return "btrfs";
        case kTmpfs:
            return "tmpfs";
        case kNfs:
            return "nfs";
        case kSmb2:
        case kCifs:
            return "smb";
        case kBcachefs:
            return "bcachefs";
        case kOcfs2:
            return "ocfs2";
        case kOverlay:
            return "overlayfs";
        case kF2fs:
            return "f2fs";
        default:
            return nullptr;
    }
}

std::string fs_label(unsigned long t) {
    if (const char* name = fs_name(t)) return name;
    char type[48];
    std::snprintf(type, sizeof type, "file system 0x%lx", t);
    return type;
}

std::optional<Failure> copy_regular(Ctx& c, util::UniqueFd& sfd, const struct stat& st,
                                    Destination& d, const char* src, std::uint64_t& bytes) {
    const std::string& dst = d.path;
    const auto size = static_cast<std::uint64_t>(st.st_size);
    FsPair& pair = pair_of(c, sfd.get(), st.st_dev, d.fd.get());
    if (may_clone(c, pair)) {
        const int r = clone_file(c, sfd.get(), d.fd.get());
        if (r == 0) {
            pair.reflink = Known::yes;
            bytes = size;
            ++c.result.reflinked_files;  // counted here: nothing can fail after it
            if (c.o.on_progress) c.o.on_progress(bytes);
            return std::nullopt;
        }
        if (clone_declined(r)) pair.reflink = Known::no;
        if (c.o.reflink == Reflink::always)
            return Failure{CopyStatus::failure,
                           "cannot clone '" + std::string(src) + "' to '" + dst +
                               "' (--reflink=always, " + fs_label(pair.dst_type) +
                               "): " + std::strerror(-r) + " (errno " + std::to_string(-r) + ")"};
        if (r == -ENOSPC || r == -EDQUOT || r == -EIO)
            return Failure{status_of_write(r), errno_message(dst, "FICLONE", r)};
        // Anything else (no reflink here, another file system): bytes are copied.
    }

    const std::vector<Extent> extents = data_extents(sfd.get(), st, c.syscalls());
    std::optional<Failure> failure;
    bool done = false;
    std::uint64_t* counter = &c.result.kernel_copied_files;
    if (byte_path(c, pair, size) == CopyPath::kernel) {
        bool refused = false;
        failure = copy_in_kernel(c, sfd.get(), d.fd.get(), src, dst, extents, bytes, refused);
        if (refused) {
            pair.kernel = Known::no;
            if (c.o.engine == ByteEngine::kernel && !pair.said_no_kernel) {
                pair.said_no_kernel = true;
                c.note("--engine kernel: copy_file_range cannot copy " + std::string(src) + " to " +
                       dst + "; copying on the ring, and so for any like it");
            }
        } else {
            if (!failure) pair.kernel = Known::yes;
            done = true;
        }
    }
    if (!done) {
        bool direct = false;
        failure = copy_on_ring(c, sfd, st, d, src, extents, bytes, direct);
        if (c.kernel_holds_buffers) return failure;
        counter = c.ring ? &c.result.ring_files : &c.result.read_write_files;
        if (!failure && direct) {
            ++c.syscalls();  // O_DIRECT wrote whole blocks: cut the tail past the size
            if (::ftruncate(d.fd.get(), static_cast<off_t>(size)) != 0)
                return Failure{status_of_write(errno), io_message(dst, "truncate", size, errno)};
        }
    }
    if (failure) return failure;
    const std::uint64_t data_end = extents.empty() ? 0 : extents.back().end;
    if (data_end < size) {  // a hole at the end: the size comes from here
        ++c.syscalls();
        if (::ftruncate(d.fd.get(), static_cast<off_t>(size)) != 0)
            return Failure{status_of_write(errno), io_message(dst, "truncate", size, errno)};
    }
    // A source that changed size under us is an error, not a short copy.
    struct stat after {};
    ++c.syscalls();
    if (::fstat(sfd.get(), &after) == 0 && after.st_size != st.st_size)
        return Failure{CopyStatus::failure, std::string(src) +
                                                ": changed size while being copied (" +
                                                std::to_string(st.st_size) + " -> " +
                                                std::to_string(after.st_size) + " bytes)"};
    ++*counter;
    return std::nullopt;
}

FsPair* tree_clones(Ctx& c, const std::string& src_root, const std::string& dst_root) {
    if (c.o.reflink == Reflink::never) return nullptr;
    struct stat s {
    }, d{};
    c.syscalls() += 2;
    if (::stat(src_root.c_str(), &s) != 0 || ::stat(dst_root.c_str(), &d) != 0) return nullptr;
    FsPair* p = c.strategy.find(s.st_dev, d.st_dev);
    if (!p) {
        FsPair n;
        n.src_dev = s.st_dev;
        n.dst_dev = d.st_dev;
        struct statfs sf {};
        c.syscalls() += 2;
        if (::statfs(src_root.c_str(), &sf) == 0)
            n.src_type = static_cast<unsigned long>(sf.f_type);
        if (::statfs(dst_root.c_str(), &sf) == 0)
            n.dst_type = static_cast<unsigned long>(sf.f_type);
        p = &c.strategy.add(n);
    }
    // --reflink=always: every file tries (and a refusal fails it).  Otherwise
    // only where the kernel may clone: elsewhere the chains copy small files
    // faster than one FICLONE attempt each would cost.
    if (c.o.reflink == Reflink::always) return p;
    return p->reflink != Known::no && p->src_type == p->dst_type &&
                   kernel_copy_may_clone(p->src_type)
               ? p
               : nullptr;
}

}  // namespace uringkit::fs::detail
