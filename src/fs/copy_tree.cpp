// cp -r: the walk lists each directory once; directories are created in walk
// order (parents first), small files in new directories go through one
// linked chain each, the rest file by file; modes (and with -p owners and
// times) of directories are set last, deepest first, so a read-only
// directory was still writable while it was filled.
//
// The destination is walked by descriptors (copy_tree.hpp's HeldDirs), as
// coreutils does: the operand's parent is opened once, each directory is
// made 0700 and checked to be the copier's own, or entered O_NOFOLLOW when
// it is already there, and every entry is created, changed and removed
// relative to its directory's descriptor.  Someone who can write in the
// destination (a user whose home a root cp -a fills) cannot redirect the
// copy by renaming a directory or putting a symbolic link in its place:
// the copy goes on in the directory it entered, or refuses.  A symbolic
// link already in the destination tree is never written through.
//
// As with coreutils, whatever can be copied is: an unreadable directory or
// file is reported on its own line and the copy goes on.  With --atomic a
// new tree is built under a temporary name and renamed into place only when
// everything was copied; any failure removes it.
#include "copy_chain.hpp"

#include "fs/walk.hpp"
#include "uringkit/util/unique_fd.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>

namespace uringkit::fs::detail {
namespace {

constexpr std::size_t kRoot = 0;

// A directory's access time before the walk read it (reading it moves it
// under relatime), for --preserve=timestamps.
struct DirAtime {
    std::size_t index;
    struct statx_timestamp atime;
};

// The device of `path` (-x), without following a last symbolic link unless
// `follow`; 0 when statx fails (then a directory is not entered).
dev_t device_of(Ctx& c, const char* path, int follow) {
    struct statx x {};
    ++c.syscalls();
    if (::statx(AT_FDCWD, path, follow ? 0 : AT_SYMLINK_NOFOLLOW, 0, &x) != 0) return 0;
    return makedev(x.stx_dev_major, x.stx_dev_minor);
}

// Lists the tree under t.src[index] depth first; an unreadable directory is
// reported and stays in the tree (it is created, empty, as cp does).
// With -x, `root_dev` is the operand's file system: a directory on another
// is listed (made, empty) but not entered.
void walk(Ctx& c, Tree& t, std::size_t index, std::vector<DirAtime>& atimes, dev_t root_dev) {
    const std::string src(t.src[index]), dst(t.dst[index]);
    if (c.o.preserve.timestamps) {
        struct statx x {};
        ++c.syscalls();
        const int follow = index == kRoot && c.o.dereference_operands ? 0 : AT_SYMLINK_NOFOLLOW;
        if (::statx(AT_FDCWD, src.c_str(), follow, STATX_ATIME, &x) == 0)
            atimes.push_back({index, x.stx_atime});
    }
    std::vector<DirEntry> list;
    const int r = read_directory(src.c_str(), list, c.syscalls());
    if (r < 0) {
        c.report({CopyStatus::bad_input, quoted_message("cannot open directory", src, r)});
        return;
    }
    for (const DirEntry& e : list) {
        if (c.stop_requested()) return;
        t.src.push(src, e.name);
        t.dst.push(dst, e.name);
        t.parent.push_back(index);
        t.type.push_back(e.type);
        if (e.type == EntryType::directory &&
            (!c.o.one_file_system || device_of(c, t.src.c_str(t.src.size() - 1), 0) == root_dev))
            walk(c, t, t.src.size() - 1, atimes, root_dev);
    }
}

// File systems whose files have no ->flush: closing a file there cannot
// report a failed write-back, so a fixed-slot close (which never calls
// ->flush) loses nothing.  Elsewhere (NFS, CIFS, FUSE, ...) close(2) is where
// such errors come back, and files are copied with normal descriptors whose
// close is checked.
bool closes_without_flush(int dir, std::uint64_t& syscalls) {
    struct statfs sf {};
    ++syscalls;
    if (::fstatfs(dir, &sf) != 0) return false;
    switch (static_cast<unsigned long>(sf.f_type)) {
        case 0xEF53:      // ext2/3/4
        case 0x58465342:  // xfs
        case 0x9123683E:  // btrfs
        case 0x01021994:  // tmpfs
            return true;
        default:
            return false;
    }
}

struct stat stat_of(const struct statx& x) {
    struct stat st {};
    st.st_dev = makedev(x.stx_dev_major, x.stx_dev_minor);
    st.st_ino = x.stx_ino;
    st.st_nlink = x.stx_nlink;
    st.st_mode = x.stx_mode;
    st.st_uid = x.stx_uid;
    st.st_gid = x.stx_gid;
    st.st_size = static_cast<off_t>(x.stx_size);
    st.st_rdev = makedev(x.stx_rdev_major, x.stx_rdev_minor);
    st.st_atim = {x.stx_atime.tv_sec, x.stx_atime.tv_nsec};
    st.st_mtim = {x.stx_mtime.tv_sec, x.stx_mtime.tv_nsec};
    return st;
}

// statx of the entries `which` (a tree's indexes), through the ring.
int stat_entries(Ctx& c, Tree& t, const std::vector<std::size_t>& which) {
    std::vector<const char*> ptrs(which.size());
    for (std::size_t k = 0; k < which.size(); ++k) ptrs[k] = t.src.c_str(which[k]);
    std::vector<struct statx> st(which.size());
    std::vector<int> res(which.size());
    const int err =
        stat_batch(ensure_ring(c), ptrs, AT_SYMLINK_NOFOLLOW, kTreeStatMask, st, res, c.syscalls());
    for (std::size_t k = 0; k < which.size(); ++k) {
        t.st[which[k]] = st[k];
        t.st_res[which[k]] = res[k];
    }
    return err;
}

// The operand's parent directory (as the user named it) and its last name:
// "a/b/" -> ("a", "b"), "b" -> (".", "b"), "/" -> ("/", ".").
std::pair<std::string, std::string> split_operand(std::string path) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    if (path == "/") return {"/", "."};
    return {dirname_of(path), basename_of(path)};
}

}  // namespace

void copy_tree(Ctx& c, const std::string& src_root, const std::string& target, int held_parent) {
    // The operand's parent is resolved once, as the user named it; the
    // tree's root is made or entered from it and everything else from there.
    const auto [parent_path, base] = split_operand(target);
    ++c.syscalls();
    util::UniqueFd operand_dir(
        held_parent >= 0 ? ::fcntl(held_parent, F_DUPFD_CLOEXEC, 0)
                         : ::open(parent_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!operand_dir) {
        c.report(
            {status_of_create(errno), quoted_message("cannot create directory", target, errno)});
        return;
    }
    struct stat tst {};
    ++c.syscalls();
    const bool exists = ::fstatat(operand_dir.get(), base.c_str(), &tst, AT_SYMLINK_NOFOLLOW) == 0;
    if (exists && !S_ISDIR(tst.st_mode)) {
        c.report({CopyStatus::bad_input, "cannot overwrite non-directory '" + target +
                                             "' with directory '" + src_root + "'"});
        return;
    }
    // --atomic and a new tree: built under a temporary name (mkdirat fails
    // on anything already there, a planted symlink included), renamed at the
    // end.  Messages name the entries by their final paths.
    const bool staged = c.o.atomic && !exists;
    std::string root_name = base;
    bool root_made = false;
    int root_err = 0;
    if (staged)
        for (int attempt = 0; attempt < 16; ++attempt) {
            root_name = temp_name_for(base);
            ++c.syscalls();
            if (::mkdirat(operand_dir.get(), root_name.c_str(), S_IRWXU) == 0) {
                root_made = true;
                break;
            }
            root_err = errno;
            if (root_err != EEXIST) break;
        }
    const std::uint64_t failures_before = c.result.failures;

    Tree t;
    t.src.push(src_root);
    t.dst.push(target);
    t.parent.push_back(kRoot);
    t.type.push_back(EntryType::directory);
    std::vector<DirAtime> atimes;
    const dev_t root_dev = c.o.one_file_system
                               ? device_of(c, t.src.c_str(kRoot), c.o.dereference_operands ? 1 : 0)
                               : 0;
    walk(c, t, kRoot, atimes, root_dev);
    if (c.o.after_walk) c.o.after_walk();

    const std::size_t n = t.src.size();
    t.st.resize(n);
    t.st_res.assign(n, kStatDeferred);
    // With no attributes to keep, the small files of the directories this
    // copy creates go to copy_pool.cpp's threads: cloned where the file
    // system shares extents, else read -> write when they are in the page cache.
    // -v tells a tree's lines in its order: the pool's threads would not say which they copied.
    // -l, -s, --attributes-only and --sparse=always|never take each file by itself
    // (copy_links.cpp, copy_file), never the pool or the chains.
    const bool by_file = c.o.link_instead != LinkInstead::none || c.o.attributes_only ||
                         c.o.sparse != Sparse::automatic;
    const bool plain = !c.o.preserve.any() && !c.o.on_event && !by_file;
    const std::string root_path =
        join(parent_path, root_name);  // the file system's, for the strategy only
    const bool cloning_fs =
        plain && tree_clones(c, src_root, exists || staged ? root_path : parent_path) != nullptr;
    const bool pool_clones = cloning_fs && c.o.clone_threads > 0;
    const bool pool_bytes = plain && !cloning_fs && c.o.copy_threads > 0 && !c.o.direct &&
                            !c.o.force_fallback && c.o.engine == ByteEngine::automatic &&
                            tree_is_cached(c, t);
    // A new tree with no totals to show first: the pool's workers take each
    // regular file's statx from the descriptor they open, in parallel,
    // instead of a serial pass here (on XFS that pass was a tenth of the
    // copy).  The walk's d_type says which entries those are.
    const bool defer = !exists && !c.o.on_planned && (pool_clones || pool_bytes);
    std::vector<std::size_t> to_stat;
    for (std::size_t i = 0; i < n; ++i)
        if (!defer || t.type[i] != EntryType::regular) to_stat.push_back(i);
    if (const int err = stat_entries(c, t, to_stat);
        err < 0) {  // the ring cannot be used any more: one line
        c.ring_failed = true;
        c.report({CopyStatus::failure, errno_message(src_root, "io_uring_enter", err)});
        if (root_made) remove_tree(operand_dir.get(), root_name, c.syscalls());
        return;
    }
    if (c.o.dereference_operands && t.st_res[kRoot] == 0) {  // -H: the operand's link is followed
        ++c.syscalls();
        struct statx x {};
        t.st_res[kRoot] =
            ::statx(AT_FDCWD, src_root.c_str(), 0, kTreeStatMask, &x) == 0 ? 0 : -errno;
        t.st[kRoot] = x;
    }
    // -v: this tree's events wait here and are told in the tree's order at the end.
    std::vector<Ctx::Event> events;
    struct TreeEvents {
        Ctx& c;
        std::vector<Ctx::Event>& events;
        ~TreeEvents() {
            c.tree_events = nullptr;
            std::stable_sort(
                events.begin(), events.end(),
                [](const Ctx::Event& a, const Ctx::Event& b) { return a.entry < b.entry; });
            for (const Ctx::Event& e : events) c.o.on_event(e.kind, e.from, e.to);
        }
    } tell_events{c, events};
    if (c.o.on_event) c.tree_events = &events;
    for (const DirAtime& d : atimes)
        if (t.st_res[d.index] == 0) t.st[d.index].stx_atime = d.atime;

    // 1: directories exist (created, or already there) and are held in
    // `dirs`, 0: not there.
    std::vector<char> present(n, 0), created(n, 0);
    HeldDirs held(t, c.syscalls());
    // Entry i's place: its name in its directory's descriptor (opened again
    // if it was closed; the caller checks `dir`).
    const auto where = [&](std::size_t i) {
        return Where{held.get(t.parent[i]), t.name(i), std::string(t.dst[i]), true};
    };
    std::vector<std::size_t> small, large, dirs;
    // --preserve=links: files whose inode is already being copied, from this
    // tree (first_here) or an earlier operand: made as hard links afterwards.
    std::vector<std::size_t> links;
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> first_here;
    bool chains_allowed = false;        // known once the root directory is there
    FsPair* clones = nullptr;           // small files are cloned (copy_strategy.cpp decides)
    std::vector<std::size_t> unstated;  // deferred stats the pool did not take
    // A stat'd entry other than a directory: a link, a special file, or a
    // regular file for the chains (small) or file by file (large).
    // -l, -s: an entry other than a directory made a link of its source.
    const auto link_entry = [&](std::size_t i) {
        const Where at = where(i);
        if (at.dir < 0) {
            c.report({CopyStatus::failure,
                      dir_failure_message(std::string(t.dst[t.parent[i]]), at.dir)});
            return;
        }
        if (const auto f = make_link(c, t.src.c_str(i), at, false)) c.report(*f);
    };
    const auto place = [&](std::size_t i, bool in_new_dir) {
        c.tree_entry = i;
        const mode_t mode = t.st[i].stx_mode;
        if (c.o.link_instead != LinkInstead::none && !S_ISDIR(mode)) {
            link_entry(i);
            return;
        }
        if (c.o.copy_contents && !S_ISLNK(mode) && !S_ISREG(mode) && !S_ISDIR(mode)) {
            large.push_back(i);  // --copy-contents: read like a file
            return;
        }
        if (S_ISLNK(mode) || (!S_ISREG(mode) && !S_ISDIR(mode))) {
            const Where at = where(i);
            if (at.dir < 0) {
                c.report({CopyStatus::failure,
                          dir_failure_message(std::string(t.dst[t.parent[i]]), at.dir)});
                return;
            }
            // A link is made again; a FIFO, a device, a socket too, never read (cp -R).
            const auto f = S_ISLNK(mode) ? copy_symlink(c, t.src.c_str(i), at, in_new_dir)
                                         : copy_special(c, t.src.c_str(i), at, stat_of(t.st[i]));
            if (f) c.report(*f);
        } else if (S_ISREG(mode)) {
            if (c.o.preserve.links && t.st[i].stx_nlink > 1) {
                const std::pair<std::uint64_t, std::uint64_t> key{
                    makedev(t.st[i].stx_dev_major, t.st[i].stx_dev_minor), t.st[i].stx_ino};
                if (c.first_link.count(key) || !first_here.emplace(key, i).second) {
                    links.push_back(i);
                    return;
                }
            }
            const bool sparse = t.st[i].stx_blocks * 512 < t.st[i].stx_size;
            const bool chain = (chains_allowed || pool_bytes) && in_new_dir && !c.o.direct &&
                               !sparse && t.st[i].stx_size <= kSmallMax;
            (chain ? small : large).push_back(i);
        } else {  // a directory, a file when the walk listed it
            c.report({CopyStatus::bad_input,
                      "skipping '" + std::string(t.src[i]) +
                          "': it was replaced by a directory while being copied"});
        }
    };
    for (std::size_t i = 0; i < n && !c.stop_requested(); ++i) {
        const std::size_t parent = t.parent[i];
        if (i != kRoot && !present[parent]) continue;  // its directory failed: reported there
        const bool in_new_dir = i != kRoot && created[parent];
        if (t.st_res[i] ==
            kStatDeferred) {  // a regular file by d_type: to the pool, which stats it
            if (c.o.link_instead != LinkInstead::none)
                link_entry(i);
            else
                (in_new_dir ? small : unstated).push_back(i);
            continue;
        }
        if (t.st_res[i] < 0) {
            c.report({CopyStatus::bad_input, quoted_message("cannot stat", t.src[i], t.st_res[i])});
            continue;
        }
        if (S_ISDIR(t.st[i].stx_mode)) {
            bool made_now = false;
            bool ok = false;
            if (i == kRoot && staged && !root_made) {
                c.report({status_of_create(root_err),
                          quoted_message("cannot create directory", target, root_err)});
            } else if (i == kRoot) {
                ok = enter_directory(c, t, held, i, operand_dir.get(), root_name.c_str(), root_made,
                                     !staged, made_now);
            } else if (const int pfd = held.get(parent); pfd < 0) {
                c.report(
                    {CopyStatus::failure, dir_failure_message(std::string(t.dst[parent]), pfd)});
            } else {
                ok = enter_directory(c, t, held, i, pfd, t.name(i), false, !in_new_dir, made_now);
            }
            if (!ok) {
                if (i == kRoot) break;
                continue;
            }
            present[i] = 1;
            created[i] = made_now;
            c.tree_entry = i;
            if (made_now) c.event(CopyEvent::copied, t.src[i], t.dst[i]);
            if (i == kRoot) {
                chains_allowed =
                    !by_file && c.ring && closes_without_flush(held.held(kRoot), c.syscalls());
                clones = tree_clones(c, src_root, root_path);
            }
            dirs.push_back(i);
            ++c.result.dirs;
        } else {
            place(i, in_new_dir);
        }
    }

    if (c.o.after_directories) c.o.after_directories();
    if (c.o.on_planned) {
        std::uint64_t bytes = 0;
        for (const auto* list : {&small, &large, &links})
            for (std::size_t i : *list) bytes += t.st[i].stx_size;
        c.o.on_planned(small.size() + large.size() + links.size(), bytes);
    }

    std::vector<char> copied(n, 0);  // regular files copied by this run (not skipped, not failed)
    // One regular file on the large-file path (or cloned one by one).
    auto copy_one_file = [&](std::size_t i, std::optional<std::uint64_t> expected_size) {
        const Where at = where(i);
        if (at.dir < 0) {
            c.report({CopyStatus::failure,
                      dir_failure_message(std::string(t.dst[t.parent[i]]), at.dir)});
            return;
        }
        const std::uint64_t skipped = c.result.skipped;
        c.tree_entry = i;
        if (auto f = copy_file(c, t.src.c_str(i), at, created[t.parent[i]] != 0, expected_size))
            c.report(*f);
        else  // (one -u left as it is, newer, is what its other names are linked to, as cp)
            copied[i] = c.result.skipped == skipped || update_only_older(c.o);
    };
    if ((pool_bytes || (clones && pool_clones)) && !small.empty()) {
        // What it could not clone or copy stays in `small` ...
        if (pool_bytes)
            copy_in_pool(c, t, held, small);
        else
            clone_in_pool(c, t, held, *clones, small);
        if (defer) {  // ... with the files of any size it was given: stat'd now, if it did not, and
                      // placed
            std::vector<std::size_t> back;
            back.swap(small);
            for (std::size_t i : back)
                if (t.st_res[i] == kStatDeferred)
                    unstated.push_back(i);
                else
                    place(i, true);
        }
    } else if (clones) {  // with -p, on this thread: until the first refused FICLONE
                          // (--reflink=always: all)
        std::size_t k = 0;
        for (; k < small.size() && (clones->reflink != Known::no || c.o.reflink == Reflink::always);
             ++k) {
            if (c.stop_requested()) break;
            copy_one_file(small[k], std::nullopt);
        }
        small.erase(small.begin(), small.begin() + static_cast<std::ptrdiff_t>(k));
    }
    if (!unstated.empty() && !c.stop_requested()) {
        std::sort(unstated.begin(), unstated.end());
        if (const int err = stat_entries(c, t, unstated); err < 0) {
            c.ring_failed = true;
            c.report({CopyStatus::failure, errno_message(src_root, "io_uring_enter", err)});
        } else {
            for (std::size_t i : unstated) {
                if (t.st_res[i] < 0)
                    c.report({CopyStatus::bad_input,
                              quoted_message("cannot stat", t.src[i], t.st_res[i])});
                else
                    place(i, created[t.parent[i]] != 0);
            }
        }
    }
    if (!small.empty() && !c.stop_requested() &&
        !ensure_chains(c)) {  // no chains after all: file by file
        large.insert(large.begin(), small.begin(), small.end());
        small.clear();
    }
    if (!small.empty() && !c.stop_requested() && !c.ring_unusable()) {
        ChainCopier chains(c, t, held, small);
        chains.run();
        large.insert(large.end(), chains.redo().begin(), chains.redo().end());
        for (std::size_t i : chains.done()) {
            copied[i] = 1;
            c.tree_entry = i;
            c.event(CopyEvent::copied, t.src[i], t.dst[i]);
        }
        // Chain-copied files get their attributes once all are written,
        // each through a descriptor opened at its name (never following).
        if (c.o.preserve.any())
            for (std::size_t i : chains.done()) {
                const Where at = where(i);
                ++c.syscalls();
                util::UniqueFd fd(at.dir < 0 ? -1
                                             : ::openat(at.dir, at.name.c_str(),
                                                        O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
                                                            O_NOCTTY | O_CLOEXEC));
                if (!fd) {
                    c.report({CopyStatus::failure,
                              quoted_message("cannot open", at.path, at.dir < 0 ? at.dir : errno) +
                                  " (to set its attributes)"});
                    continue;
                }
                keep_attributes(c, {-1, t.src.c_str(i)}, {fd.get(), at.path.c_str()},
                                stat_of(t.st[i]), false);
            }
        // --verify: each read back once the chains are done (the chains
        // said the others were done as they finished).
        if (c.o.verify)
            for (std::size_t i : chains.done()) {
                if (c.stop_requested()) break;
                if (auto f = verify_copy(c, t.src.c_str(i), where(i), nullptr)) {
                    c.report(*f);
                    copied[i] = 0;
                } else {
                    file_done(c, t.st[i].stx_size);
                }
            }
    }
    for (std::size_t i : large) {
        if (c.stop_requested() || c.ring_unusable()) break;
        const bool redone = t.st[i].stx_size <= kSmallMax &&
                            std::find(small.begin(), small.end(), i) != small.end();
        copy_one_file(i, redone ? std::optional<std::uint64_t>(t.st[i].stx_size) : std::nullopt);
    }
    // Hard links last, once the file they share is copied; one whose first
    // copy failed is copied on its own (and the next ones link to it).  A
    // first copy of this tree is linked through its held directory.
    for (std::size_t i : links) {
        if (c.stop_requested() || c.ring_unusable()) break;
        const struct stat st = stat_of(t.st[i]);
        const std::pair<std::uint64_t, std::uint64_t> key{st.st_dev, st.st_ino};
        const auto first = first_here.find(key);
        const bool here = first != first_here.end() && copied[first->second];
        std::optional<Failure> failure;
        bool linked = false;
        std::optional<Where> first_at;
        const std::uint64_t skipped_before = c.result.skipped;
        if (here) {  // its directory stays open while this one's is found
            first_at = where(first->second);
            if (first_at->dir >= 0) held.pin(t.parent[first->second]);
        }
        const Where at = where(i);
        if (at.dir < 0 || (first_at && first_at->dir < 0)) {
            const std::size_t dir = at.dir < 0 ? t.parent[i] : t.parent[first->second];
            c.report(
                {CopyStatus::failure, dir_failure_message(std::string(t.dst[dir]),
                                                          at.dir < 0 ? at.dir : first_at->dir)});
            linked = true;
        } else {
            linked = link_to_first_copy(c, st, at, created[t.parent[i]] != 0, failure,
                                        first_at ? &*first_at : nullptr);
        }
        if (first_at && first_at->dir >= 0) held.unpin(t.parent[first->second]);
        if (linked) {
            if (failure)
                c.report(*failure);
            else if (c.result.skipped == skipped_before) {
                c.tree_entry = i;
                c.event(CopyEvent::copied, t.src[i], t.dst[i]);
            }
            continue;
        }
        copy_one_file(i, std::nullopt);
        if (copied[i] && !here) first_here[key] = i;
    }
    // Directory modes last, deepest first, through their descriptors.
    // Without --preserve=mode a new directory gets the source's permission
    // bits less the umask, as with cp; one that was already there keeps its own.
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
        const std::size_t i = *it;
        const struct stat st = stat_of(t.st[i]);
        const int fd = held.get(i);
        if (fd < 0) {
            c.report({CopyStatus::failure, dir_failure_message(std::string(t.dst[i]), fd)});
            continue;
        }
        if (created[i] && !c.o.preserve.mode) {
            // mkdirat gave it 0700 and the parent's set-group-ID bit, which
            // the final mode keeps, as the new directory would have had it
            // from mkdir(2) with the source's bits.
            struct stat made {};
            c.syscalls() += 2;
            const mode_t inherited = ::fstat(fd, &made) == 0 ? made.st_mode & S_ISGID : 0;
            ::fchmod(fd, (c.o.preserve.dir_creation_bits(st.st_mode) & ~c.umask) | inherited);
        }
        keep_attributes(c, {-1, t.src.c_str(i)}, {fd, t.dst.c_str(i)}, st, false);
    }
    // Where the files with several links went, for the operands that follow.
    for (const auto& [key, i] : first_here)
        if (copied[i]) remember_first_copy(c, stat_of(t.st[i]), std::string(t.dst[i]));
    if (c.stop_requested()) c.interrupted = true;
    if (!root_made || !staged) return;
    if (c.result.failures != failures_before || c.interrupted || c.ring_unusable()) {
        remove_tree(operand_dir.get(), root_name, c.syscalls());  // all or nothing
        if (!c.interrupted)
            c.report(
                {CopyStatus::failure, "'" + target +
                                          "' not created: with --atomic a tree that could not be "
                                          "copied whole is removed"});
        return;
    }
    ++c.syscalls();
    if (::renameat2(operand_dir.get(), root_name.c_str(), operand_dir.get(), base.c_str(),
                    RENAME_NOREPLACE) != 0) {
        const int err = errno;
        remove_tree(operand_dir.get(), root_name, c.syscalls());
        c.report({status_of_write(err), quoted_message("cannot create directory", target, err)});
    }
}

}  // namespace uringkit::fs::detail
