// Where the bytes go, with coreutils' rules: an existing destination is
// opened (through a symlink) and written in place, O_TRUNC, so its inode,
// other links, mode, owner, ACLs, xattrs and label stay, and the kernel's
// permission check is the one cp gets (a write-protected file refuses an
// ordinary user, root may write it).  A new file is written under an
// unpredictable temporary name beside it, created O_EXCL | O_NOFOLLOW, and
// renamed into place when complete, so its final name never shows a
// half-written file.  --atomic replaces an existing file the same way.
#include "copy_internal.hpp"

#include "fs/walk.hpp"

#include <fcntl.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>

namespace uringkit::fs::detail {
namespace {

Failure create_failure(const std::string& dst, int err, const char* kind = "regular file") {
    return Failure{status_of_create(err),
                   quoted_message((std::string("cannot create ") + kind).c_str(), dst, err)};
}

// Creates a new temporary beside `name` in `dir`: a fresh random name each
// try, so a name another user planted only costs a retry.  Owner-only
// permissions until the file is complete (Destination::final_mode).
int create_temporary(Ctx& c, int dir, const std::string& name, mode_t mode, std::string& temp) {
    for (int attempt = 0; attempt < 16; ++attempt) {
        temp = temp_name_for(name);
        ++c.syscalls();
        const int fd = ::openat(dir, temp.c_str(),
                                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0700);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1;
}

// With --sync: after a rename the new name lives in the directory, which
// is made durable too (fsync of the file alone does not cover it).
std::optional<Failure> sync_directory_of(Ctx& c, int dir, const std::string& name,
                                         const std::string& path) {
    c.syscalls() += 3;
    util::UniqueFd held(dir == AT_FDCWD
                            ? ::open(dirname_of(name).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                            : ::dup(dir));
    if (!held || ::fsync(held.get()) != 0)
        return Failure{status_of_write(errno),
                       errno_message(dirname_of(path), "fsync of the directory", errno)};
    return std::nullopt;
}

// procfs, sysfs and the like: a regular file's st_size says nothing of
// what a read gives.
bool size_is_unreliable(Ctx& c, int fd) {
    struct statfs sf {};
    ++c.syscalls();
    if (::fstatfs(fd, &sf) != 0) return false;
    switch (static_cast<unsigned long>(sf.f_type)) {
        case 0x9fa0:      // PROC_SUPER_MAGIC
        case 0x62656572:  // SYSFS_MAGIC
        case 0x64626720:  // DEBUGFS_MAGIC
        case 0x74726163:  // TRACEFS_MAGIC
        case 0x73636673:  // SECURITYFS_MAGIC
        case 0x27e0eb:    // CGROUP_SUPER_MAGIC
        case 0x63677270:  // CGROUP2_SUPER_MAGIC
            return true;
        default:
            return false;
    }
}

}  // namespace

std::string held_path(int dir, const std::string& name) {
    if (dir == AT_FDCWD) return name;
    return "/proc/self/fd/" + std::to_string(dir) + "/" + name;
}

bool keep_existing(Ctx& c, const struct stat& src, const struct stat& dst, const Where& at) {
    if (c.o.no_clobber || c.o.update == Update::none) return true;
    if (c.o.update == Update::older &&
        (dst.st_mtim.tv_sec > src.st_mtim.tv_sec ||
         (dst.st_mtim.tv_sec == src.st_mtim.tv_sec && dst.st_mtim.tv_nsec >= src.st_mtim.tv_nsec)))
        return true;
    if (!c.o.ask_overwrite) return false;
    // As coreutils: one the caller may not write is named with its mode.
    ++c.syscalls();
    const bool writable = S_ISLNK(dst.st_mode) || c.root ||
                          ::faccessat(at.dir, at.name.c_str(), W_OK, AT_EACCESS) == 0;
    return !c.o.ask_overwrite(at.path, writable ? 0 : dst.st_mode);
}

std::optional<Failure> open_destination(Ctx& c, const Where& dst, const char* src_name,
                                        const struct stat& src, bool in_new_dir, Destination& out,
                                        bool& skipped) {
    const mode_t src_mode = src.st_mode;
    out.path = dst.path;
    out.dir = dst.dir;
    out.name = dst.name;
    out.replaced = dst.name;
    struct stat st {};
    bool exists = false, via_symlink = false;
    if (!in_new_dir && c.o.force && !dst.in_tree && !c.o.no_clobber) {
        // -f and an operand that is a symbolic link loop (ELOOP): the link is
        // replaced, as cp -f does; it names no file to write through.
        struct stat link {
        }, through{};
        c.syscalls() += 2;
        if (::fstatat(dst.dir, dst.name.c_str(), &link, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISLNK(link.st_mode) && ::fstatat(dst.dir, dst.name.c_str(), &through, 0) != 0 &&
            errno == ELOOP) {
            ++c.syscalls();
            if (::unlinkat(dst.dir, dst.name.c_str(), 0) != 0 && errno != ENOENT)
                return Failure{CopyStatus::failure,
                               quoted_message("cannot remove", dst.path, errno)};
        }
    }
    if (!in_new_dir) {
        ++c.syscalls();
        if (::fstatat(dst.dir, dst.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
            if (c.o.no_clobber) {
                skipped = true;
                return std::nullopt;
            }
            // -b and --remove-destination replace the entry itself, a symbolic link too.
            const bool replaces = c.o.remove_destination || c.o.backup != Backup::none;
            if (S_ISLNK(st.st_mode) && dst.in_tree && !replaces)
                return Failure{
                    CopyStatus::failure,
                    "not writing through symbolic link '" + dst.path +
                        "' inside the destination tree (--remove-destination replaces it)"};
            if (S_ISLNK(st.st_mode) && !replaces) {  // an operand: written through, as cp does
                if (c.made_symlinks.count({static_cast<std::uint64_t>(st.st_dev),
                                           static_cast<std::uint64_t>(st.st_ino)}))
                    return Failure{CopyStatus::failure, "will not copy '" + std::string(src_name) +
                                                            "' through just-created symlink '" +
                                                            dst.path + "'"};
                via_symlink = true;
                ++c.syscalls();
                if (::fstatat(dst.dir, dst.name.c_str(), &st, 0) != 0) {
                    if (errno == ENOENT && std::getenv("POSIXLY_CORRECT") != nullptr) {
                        // POSIX says to create the file the link names, and coreutils
                        // does so under POSIXLY_CORRECT: opened through the link, O_CREAT.
                        c.event(CopyEvent::copied, src_name, dst.path);
                        ++c.syscalls();
                        out.fd.reset(::openat(dst.dir, dst.name.c_str(),
                                              O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY,
                                              c.o.preserve.creation_bits(src_mode) & ~c.umask));
                        if (!out.fd) return create_failure(dst.path, errno);
                        out.regular = true;
                        return std::nullopt;
                    }
                    if (errno == ENOENT)
                        return Failure{CopyStatus::failure,
                                       "not writing through dangling symlink '" + dst.path + "'"};
                    return Failure{CopyStatus::failure,
                                   quoted_message("cannot stat", dst.path, errno)};
                }
            }
            if (keep_existing(c, src, st, dst)) {
                skipped = true;
                return std::nullopt;
            }
            if (S_ISDIR(st.st_mode))
                return Failure{CopyStatus::bad_input,
                               "cannot overwrite directory '" + dst.path + "' with non-directory"};
            exists = true;
            if (c.o.backup != Backup::none) {
                if (auto f = back_up(c, dst, src, src_name)) return f;
                exists = false;
            } else if (c.o.remove_destination) {
                ++c.syscalls();
                if (::unlinkat(dst.dir, dst.name.c_str(), 0) != 0 && errno != ENOENT)
                    return Failure{CopyStatus::failure,
                                   quoted_message("cannot remove", dst.path, errno)};
                c.event(CopyEvent::removed, dst.path);
                exists = false;
            }
        } else if (errno != ENOENT) {
            return create_failure(dst.path, errno);
        }
    }
    c.event(CopyEvent::copied, src_name, dst.path);
    out.regular = !exists || S_ISREG(st.st_mode);
    if (exists && (!c.o.atomic || !out.regular)) {
        // In place.  A FIFO or a device is opened and written, never renamed
        // over.  Inside a tree the entry is opened without following a link
        // and must be the one just looked at: only then is it truncated.
        ++c.syscalls();
        const int nofollow = via_symlink ? 0 : O_NOFOLLOW;
        out.fd.reset(
            ::openat(dst.dir, dst.name.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | nofollow));
        if (!out.fd && errno == ELOOP && dst.in_tree)
            return Failure{CopyStatus::failure,
                           "'" + dst.path + "' was replaced while being copied: not written"};
        if (!out.fd && !(c.o.force && out.regular)) return create_failure(dst.path, errno);
        if (!out.fd) {
            // -f: the entry itself is removed (a symbolic link at an operand,
            // not what it names; unlinkat never follows one) and a new file
            // made at its name.
            ++c.syscalls();
            if (::unlinkat(dst.dir, dst.name.c_str(), 0) != 0 && errno != ENOENT)
                return Failure{CopyStatus::failure,
                               quoted_message("cannot remove", dst.path, errno)};
            c.event(CopyEvent::removed, dst.path);
            exists = false;
        }
    }
    if (exists && (!c.o.atomic || !out.regular)) {
        struct stat opened {};
        c.syscalls() += 1;
        if (::fstat(out.fd.get(), &opened) != 0 || opened.st_dev != st.st_dev ||
            opened.st_ino != st.st_ino) {
            out.fd.reset();
            return Failure{CopyStatus::failure,
                           "'" + dst.path + "' was replaced while being copied: not written"};
        }
        if (out.regular && !c.o.attributes_only) {  // --attributes-only keeps its bytes
            ++c.syscalls();
            if (::ftruncate(out.fd.get(), 0) != 0) {
                const int err = errno;
                out.fd.reset();
                return create_failure(dst.path, err);
            }
        }
        return std::nullopt;
    }
    out.created = true;
    if (in_new_dir) {  // a directory this copy made and holds: nothing else can be at this name but
                       // what we put there
        ++c.syscalls();
        out.fd.reset(::openat(dst.dir, dst.name.c_str(),
                              O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                              c.o.preserve.creation_bits(src_mode)));
        if (!out.fd) {
            out.created = false;
            return create_failure(dst.path, errno);
        }
        return std::nullopt;
    }
    if (exists) {
        // --atomic: the rename would get past the file's own permissions
        // (it needs only the directory's), so ask them first as an in-place
        // open would: a write-protected file refuses an ordinary user.
        ++c.syscalls();
        // (-f replaces it all the same, as its in-place open would.)
        if (!c.o.force && ::faccessat(dst.dir, dst.name.c_str(), W_OK, AT_EACCESS) != 0)
            return create_failure(dst.path, errno);
        if (via_symlink) {  // the file the link names is replaced, the link stays
            char resolved[PATH_MAX];
            ++c.syscalls();
            if (!::realpath(held_path(dst.dir, dst.name).c_str(), resolved))
                return create_failure(dst.path, errno);
            out.replaced = resolved;
        }
    }
    // A new file takes the source's permission bits less the umask, never
    // its set-ID bits, as cp does.  --atomic keeps the replaced file's
    // permission bits.  Until it is complete it has only the owner's.
    const mode_t mode =
        exists ? st.st_mode & 0777 : c.o.preserve.creation_bits(src_mode) & ~c.umask;
    out.fd.reset(create_temporary(c, out.dir, out.replaced, mode, out.temp));
    if (!out.fd) {
        out.created = false;
        out.temp.clear();
        return create_failure(dst.path, errno);
    }
    if (!c.o.preserve.mode && mode != (mode & 0700 & ~c.umask)) out.final_mode = mode;
    return std::nullopt;
}

void abandon_destination(Ctx& c, Destination& d) {
    d.fd.reset();
    const std::string& name = !d.temp.empty() ? d.temp : d.name;
    if (d.created) {
        ++c.syscalls();
        ::unlinkat(d.dir, name.c_str(), 0);
    }
    d.created = false;
    d.temp.clear();
}

std::optional<Failure> finish_destination(Ctx& c, Destination& d) {
    std::optional<Failure> failure;
    const std::string& written = d.temp.empty() ? d.name : d.temp;
    if (d.final_mode != 0) {  // the owner's bits only until now: the file is whole
        ++c.syscalls();
        if (::fchmod(d.fd.get(), d.final_mode) != 0)
            failure = Failure{CopyStatus::failure,
                              quoted_message("setting permissions for", d.path, errno)};
    }
    if (c.o.fsync && d.regular && !failure) {
        ++c.syscalls();
        if (::fsync(d.fd.get()) != 0)
            failure = Failure{status_of_write(errno), errno_message(d.path, "fsync", errno)};
    }
    // close(2) is where NFS, CIFS and FUSE report a failed write-back (->flush).
    ++c.syscalls();
    if (::close(d.fd.release()) != 0 && !failure)
        failure = Failure{status_of_write(errno), errno_message(d.path, "close", errno)};
    if (!failure && !d.temp.empty()) {
        ++c.syscalls();
        if (::renameat(d.dir, written.c_str(), d.dir, d.replaced.c_str()) != 0)
            failure = create_failure(d.path, errno);
        else {
            d.temp.clear();
            d.created = false;
            if (c.o.fsync) failure = sync_directory_of(c, d.dir, d.replaced, d.path);
        }
    }
    if (failure) abandon_destination(c, d);
    d.created = false;
    return failure;
}

std::optional<Failure> copy_file(Ctx& c, const char* src, const Where& dst, bool in_new_dir,
                                 std::optional<std::uint64_t> expected_size) {
    ++c.syscalls();
    util::UniqueFd sfd(::open(src, O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!sfd) return Failure{CopyStatus::bad_input, quoted_message("cannot open", src, errno)};
    struct stat st {};
    ++c.syscalls();
    if (::fstat(sfd.get(), &st) != 0)
        return Failure{CopyStatus::bad_input, quoted_message("cannot stat", src, errno)};
    const bool regular_source = S_ISREG(st.st_mode);
    // procfs and sysfs say a size their files do not have (0, or a page)
    // and answer in pieces: such a file is read to its end, in order, like a
    // pipe (and not read a second time by --verify: it says something new
    // each time).  So is any empty regular file: one read that says end of
    // file, in case it is not.
    const bool pseudo = regular_source && size_is_unreliable(c, sfd.get());
    const bool size_lies = regular_source && (pseudo || st.st_size == 0);
    if (expected_size && *expected_size != static_cast<std::uint64_t>(st.st_size))
        return Failure{CopyStatus::failure, std::string(src) + ": changed size while being copied"};
    Destination d;
    bool skipped = false;
    if (auto f = open_destination(c, dst, src, st, in_new_dir, d, skipped)) return f;
    if (skipped) {
        ++c.result.skipped;
        file_done(c, regular_source ? static_cast<std::uint64_t>(st.st_size) : 0);
        return std::nullopt;
    }
    std::optional<Failure> failure;
    auto fail = [&](CopyStatus s, std::string m) {
        if (!failure) failure = Failure{s, std::move(m)};
    };

    std::uint64_t bytes = 0;
    const bool stream = !regular_source || !d.regular || size_lies;
    if (c.o.attributes_only) {
        // No data: the attributes below only.
    } else if (c.o.sparse != Sparse::automatic && !stream) {
        if (auto f = copy_sparse_mode(c, sfd.get(), st, d.fd.get(), dst.path, bytes))
            fail(f->status, f->message);
    } else if (stream) {
        // A pipe, a FIFO, a device on either side: its contents in order.
        if (auto f = copy_stream(c, sfd.get(), d.fd.get(), src, dst.path, bytes))
            fail(f->status, f->message);
    } else {
        if (auto f = copy_regular(c, sfd, st, d, src, bytes)) fail(f->status, f->message);
        if (c.kernel_holds_buffers) {   // the ring failed with this file's requests in flight
            abandon_destination(c, d);  // the name goes; the descriptors stay open for the kernel
            return failure;
        }
    }
    if (!failure) keep_attributes(c, {sfd.get(), src}, {d.fd.get(), dst.path.c_str()}, st, false);
    if (failure) {
        if (failure->status == CopyStatus::interrupted && !d.created && d.regular)
            c.result.incomplete.push_back(d.path);  // written in place: its old content is gone
        if (failure->status == CopyStatus::no_space && c.o.atomic && !d.temp.empty() &&
            d.temp != d.path)
            failure->message +=
                " (--atomic writes a complete second copy before it replaces the file; "
                "without it the file is written in place)";
        abandon_destination(c, d);
        return failure;
    }
    // --verify reads the copy back by its name: fstat now to know it is
    // still the file written (a rename over it since would be compared instead).
    struct stat written {};
    const bool verify = c.o.verify && d.regular && regular_source && !pseudo;
    if (verify) {
        ++c.syscalls();
        if (::fstat(d.fd.get(), &written) != 0)
            return Failure{CopyStatus::failure, errno_message(dst.path, "fstat", errno)};
    }
    if (auto f = finish_destination(c, d)) return f;
    ++c.result.files;
    if (stream && !size_lies) ++c.result.read_write_files;
    c.result.bytes += bytes;
    if (verify) {
        if (auto f = verify_copy(c, src, dst, &written)) return f;
    } else if (c.o.verify && !pseudo && !c.said_verify_stream) {
        c.said_verify_stream = true;
        c.note("--verify: " + std::string(src) + " -> " + dst.path +
               ": a FIFO or device cannot be read a second time; not verified (nor any like it)");
    }
    file_done(c, bytes);
    return std::nullopt;
}

std::optional<Failure> copy_symlink(Ctx& c, const char* src, const Where& dst, bool in_new_dir) {
    // Stat'ed before readlink, which moves the link's access time (relatime).
    struct stat st {};
    ++c.syscalls();
    if (::lstat(src, &st) != 0)
        return Failure{CopyStatus::bad_input, quoted_message("cannot stat", src, errno)};
    char target[PATH_MAX + 1];
    ++c.syscalls();
    const ssize_t n = ::readlink(src, target, PATH_MAX);
    if (n < 0)
        return Failure{CopyStatus::bad_input,
                       quoted_message("cannot read symbolic link", src, errno)};
    target[n] = '\0';
    struct stat existing {};
    const bool may_keep = c.o.no_clobber || c.o.update != Update::all || c.o.ask_overwrite;
    if (!in_new_dir && may_keep &&
        ::fstatat(dst.dir, dst.name.c_str(), &existing, AT_SYMLINK_NOFOLLOW) == 0 &&
        keep_existing(c, st, existing, dst)) {
        ++c.result.skipped;
        return std::nullopt;
    }
    if (!in_new_dir && (c.o.backup != Backup::none || c.o.attributes_only) &&
        ::fstatat(dst.dir, dst.name.c_str(), &existing, AT_SYMLINK_NOFOLLOW) == 0) {
        if (c.o.backup != Backup::none) {
            if (auto f = back_up(c, dst, st, src)) return f;
        } else if (!c.o.remove_destination) {
            // --attributes-only keeps an existing file's bytes: a link is not put in its place.
            return Failure{CopyStatus::failure,
                           quoted_message("cannot create symbolic link", dst.path, EEXIST)};
        }
    }
    c.event(CopyEvent::copied, src, dst.path);
    // symlink(2) never follows or replaces what is at the name: a temporary
    // name is as safe as O_EXCL; it then replaces an existing entry by rename,
    // as cp -P replaces a destination it cannot write through.
    std::string where = dst.name;
    ++c.syscalls();
    int r = in_new_dir ? ::symlinkat(target, dst.dir, dst.name.c_str()) : -1;
    for (int attempt = 0; !in_new_dir && attempt < 16; ++attempt) {
        where = temp_name_for(dst.name);
        ++c.syscalls();
        r = ::symlinkat(target, dst.dir, where.c_str());
        if (r == 0 || errno != EEXIST) break;
    }
    if (r != 0) return create_failure(dst.path, errno, "symbolic link");
    // The link's own attributes, set at the name it was made at (renaming
    // keeps them), never through it.
    keep_attributes(c, {-1, src}, {-1, dst.path.c_str(), dst.dir, where.c_str()}, st, true);
    if (where != dst.name) {
        ++c.syscalls();
        if (::renameat(dst.dir, where.c_str(), dst.dir, dst.name.c_str()) != 0) {
            const int e = errno;
            ::unlinkat(dst.dir, where.c_str(), 0);
            return create_failure(dst.path, e, "symbolic link");
        }
    }
    if (!dst.in_tree) {
        struct stat made {};
        ++c.syscalls();
        if (::fstatat(dst.dir, dst.name.c_str(), &made, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISLNK(made.st_mode))
            c.made_symlinks.insert(
                {static_cast<std::uint64_t>(made.st_dev), static_cast<std::uint64_t>(made.st_ino)});
    }
    ++c.result.symlinks;
    return std::nullopt;
}

std::optional<Failure> copy_special(Ctx& c, const char* src, const Where& dst,
                                    const struct stat& st) {
    const char* name = dst.name.c_str();
    struct stat existing {};
    ++c.syscalls();
    if (::fstatat(dst.dir, name, &existing, AT_SYMLINK_NOFOLLOW) == 0) {
        if (keep_existing(c, st, existing, dst)) {
            ++c.result.skipped;
            return std::nullopt;
        }
        // As cp -R: what is there is removed first (mknod cannot replace it).
        if (S_ISDIR(existing.st_mode))
            return Failure{CopyStatus::failure,
                           "cannot overwrite directory '" + dst.path + "' with non-directory"};
        ++c.syscalls();
        if (::unlinkat(dst.dir, name, 0) != 0 && errno != ENOENT)
            return Failure{CopyStatus::failure, quoted_message("cannot remove", dst.path, errno)};
    }
    c.event(CopyEvent::copied, src, dst.path);
    ++c.syscalls();
    const mode_t perm = st.st_mode & 0777;  // the umask applies, as to a new file
    const bool fifo = S_ISFIFO(st.st_mode);
    const int r = fifo ? ::mkfifoat(dst.dir, name, perm)
                       : ::mknodat(dst.dir, name, (st.st_mode & S_IFMT) | perm, st.st_rdev);
    if (r != 0) return create_failure(dst.path, errno, fifo ? "fifo" : "special file");
    if (c.o.preserve.any()) {
        // Its attributes are set by name (a FIFO or a device is never opened
        // for that), so the name must still be what mknod made: that type,
        // the copier's, one link.  Anything else is someone else's entry.
        struct stat made {};
        ++c.syscalls();
        if (::fstatat(dst.dir, name, &made, AT_SYMLINK_NOFOLLOW) != 0 ||
            (made.st_mode & S_IFMT) != (st.st_mode & S_IFMT) || made.st_uid != ::geteuid() ||
            made.st_nlink != 1)
            return Failure{
                CopyStatus::failure,
                "'" + dst.path + "' was replaced while being copied: attributes not set"};
    }
    keep_attributes(c, {}, {-1, dst.path.c_str(), dst.dir, name}, st,
                    false);  // a device's attributes are not read
    ++c.result.specials;
    return std::nullopt;
}

// rm -r of a tree this copy created, through descriptors: each directory
// is entered O_NOFOLLOW, so a symbolic link put in place of one is removed,
// not followed.
void remove_tree(int dir, const std::string& name, std::uint64_t& syscalls) {
    ++syscalls;
    const int fd = ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        ++syscalls;
        if (errno == ENOTDIR || errno == ELOOP) ::unlinkat(dir, name.c_str(), 0);
        return;
    }
    std::vector<DirEntry> list;
    if (read_directory_at(fd, list, syscalls) == 0)
        for (const DirEntry& e : list) {
            ++syscalls;
            if (e.type == EntryType::directory ||
                (::unlinkat(fd, e.name.c_str(), 0) != 0 && errno == EISDIR))
                remove_tree(fd, e.name, syscalls);
        }
    syscalls += 2;
    ::close(fd);
    ::unlinkat(dir, name.c_str(), AT_REMOVEDIR);
}

}  // namespace uringkit::fs::detail
