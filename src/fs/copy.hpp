// `cp` on the ring.
//
// One large file: linked read -> write pairs (IOSQE_IO_LINK) over a pool of
// registered buffers, `qd` pairs in flight, holes skipped (SEEK_DATA /
// SEEK_HOLE) so sparse files stay sparse.  A tree (-r): the walk lists each
// directory once, then every small file is one chain on two fixed-file slots
//     open src -> open dst -> read -> write -> close src -> close dst [-> rename]
// with `inflight` files in flight, so 10,000 files cost a few hundred system
// calls instead of ten or more each.
//
// Destinations follow coreutils cp: an existing file is opened (through a
// symlink) and written in place with O_TRUNC, so its inode, other links,
// mode, owner and extended attributes stay and a write-protected file
// refuses an ordinary user; a new file is written under an unpredictable
// temporary name beside it (O_EXCL | O_NOFOLLOW) and renamed into place when
// complete, with the source's permission bits less the umask and no set-ID
// bits.  `atomic` replaces an existing file by rename too, and builds a new
// tree under a temporary name that appears only when everything was copied.
// Every operand and every file of a tree that can be copied is; each
// failure is reported (CopySink::error) and the first one sets the status.
//
// Short reads and writes continue where they stopped; a chain cut by
// -ECANCELED is resubmitted; EINTR and EAGAIN are retried; a source that
// changes size while it is copied is an error, never a silent short copy.
// Without io_uring the same job runs on pread/pwrite.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace uringkit::fs {

// How the source of a large file is read.  `automatic` asks the page cache
// first (cachestat(2), mincore(2) before Linux 6.5): a source of at least
// 8 MiB with under half of it cached is read with O_DIRECT: the bytes are
// copied once instead of twice (less than half the CPU on a cold 1 GiB copy)
// and the source does not push other files out of the cache; a warm source
// is read from the cache.  The destination is written through
// the page cache either way (use `direct` for both sides).  `direct` reads
// every regular file's source with O_DIRECT, at any size.  Reads that do not
// start and end on 4 KiB (the tail of a file, or after a short read) always
// go through the cache.
enum class SourceReads { automatic, page_cache, direct };

// What -p, -a and --preserve=LIST keep, by coreutils' names.
struct Preserve {
    // Permission bits; the set-user/group-ID bits only where the owner was
    // kept or is not being kept (the copier's own file).
    bool mode = false;
    bool ownership =
        false;  // owner and group: root may set them; an ordinary user's attempt is quietly dropped
    bool timestamps = false;  // access and modification times, to the nanosecond
    // Extended attributes: user.*, security.*, trusted.* (root sees those),
    // and ACLs (system.posix_acl_access, system.posix_acl_default).
    bool xattr = false;
    bool links = false;  // sources that are hard links of each other stay hard links of each other
    // xattr asked for by name (--preserve=xattr): an attribute that cannot be
    // copied is an error (status 1).  From -a or `all`, as with coreutils,
    // a file system without them is quiet and other refusals are notes.
    bool xattr_required = false;
    // --no-preserve=mode (or all) given: a new file gets 0666 and a new
    // directory 0777, less the umask, as the kernel would give them, not the
    // source's bits (coreutils' explicit_no_preserve_mode).
    bool mode_refused = false;
    bool any() const noexcept { return mode || ownership || timestamps || xattr || links; }
    // The permission bits a new copy of a `src_mode` file is created with,
    // before the umask: the source's unless --no-preserve=mode said not to.
    mode_t creation_bits(mode_t src_mode) const noexcept {
        if (mode_refused) return (src_mode & S_IFMT) == S_IFDIR ? 0777 : 0666;
        return src_mode & 0777;
    }
    // The same for a new directory: coreutils asks mkdir(2) for all the
    // source's mode bits, and Linux keeps the sticky bit of them (a copy of
    // /tmp is 1755 under umask 022); the set-group-ID bit comes from the
    // parent, never from the source.  --no-preserve=mode replaces only the
    // permission bits (coreutils sets them as an ACL, which leaves the rest).
    mode_t dir_creation_bits(mode_t src_mode) const noexcept {
        return (mode_refused ? 0777 : src_mode & 0777) | (src_mode & S_ISVTX);
    }
};

// Applies one --preserve=LIST (`on`) or --no-preserve=LIST (!on) to `p`:
// comma-separated mode, ownership, timestamps, xattr, links, all.  Returns
// the first word it does not know (an empty one included), or nullopt.
std::optional<std::string> apply_preserve_list(std::string_view list, bool on, Preserve& p);

// Whether a copy may share the source's extents (FICLONE), as coreutils'
// --reflink: `automatic` clones where the file system can and copies bytes
// elsewhere; `always` fails a file that cannot be cloned; `never` always
// copies bytes, and so also keeps away from copy_file_range on file systems
// whose copy_file_range clones (XFS, btrfs, bcachefs, OCFS2, NFS, SMB, overlayfs).
enum class Reflink { automatic, always, never };

// How a file's bytes are copied when it is not cloned.  `automatic` decides
// once per (source, destination) file system pair (copy_strategy.cpp):
// copy_file_range within one file system where it was measured to win or
// copies on the server, the ring otherwise and for the small files of a
// tree.  The others force one path: `ring` (read -> write pairs), `kernel`
// (copy_file_range; the ring where the kernel refuses it).  Read/write without
// a ring is `force_fallback`.
enum class ByteEngine { automatic, ring, kernel };

// --update[=WHEN] (coreutils 9.3's words; -u is `older`): which existing
// destinations are written.  `all` (the default) every one; `none` none
// (as -n); `older` those whose modification time is older than the source's,
// to the nanosecond.  Directories are always entered.
enum class Update { all, none, older };

// What -v reports, in coreutils' order: a file, link or directory copied
// (`from` the source, `to` the destination; with -r a tree's lines come in
// the tree's order once its copy has ended), or an existing destination
// removed first (`from` the removed path, `to` empty).
// --parents adds `made_parent`: a directory on the way made (coreutils
// prints these unquoted: "src/a -> dst/src/a").  -b adds `backed_up`
// (`from` the destination, `to` its backup), told just before the
// destination's `copied` (coreutils: "'a' -> 'b' (backup: 'b~')").
enum class CopyEvent { copied, removed, made_parent, backed_up };

// -b, --backup[=CONTROL] (coreutils' words): an existing destination that is
// replaced is first renamed to NAME + suffix (`simple`), NAME.~N~ with N one
// past the highest there (`numbered`), or numbered where a numbered backup
// of it already exists and simple otherwise (`existing`).
enum class Backup { none, simple, numbered, existing };

// -l and -s: each file is made a hard link of its source, or a symbolic link
// to it, instead of a copy (directories are still made with -r).
enum class LinkInstead { none, hard, symbolic };

// --sparse=WHEN: `automatic` keeps the source's holes (SEEK_DATA/SEEK_HOLE)
// and writes every byte of its data; `always` also leaves a hole for each
// block of zeros in the data (read/write, block by block); `never` writes
// the holes out as zeros.  The last two copy the bytes: no clone.
enum class Sparse { automatic, always, never };

struct CopyOptions {
    // Read -> write pairs in flight for one large file, and bytes per pair:
    // through the page cache 8 x 256 KiB (measured best for 1 GiB warm), with
    // O_DIRECT reads 16 x 1 MiB (a cold source; faster than 8 x 256 KiB,
    // 8 x 1 MiB and 8 x 2 MiB direct in rotated cold series).
    unsigned qd = 8;
    std::size_t block_size = 256 * 1024;
    unsigned direct_read_qd = 16;
    std::size_t direct_read_block_size = 1024 * 1024;
    unsigned inflight = 64;  // small files in flight (-r)
    // With `recursive`: io-wq worker threads the kernel may run the copy's
    // blocking steps on (creates, opens, buffered writes); 0: one per CPU
    // this process may use.
    unsigned kernel_workers = 0;
    bool direct = false;                                // O_DIRECT where both files allow it
    SourceReads source_reads = SourceReads::automatic;  // large sources when `direct` is off
    // --sync: fsync each file before it is closed, and its directory after
    // a rename into place.
    bool fsync = false;
    bool recursive = false;  // -r: copy directory trees
    // -p (mode, ownership, timestamps), -a, --preserve=LIST.  Without
    // `mode` a new file gets the source's permission bits less the umask
    // and no set-ID bits, and an existing one keeps its own.
    Preserve preserve;
    // -P: a symbolic link named as a source is copied as a link, not
    // followed (inside a tree links are never followed).
    bool no_dereference = false;
    // --atomic: an existing file is replaced by a complete copy renamed over
    // it (a new inode: other links, xattrs, ACLs and owner are not kept; the
    // copy needs room for both), and a new tree appears only when whole.
    bool atomic = false;
    bool no_clobber = false;  // -n: an existing destination is left alone (counted as skipped)
    // --remove-destination: an existing destination that is not a directory
    // is removed and created anew instead of written in place.  Inside a
    // tree (below the operands) it is also how a symbolic link in the
    // destination is replaced: without it such an entry is refused, never
    // written through (a deliberate difference from coreutils, whose cp
    // writes through it).
    bool remove_destination = false;
    // -f: an existing destination that cannot be opened for writing is
    // removed (unlinkat in its directory, never following a symbolic link)
    // and created anew, as coreutils' cp -f.
    bool force = false;
    Update update = Update::all;                   // -u, --update[=WHEN]
    Backup backup = Backup::none;                  // -b, --backup[=CONTROL]
    std::string backup_suffix = "~";               // -S, --suffix (SIMPLE_BACKUP_SUFFIX)
    LinkInstead link_instead = LinkInstead::none;  // -l, -s
    Sparse sparse = Sparse::automatic;             // --sparse=WHEN
    // --attributes-only: no data is copied; a new destination is made empty
    // and an existing one keeps its bytes; only what `preserve` names is set.
    bool attributes_only = false;
    // --copy-contents: with `recursive`, a FIFO or a device in a tree is read
    // like a file instead of being made again.
    bool copy_contents = false;
    // -x: with `recursive`, a directory on another file system than its
    // operand's (a mount point) is made, empty, and not walked, as cp -x.
    bool one_file_system = false;
    // -T: `dest` is the copy itself even when it is a directory (one source).
    bool no_target_directory = false;
    // -H: a symbolic link named as a source is followed even with
    // `recursive` (links inside a tree stay links).
    bool dereference_operands = false;
    // --parents: each source's path (less leading '/' and '.' names) is
    // appended to `dest`, which must be a directory; the directories on the
    // way are made (source's permission bits less the umask) or entered
    // through descriptors, never following a symbolic link.
    bool parents = false;
    // -i: asked before an existing destination is written or replaced
    // (after -u decided it would be): true writes it, false leaves it alone
    // (counted as skipped).  `unwritable`: its mode when the caller may not
    // write it (not root, not a symbolic link; coreutils then asks whether
    // to try anyway), else 0.  Runs on the thread that called copy().
    std::function<bool(std::string_view dst, mode_t unwritable)> ask_overwrite;
    // -v: each CopyEvent as it is decided (see CopyEvent).
    std::function<void(CopyEvent, std::string_view from, std::string_view to)> on_event;
    bool force_fallback = false;  // run the pread/pwrite path (for comparison and tests)
    Reflink reflink = Reflink::automatic;
    ByteEngine engine = ByteEngine::automatic;
    // With `recursive` on a file system that shares extents: threads that
    // clone the tree's small files (FICLONE blocks; 4 measured fastest on 2
    // CPUs, see copy_clone_pool.cpp); 0: file by file like any other file.
    unsigned clone_threads = 4;
    // With `recursive` elsewhere (no clones), the same when the tree's files
    // are in the page cache: threads that copy the small files of the
    // directories the copy creates with read -> write, where the ring's chains would hand each
    // create and write to a kernel worker (copy_pool.cpp has the figures); a tree not cached stays
    // on the chains.  0: always the chains.  Not with `preserve`, `direct` or an `engine` other
    // than automatic.
    unsigned copy_threads = 4;
    // --verify: once a regular file is copied (and in place under its name),
    // the source and the copy are read again and compared 1 MiB at a time by
    // their XXH3-128 (copy_verify.cpp); the copy is read with O_DIRECT where
    // its file system allows it, so the bytes come from the device, not
    // from the page cache the copy just filled.  A difference is a failure
    // naming the file and the first differing range; the copy is left as it
    // is.  Cloned files are verified too.  FIFOs and devices cannot be read
    // twice and are not.
    bool verify = false;
    // Called between a file's copy and its verification, with the source and
    // destination paths (tests change the copy here to see the check fail).
    std::function<void(std::string_view src, std::string_view dst)> before_verify;
    // Called once a tree's walk has listed it, before any of its entries is
    // stat'd or copied (tests replace entries here, as another process could).
    std::function<void()> after_walk;
    // Called once a tree's directories exist (created and entered, or entered
    // when already there), before any file is copied into them (tests swap
    // destination directories for symbolic links here, as another user could).
    std::function<void()> after_directories;
    // Called after each completed block of a file with the bytes of that file
    // done so far (tests use it to change the source mid-copy at a known
    // point; `uringkit cp --progress` draws its line from it).  A clone
    // reports the file's whole size at once; a tree's small files report
    // only through on_file.
    std::function<void(std::uint64_t done)> on_progress;
    // Work as it becomes known: once for each operand that is not a
    // directory (1 file, its size; 0 bytes for a FIFO or device), and once
    // for each tree after its walk (its regular files and their sizes).
    std::function<void(std::uint64_t files, std::uint64_t bytes)> on_planned;
    // A regular file is finished: copied (and with `verify` verified),
    // made a hard link of an earlier copy, or skipped (-n).  `bytes`: its
    // size (logical: a clone's or a link's too).  All these callbacks run on
    // the thread that called copy().
    std::function<void(std::uint64_t bytes)> on_file;
    // Polled between steps (a signal handler sets it): once set nothing new
    // is started, what is in flight completes, files being written are
    // removed (an existing file written in place stays as far as it got),
    // and the result is `interrupted`.
    const std::atomic<bool>* stop = nullptr;
};

enum class CopyStatus {
    ok,
    failure,      // an I/O error, a source that changed while copied
    bad_input,    // a missing or unreadable source, a directory without -r, copying onto itself
    no_space,     // ENOSPC, EFBIG, EDQUOT while writing
    usage,        // the arguments do not make sense (several sources, DST not a directory)
    interrupted,  // CopyOptions::stop was set: what is counted was copied
};

struct CopyResult {
    CopyStatus status = CopyStatus::ok;
    std::string message;  // the first failure: one line naming the file (and the offset and errno
                          // of an I/O error)
    std::uint64_t failures = 0;  // failures reported through CopySink::error
    std::uint64_t files = 0, dirs = 0, symlinks = 0, specials = 0, skipped = 0, bytes = 0;
    // System calls the copy made: io_uring_enter and register calls plus the
    // plain ones (walk, mkdir, rename, ...); not the ring's one-time setup.
    std::uint64_t syscalls = 0;
    std::uint64_t direct_read_files = 0;  // large files whose source was read with O_DIRECT
    std::uint64_t hard_links =
        0;  // of `files`: made as hard links of an earlier copy (--preserve=links)
    std::uint64_t xattrs = 0;  // extended attributes (ACLs included) copied
    bool xattrs_on_ring =
        false;  // with IORING_OP_FGETXATTR/FSETXATTR (else fgetxattr(2)/fsetxattr(2))
    // Regular files by the path their bytes took: cloned (FICLONE), copied in
    // the kernel (copy_file_range), on the ring, or with read/write (a cached
    // tree's small files on copy_threads threads, no ring, or a FIFO or
    // device on either side).
    std::uint64_t reflinked_files = 0, kernel_copied_files = 0, ring_files = 0,
                  read_write_files = 0;
    // Where a file system's nature chose the path, what and why, e.g.
    // "tmpfs to tmpfs: copy_file_range (reads on the ring would go to io-wq
    // workers)"; empty where the usual rule applied.
    std::string path_reason;
    // --verify: files whose copy was read back and matched; bytes read
    // again (source and copy together); of them, copies read with O_DIRECT;
    // seconds spent (part of `seconds`).
    std::uint64_t verified_files = 0, verify_bytes = 0, verified_direct = 0;
    double verify_seconds = 0;
    double seconds = 0;
    bool used_ring =
        true;  // false: io_uring could not be set up (or force_fallback), read/write instead
    // Interrupted: an existing file that was being written in place (its old
    // content is gone, the new one incomplete).  New files are removed.
    std::vector<std::string> incomplete;
};

struct CopySink {
    // Warnings (the fallback to read/write, a file system without O_DIRECT); said once each.
    std::function<void(std::string_view message)> note;
    // Each failure, as it happens (the copy goes on with the next file).
    std::function<void(std::string_view message)> error;
};

// cp SOURCES... DEST, with coreutils' rules for where things go: one source
// and DEST not an existing directory: DEST is the copy; otherwise each source
// goes to DEST/<basename>.  A source that is a FIFO or a character device is
// read until end of file (`cp <(cmd) out`); inside a tree (-r) such files
// are made again (mkfifo, mknod) instead.
CopyResult copy(std::span<const std::string> sources, const std::string& dest,
                const CopyOptions& options, const CopySink& sink = {});

}  // namespace uringkit::fs
