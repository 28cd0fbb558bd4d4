// The copier's pieces, internal to src/fs: the job's shared state, error
// messages, path helpers, and the entry points of each part:
//   copy_range.cpp        one file's bytes (ring pairs, pread/pwrite, streams)
//   copy_destination.cpp  where the bytes go: in place, temporary + rename, attributes
//   copy_chain.cpp        small files of a tree, one linked chain each
//   copy_tree.cpp         cp -r: walk, directories, special files, symlinks
//   copy_metadata.cpp     -p, -a, --preserve: owner, xattrs and ACLs, mode, times, hard links
//   copy_strategy.cpp     which path a regular file's bytes take (the one place that decides)
//   copy_kernel.cpp       the in-kernel paths: FICLONE and copy_file_range
//   copy_pool.cpp         a tree's small files on a few threads: cloned, or read -> write when
//   cached copy_setup.cpp        the ring and its buffers, set up on first need and sized to the
//   work copy_verify.cpp       --verify: source and copy read again and compared copy.cpp copy():
//   options, each operand
#pragma once

#include "copy_strategy.hpp"
#include "fs/copy.hpp"
#include "shared.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/util/unique_fd.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace uringkit::fs::detail {

struct Failure {
    CopyStatus status;
    std::string message;
};

constexpr std::size_t kDirectAlign = 4096;
constexpr std::size_t kSmallMax = 64 * 1024;  // files up to this size take the one-chain path (-r)
// A small file's block: its bytes, then the statx the chain reads after them.
constexpr std::size_t kSmallBlock = kSmallMax + 4096;
constexpr std::uint64_t kDrainCancel = ~std::uint64_t{0};  // user_data of drain()'s cancel

// ---- the job's shared state ------------------------------------------------

struct Ctx {
    Ctx(const CopyOptions& options, const CopySink& s, CopyResult& r)
        : o(options), sink(s), result(r) {}
    ~Ctx();
    Ctx(const Ctx&) = delete;
    Ctx& operator=(const Ctx&) = delete;

    const CopyOptions& o;
    const CopySink& sink;
    CopyResult& result;
    // The buffers are declared before the ring so the ring is closed first.
    // Closing a ring does not wait for its requests: when a copier could not
    // drain them (the ring itself failing), `kernel_holds_buffers` keeps
    // this memory for the rest of the process instead of freeing it.
    // Both are allocated when a path first needs them (copy_setup.cpp).
    Buffer big;    // a large file's blocks, sized to the largest job so far (registered buffer 0)
    Buffer small;  // inflight blocks of kSmallBlock, for a tree's chains (registered buffer 1)
    std::optional<Ring> ring;  // set up when the ring path is first taken
    std::size_t big_size = 0, small_size = 0;
    bool fixed_big = false,
         fixed_small = false;  // registered (RLIMIT_MEMLOCK may allow only the small one)
    bool ring_tried = false;   // make_ring was called (ring empty: io_uring unavailable, said once)
    bool files_registered = false;  // the sparse fixed-file table the chains use
    bool buffers_registered = false;
    bool workers_limited = false;  // -r set io-wq's limit; ~Ctx puts back `previous_workers`
    std::array<unsigned, 2> previous_workers{};
    StrategyCache strategy;
    bool kernel_holds_buffers = false;
    bool ring_failed =
        false;  // io_uring_enter failed for good: nothing more is started on the ring
    bool interrupted = false;  // CopyOptions::stop was seen: nothing new was started after it
    bool said_no_direct_read = false;
    // --verify: two chunks (source, copy), allocated on the first file
    // verified; whether a note said the copy's file system refuses O_DIRECT.
    Buffer verify_buf;
    bool said_verify_cached = false, said_verify_stream = false;
    bool root = false;  // euid 0: may write a write-protected file, as with coreutils
    mode_t umask = 022;
    unsigned small_slots = 0;

    std::uint64_t& syscalls() { return result.syscalls; }
    void note(const std::string& m) const {
        if (sink.note) sink.note(m);
    }
    // One failure: told to the sink as it happens; the first one sets the
    // result's status and message.  The copy goes on with what is left.
    void report(const Failure& f);
    bool stop_requested() const noexcept {
        return o.stop && o.stop->load(std::memory_order_relaxed);
    }
    // Nothing more can be copied: the ring failed, or what it holds was kept.
    bool ring_unusable() const noexcept { return ring_failed || kernel_holds_buffers; }
    char* small_block(unsigned k) const { return small.get() + std::size_t{k} * kSmallBlock; }

    // copy_metadata.cpp: where the first copy of each source with several
    // links went, by (device, inode); whether the ring has the xattr opcodes
    // (-1: not asked yet); the buffer xattr names are listed into.
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::string> first_link;
    // Symbolic links this run made at an operand's name, by (device, inode):
    // a later operand is never written through one (coreutils: "will not
    // copy 'b' through just-created symlink 'c/1'").
    std::set<std::pair<std::uint64_t, std::uint64_t>> made_symlinks;
    // An operand is being copied through the link it was named by (-H, -L):
    // --preserve=links counts it as a file with other names.
    bool operand_followed = false;
    int xattr_ring = -1;
    std::vector<char> xattr_names;

    // -v: events of a tree wait in `tree_events`, each with the tree's entry
    // it belongs to (`tree_entry` while that entry is copied), and are told
    // in the tree's order at its end; an operand's are told at once.
    struct Event {
        std::size_t entry;
        CopyEvent kind;
        std::string from, to;
    };
    std::vector<Event>* tree_events = nullptr;
    std::size_t tree_entry = 0;
    void event(CopyEvent kind, std::string_view from, std::string_view to = {}) {
        if (!o.on_event) return;
        if (tree_events)
            tree_events->push_back({tree_entry, kind, std::string(from), std::string(to)});
        else
            o.on_event(kind, from, to);
    }
};

// Ctx::operand_followed set for one operand's copy.
struct OperandLinks {
    OperandLinks(Ctx& c, bool on) : c_(c) { c_.operand_followed = on; }
    ~OperandLinks() { c_.operand_followed = false; }
    OperandLinks(const OperandLinks&) = delete;
    OperandLinks& operator=(const OperandLinks&) = delete;

private:
    Ctx& c_;
};

// ---- messages ------------------------------------------------------------------

CopyStatus status_of_write(int err) noexcept;
// Creating a destination: a directory on its path that does not exist
// (ENOENT, ENOTDIR) is a path the user named that cannot be used, status 4
// with and without -r; a refusal to write (EACCES, EROFS, ...) stays 1.
CopyStatus status_of_create(int err) noexcept;
// "PATH: write at offset 4096: No space left on device (errno 28)"
std::string io_message(std::string_view path, const char* what, std::uint64_t offset, int err);
// "PATH: what: strerror (errno N)"
std::string errno_message(std::string_view path, const char* what, int err);
// coreutils' form: "what 'PATH': strerror", e.g. "cannot stat 'x': No such file or directory"
std::string quoted_message(const char* what, std::string_view path, int err);
std::string shrank_message(std::string_view path, std::uint64_t offset);

// ---- paths -------------------------------------------------------------------

std::string dirname_of(const std::string& path);
std::string basename_of(std::string path);
std::string join(const std::string& dir, std::string_view name);
// ".NAME.uringkit-XXXXXXXXXXXX" beside `final_path`, 12 characters from
// getrandom(2): another user cannot guess it to plant a file or symlink there
// first (and the create uses O_EXCL | O_NOFOLLOW anyway).
std::string temp_name_for(const std::string& final_path);
// "/proc/self/fd/DIR/NAME" for the calls that take only a path (lsetxattr):
// the directory the copy holds, then one name in it.  NAME itself when
// `dir` is AT_FDCWD.
std::string held_path(int dir, const std::string& name);
std::uint64_t round_up(std::uint64_t v, std::uint64_t a);

// ---- the ring and its buffers (copy_setup.cpp) --------------------------------

// The ring, created on the first call (sized for a tree with -r, else for one
// file's pairs); nullptr when io_uring cannot be set up (said once) or with
// force_fallback.  With -r it also caps io-wq's workers (see copy_setup.cpp).
Ring* ensure_ring(Ctx& c);
// c.big holds at least `bytes`, registered when a ring exists.  Call only
// with nothing in flight.  False when the ring cannot be used any more.
bool ensure_big_buffer(Ctx& c, std::size_t bytes);
// The ring, its sparse fixed-file table and the small buffers the chains use.
bool ensure_chains(Ctx& c);
// In ~Ctx: puts back io-wq's worker limit.
void restore_kernel_workers(Ctx& c) noexcept;

// ---- one file's bytes (copy_range.cpp) ---------------------------------------

struct Extent {
    std::uint64_t begin, end;
};
std::vector<Extent> data_extents(int fd, const struct stat& st, std::uint64_t& syscalls);

struct RangeJob {
    int src, dst;
    std::string_view src_name, dst_name;
    std::vector<Extent> extents;
    bool direct;          // both files O_DIRECT (--direct)
    int src_direct = -1;  // the source opened again with O_DIRECT, for aligned reads (cold source)
    unsigned qd = 0;      // pairs in flight
    std::size_t block_size = 0;

    char* block(const Ctx& c, unsigned k) const {
        return c.big.get() + std::size_t{k} * block_size;
    }
};

// Copies the job's extents on the ring (or with pread/pwrite without one).
// Every path out has no operation of this job left in the kernel, or has set
// c.kernel_holds_buffers.  An interruption (CopyOptions::stop) is a Failure
// with status `interrupted`.
std::optional<Failure> copy_range(Ctx& c, const RangeJob& job, std::uint64_t& bytes);
// A source that is not a regular file (a pipe, a FIFO, a character device):
// read() until end of file, write() what came, in order (also for a
// destination that is a pipe or a device).
std::optional<Failure> copy_stream(Ctx& c, int src, int dst, std::string_view src_name,
                                   std::string_view dst_name, std::uint64_t& bytes);

// Asks the kernel to cancel everything in flight on the ring and reaps, for
// about a second at most, until `in_flight()` is 0; each completion goes to
// `on_cqe`.  False when the ring could not be drained (io_uring_enter keeps
// failing): then the buffers are kept (c.kernel_holds_buffers).
template <class InFlight, class OnCqe>
bool drain(Ctx& c, InFlight in_flight, OnCqe on_cqe);

// ---- the in-kernel paths (copy_kernel.cpp) -----------------------------------

// FICLONE of the whole source onto `dst`: 0 or -errno.
int clone_file(Ctx& c, int src, int dst);
// copy_file_range over `extents`, chunk by chunk (progress and the stop flag
// are looked at between chunks).  `refused`: the kernel declined the pair
// before a byte was copied (EXDEV, EOPNOTSUPP, EINVAL, ENOSYS): nothing was
// written and the caller copies another way.
std::optional<Failure> copy_in_kernel(Ctx& c, int src, int dst, std::string_view src_name,
                                      std::string_view dst_name, const std::vector<Extent>& extents,
                                      std::uint64_t& bytes, bool& refused);

// ---- destinations (copy_destination.cpp) -------------------------------------

// Where a destination entry is: a name in a directory the copy holds open
// (every entry of a tree below its operand: copy_dirs.hpp), or an operand
// the user named, by its path (`dir` AT_FDCWD, `name` the path).  Every
// create, rename, unlink and attribute change goes through `dir` and `name`,
// so a directory of the destination renamed or replaced by a symbolic link
// after the copy entered it cannot send the copy anywhere else.
struct Where {
    int dir = AT_FDCWD;
    std::string name;  // relative to `dir`
    std::string path;  // what messages name
    // Below an operand: a symbolic link found at `name` is refused (or
    // replaced with --remove-destination), never written through.
    bool in_tree = false;

    static Where operand(const std::string& path) { return {AT_FDCWD, path, path, false}; }
};

// An open destination file: the user's entry written in place, or a new
// temporary beside it that finish_destination renames over it.
struct Destination {
    util::UniqueFd fd;
    std::string path;      // the user's path (what messages name)
    int dir = AT_FDCWD;    // the directory `temp` and `replaced` are in
    std::string name;      // the entry itself, relative to `dir`
    std::string temp;      // empty when written in place
    std::string replaced;  // what the temporary is renamed over: `name`, or with --atomic the file
                           // a symlink names
    bool created = false;  // a file this copy made (mode from the source, umask applied)
    bool regular = true;   // false: a FIFO, a device: written in order, never truncated or renamed
    // A new file is made with no group or other permissions, so nobody but
    // the copier can open it while it fills; its mode comes last (0: none to set).
    mode_t final_mode = 0;
};

// -n, --update, -i: whether the existing destination at `at` (stat'ed as
// `dst`) is left alone for the source `src`.
struct Where;
bool keep_existing(Ctx& c, const struct stat& src, const struct stat& dst, const Where& at);
// -u and nothing else that keeps a destination (-n, -i): with
// --preserve=links the names of a file whose first copy -u left alone are
// still made links of it, as coreutils does.
inline bool update_only_older(const CopyOptions& o) noexcept {
    return o.update == Update::older && !o.no_clobber && !o.ask_overwrite;
}

// Opens `dst` for the source `src_name` (stat'ed as `src`): an existing file in place
// (at an operand through a symlink, O_TRUNC, its inode, links, mode and
// owner kept; with --atomic a temporary renamed over it), a new file under a
// temporary.  `in_new_dir`: the parent is a directory this copy created, so
// the file is created at its name directly (O_EXCL) and removed again on
// failure.  -n and an existing name: `skipped`, nothing opened.
// -n, -u or -i leaving an existing name alone: `skipped`, nothing opened.
// Otherwise CopyEvent::copied is told once the destination is decided on.
std::optional<Failure> open_destination(Ctx& c, const Where& dst, const char* src_name,
                                        const struct stat& src, bool in_new_dir, Destination& out,
                                        bool& skipped);
// ---- metadata (copy_metadata.cpp) --------------------------------------------

// A file whose attributes are read or set: through a descriptor the copy
// holds, else by path (never following a final symlink where the call allows).
// A destination without a descriptor is named by `dir` and `name` and never
// followed (the *at calls with AT_SYMLINK_NOFOLLOW): a symbolic link's own
// attributes, a FIFO's or a device's (never opened to set them).
struct Node {
    int fd = -1;
    const char* path = nullptr;  // messages; and a source's path when it has no descriptor
    int dir = AT_FDCWD;
    const char* name = nullptr;  // relative to `dir`; `path` when null
};
// What --preserve asks, in coreutils' order: owner, extended attributes
// (ACLs included), mode (set-ID bits only when the owner was kept or not
// asked for), times last (the other steps change ctime, never the times
// kept).  Without --preserve nothing: a new file's mode was set at creation
// (umask applied).  `st`: the source as stat'ed before its bytes were read.
void keep_attributes(Ctx& c, Node src, Node dst, const struct stat& st, bool is_symlink);
// --preserve=links: a source with several links whose first copy is known
// (copied in this run) becomes a hard link of that copy at `dst`.  Returns
// false when it is not one (nothing done); `failure` set when linking failed.
// `first`: where the first copy is when the caller knows (an entry of the
// same tree, by its held directory); otherwise the path remembered.
bool link_to_first_copy(Ctx& c, const struct stat& st, const Where& dst, bool in_new_dir,
                        std::optional<Failure>& failure, const Where* first = nullptr);
// Records where a source with several links was copied to (its path, for
// the operands that follow).
void remember_first_copy(Ctx& c, const struct stat& st, const std::string& dst);
// fsync (--sync), close (its result checked), rename the temporary into
// place and, with --sync, fsync the directory.  On failure the temporary or
// the new file is removed.
std::optional<Failure> finish_destination(Ctx& c, Destination& d);
// After a failure or an interruption: removes what this copy created.
void abandon_destination(Ctx& c, Destination& d);

// A regular source onto a regular destination, by the path copy_strategy.cpp
// picks for the pair (copy_strategy.cpp).  When the ring failed with this
// file's requests in flight (c.kernel_holds_buffers) the descriptors are
// left open for the kernel (released from `src` and `d.fd`).
std::optional<Failure> copy_regular(Ctx& c, util::UniqueFd& src, const struct stat& st,
                                    Destination& d, const char* src_name, std::uint64_t& bytes);
// For a tree from `src_root` into `dst_root` (both exist): the pair when its
// small files are to be cloned one by one (a file system that may share
// extents, or --reflink=always) instead of copied by the chains; nullptr
// otherwise.  Its `reflink` turns to Known::no at the first refused FICLONE,
// and the rest go to the chains.
FsPair* tree_clones(Ctx& c, const std::string& src_root, const std::string& dst_root);
// The ring path for one regular file (copy_range.cpp): O_DIRECT with
// --direct (`direct` says whether both sides took it), a cold source read
// with O_DIRECT, the big buffer sized to the file.
std::optional<Failure> copy_on_ring(Ctx& c, util::UniqueFd& src, const struct stat& st,
                                    Destination& d, const char* src_name,
                                    const std::vector<Extent>& extents, std::uint64_t& bytes,
                                    bool& direct);

// Copies one regular file, FIFO or device's contents to `dst`.
// `expected_size` (from a tree's statx) turns a size change into an error.
std::optional<Failure> copy_file(Ctx& c, const char* src, const Where& dst, bool in_new_dir,
                                 std::optional<std::uint64_t> expected_size);
std::optional<Failure> copy_symlink(Ctx& c, const char* src, const Where& dst, bool in_new_dir);
// A FIFO, device or socket inside a tree: mkfifo / mknod.
std::optional<Failure> copy_special(Ctx& c, const char* src, const Where& dst,
                                    const struct stat& st);
// ---- -b, -l, -s, --sparse (copy_links.cpp) ------------------------------------

// The name -b would rename `name` in `dir` to (Backup::simple, numbered or
// existing: NAME.~N~ one past the highest there).
std::string backup_name(Ctx& c, int dir, const std::string& name);
// -b: renames the entry at `dst` (lstat'ed as `existing`) to its backup
// name in the same directory.  Refused when that name is the source itself
// (`src`): the rename would destroy what is being copied.
std::optional<Failure> back_up(Ctx& c, const Where& dst, const struct stat& src,
                               const char* src_name);
// -l / -s: `dst` made a hard link of `src` (following a symbolic link
// operand unless -P, as cp) or a symbolic link to it.  An existing entry is
// kept (-n, -u, -i), backed up (-b) or removed (-f, --remove-destination);
// otherwise it is an error, as with cp.
std::optional<Failure> make_link(Ctx& c, const char* src, const Where& dst, bool follow);
// --sparse=always|never: the bytes of `sfd` (stat'ed as `st`) to `dfd` with
// read/write, a hole left for each block of zeros (always) or the source's
// holes written as zeros (never).
std::optional<Failure> copy_sparse_mode(Ctx& c, int sfd, const struct stat& st, int dfd,
                                        const std::string& dst, std::uint64_t& bytes);

// Removes `name` in `dir` and everything under it (a tree this copy
// created), through descriptors: a symbolic link put in its place is
// removed, never followed.
void remove_tree(int dir, const std::string& name, std::uint64_t& syscalls);

// ---- --verify (copy_verify.cpp) ----------------------------------------------

// Reads `src` and `dst` again and compares them 1 MiB at a time by XXH3-128;
// the copy with O_DIRECT where its file system allows it.  Calls
// CopyOptions::before_verify first.  `written`: the inode the copy wrote
// (checked, so a file renamed over the name since is not taken for the
// copy); null where the copy made the name itself inside a new directory.
// A difference, an unreadable file or a stop request is a Failure; the
// copy is left as it is either way.
std::optional<Failure> verify_copy(Ctx& c, const char* src, const Where& dst,
                                   const struct stat* written);
// The end of a regular file: CopyOptions::on_file, for progress.
inline void file_done(const Ctx& c, std::uint64_t bytes) {
    if (c.o.on_file) c.o.on_file(bytes);
}

// ---- trees (copy_tree.cpp) ---------------------------------------------------

// `parent`: the directory the copy is made in, already held (--parents);
// -1: the target's parent is opened by its path.
void copy_tree(Ctx& c, const std::string& src_root, const std::string& target, int parent = -1);

// ---- drain, defined here because both copiers instantiate it ------------------

template <class InFlight, class OnCqe>
bool drain(Ctx& c, InFlight in_flight, OnCqe on_cqe) {
    Ring& ring = *c.ring;
    if (in_flight() == 0) return true;
    // Cancel whatever can be cancelled (queued opens, waits on a pipe);
    // reads and writes of regular files already running finish on their own.
    if (ring.sq_space_left() >= 1)
        ring.prepare(op::AsyncCancel::any().all()).user_data(kDrainCancel);
    for (int attempt = 0; attempt < 20 && in_flight() > 0; ++attempt) {
        const int r = ring.submit_and_wait_for(1, std::chrono::milliseconds(50));
        ring.for_each_completion([&](const Completion& cq) {
            if (cq.user_data != kDrainCancel) on_cqe(cq);
        });
        if (r < 0 && r != -ETIME && r != -EINTR && r != -EBUSY && r != -EAGAIN && in_flight() > 0 &&
            attempt >= 2)
            break;  // the ring itself fails: more attempts only spin
    }
    c.ring_failed = true;
    if (in_flight() == 0) return true;
    c.kernel_holds_buffers = true;
    return false;
}

}  // namespace uringkit::fs::detail
