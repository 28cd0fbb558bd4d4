// Where the bytes go, with coreutils' rules: an existing destination is
// opened (through a symlink) and written in place, O_TRUNC, so its inode,
// other links, mode, owner, ACLs, xattrs and label stay, and the kernel's
// permission check is the one cp gets (a write-protected file refuses an
// ordinary user, root may write it).  A new file is written under an
// unpredictable temporary name beside it, created O_EXCL | O_NOFOLLOW, and
// renamed into place when complete, so its final name never shows a
// half-written file.  --atomic replaces an existing file the same way.
#include "copy_internal.hpp"

#include "uringkit/fs/walk.hpp"

#include <fcntl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <climits>
#include <cstring>

namespace uringkit::fs::detail {
namespace {

Failure create_failure(const std::string& dst, int err, const char* kind = "regular file") {
    return Failure{status_of_create(err), quoted_message((std::string("cannot create ") + kind).c_str(), dst, err)};
}

// Creates a new temporary beside `dst`: a fresh random name each try, so a
// name another user planted only costs a retry.
int create_temporary(Ctx& c, const std::string& dst, mode_t mode, std::string& temp) {
    for (int attempt = 0; attempt < 16; ++attempt) {
        temp = temp_name_for(dst);
        ++c.syscalls();
        const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1;
}

// With --sync: after a rename the new name lives in the directory, which
// is made durable too (fsync of the file alone does not cover it).
std::optional<Failure> sync_directory_of(Ctx& c, const std::string& path) {
    c.syscalls() += 3;
    util::UniqueFd dir(::open(dirname_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir || ::fsync(dir.get()) != 0)
        return Failure{status_of_write(errno), errno_message(dirname_of(path), "fsync of the directory", errno)};
    return std::nullopt;
}

}  // namespace

std::optional<Failure> open_destination(Ctx& c, const std::string& dst, mode_t src_mode, bool in_new_dir,
                                        Destination& out, bool& skipped) {
    out.path = dst;
    out.replaced = dst;
    struct stat st {};
    bool exists = false, via_symlink = false;
    if (!in_new_dir) {
        ++c.syscalls();
        if (::lstat(dst.c_str(), &st) == 0) {
            if (c.o.no_clobber) {
                skipped = true;
                return std::nullopt;
            }
            if (S_ISLNK(st.st_mode)) {  // written through, as cp does
                via_symlink = true;
                ++c.syscalls();
                if (::stat(dst.c_str(), &st) != 0) {
                    if (errno == ENOENT)
                        return Failure{CopyStatus::failure, "not writing through dangling symlink '" + dst + "'"};
                    return Failure{CopyStatus::failure, quoted_message("cannot stat", dst, errno)};
                }
            }
            if (S_ISDIR(st.st_mode))
                return Failure{CopyStatus::bad_input, "cannot overwrite directory '" + dst + "' with non-directory"};
            exists = true;
        } else if (errno != ENOENT) {
            return create_failure(dst, errno);
        }
    }
    out.regular = !exists || S_ISREG(st.st_mode);
    if (exists && (!c.o.atomic || !out.regular)) {
        // In place.  A FIFO or a device is opened and written, never renamed over.
        ++c.syscalls();
        out.fd.reset(::open(dst.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY));
        if (!out.fd) return create_failure(dst, errno);
        return std::nullopt;
    }
    out.created = true;
    if (in_new_dir) {  // a directory this copy made: nothing else can be at this name but what we put there
        ++c.syscalls();
        out.fd.reset(::open(dst.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, src_mode & 0777));
        if (!out.fd) {
            out.created = false;
            return create_failure(dst, errno);
        }
        return std::nullopt;
    }
    if (exists) {
        // --atomic: the rename would get past the file's own permissions
        // (it needs only the directory's), so ask them first as an in-place
        // open would: a write-protected file refuses an ordinary user.
        ++c.syscalls();
        if (::faccessat(AT_FDCWD, dst.c_str(), W_OK, AT_EACCESS) != 0) return create_failure(dst, errno);
        if (via_symlink) {  // the file the link names is replaced, the link stays
            char resolved[PATH_MAX];
            ++c.syscalls();
            if (!::realpath(dst.c_str(), resolved)) return create_failure(dst, errno);
            out.replaced = resolved;
        }
    }
    // A new file takes the source's permission bits less the umask (the
    // kernel applies it), never its set-ID bits, as cp does.  --atomic
    // keeps the replaced file's permission bits.
    const mode_t mode = exists ? st.st_mode & 0777 : src_mode & 0777;
    out.fd.reset(create_temporary(c, out.replaced, mode, out.temp));
    if (!out.fd) {
        out.created = false;
        out.temp.clear();
        return create_failure(dst, errno);
    }
    if (exists && (mode & c.umask)) {
        ++c.syscalls();
        (void)::fchmod(out.fd.get(), mode);
    }
    return std::nullopt;
}

void abandon_destination(Ctx& c, Destination& d) {
    d.fd.reset();
    const std::string& name = !d.temp.empty() ? d.temp : d.path;
    if (d.created) {
        ++c.syscalls();
        ::unlink(name.c_str());
    }
    d.created = false;
    d.temp.clear();
}

std::optional<Failure> finish_destination(Ctx& c, Destination& d) {
    std::optional<Failure> failure;
    const std::string& written = d.temp.empty() ? d.path : d.temp;
    if (c.o.fsync && d.regular) {
        ++c.syscalls();
        if (::fsync(d.fd.get()) != 0) failure = Failure{status_of_write(errno), errno_message(d.path, "fsync", errno)};
    }
    // close(2) is where NFS, CIFS and FUSE report a failed write-back (->flush).
    ++c.syscalls();
    if (::close(d.fd.release()) != 0 && !failure) failure = Failure{status_of_write(errno), errno_message(d.path, "close", errno)};
    if (!failure && !d.temp.empty()) {
        ++c.syscalls();
        if (::rename(written.c_str(), d.replaced.c_str()) != 0) failure = create_failure(d.path, errno);
        else {
            d.temp.clear();
            d.created = false;
            if (c.o.fsync) failure = sync_directory_of(c, d.replaced);
        }
    }
    if (failure) abandon_destination(c, d);
    d.created = false;
    return failure;
}

std::optional<Failure> copy_file(Ctx& c, const char* src, const std::string& dst, bool in_new_dir,
                                 std::optional<std::uint64_t> expected_size) {
    ++c.syscalls();
    util::UniqueFd sfd(::open(src, O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!sfd) return Failure{CopyStatus::bad_input, quoted_message("cannot open", src, errno) };
    struct stat st {};
    ++c.syscalls();
    if (::fstat(sfd.get(), &st) != 0) return Failure{CopyStatus::bad_input, quoted_message("cannot stat", src, errno)};
    const bool regular_source = S_ISREG(st.st_mode);
    if (expected_size && *expected_size != static_cast<std::uint64_t>(st.st_size))
        return Failure{CopyStatus::failure, std::string(src) + ": changed size while being copied"};
    Destination d;
    bool skipped = false;
    if (auto f = open_destination(c, dst, st.st_mode, in_new_dir, d, skipped)) return f;
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
    const bool stream = !regular_source || !d.regular;
    if (stream) {
        // A pipe, a FIFO, a device on either side: its contents in order.
        if (auto f = copy_stream(c, sfd.get(), d.fd.get(), src, dst, bytes)) fail(f->status, f->message);
    } else {
        if (auto f = copy_regular(c, sfd, st, d, src, bytes)) fail(f->status, f->message);
        if (c.kernel_holds_buffers) {  // the ring failed with this file's requests in flight
            abandon_destination(c, d);  // the name goes; the descriptors stay open for the kernel
            return failure;
        }
    }
    if (!failure) keep_attributes(c, {sfd.get(), src}, {d.fd.get(), dst.c_str()}, st, false);
    if (failure) {
        if (failure->status == CopyStatus::no_space && c.o.atomic && !d.temp.empty() && d.temp != d.path)
            failure->message += " (--atomic writes a complete second copy before it replaces the file; "
                                "without it the file is written in place)";
        abandon_destination(c, d);
        return failure;
    }
    // --verify reads the copy back by its name: fstat now to know it is
    // still the file written (a rename over it since would be compared instead).
    struct stat written {};
    const bool verify = c.o.verify && !stream;
    if (verify) {
        ++c.syscalls();
        if (::fstat(d.fd.get(), &written) != 0) return Failure{CopyStatus::failure, errno_message(dst, "fstat", errno)};
    }
    if (auto f = finish_destination(c, d)) return f;
    ++c.result.files;
    if (stream) ++c.result.read_write_files;
    c.result.bytes += bytes;
    if (verify) {
        if (auto f = verify_copy(c, src, dst, &written)) return f;
    } else if (c.o.verify && !c.said_verify_stream) {
        c.said_verify_stream = true;
        c.note("--verify: " + std::string(src) + " -> " + dst +
               ": a FIFO or device cannot be read a second time; not verified (nor any like it)");
    }
    file_done(c, bytes);
    return std::nullopt;
}

std::optional<Failure> copy_symlink(Ctx& c, const char* src, const std::string& dst, bool in_new_dir) {
    // Stat'ed before readlink, which moves the link's access time (relatime).
    struct stat st {};
    ++c.syscalls();
    if (::lstat(src, &st) != 0) return Failure{CopyStatus::bad_input, quoted_message("cannot stat", src, errno)};
    char target[PATH_MAX + 1];
    ++c.syscalls();
    const ssize_t n = ::readlink(src, target, PATH_MAX);
    if (n < 0) return Failure{CopyStatus::bad_input, quoted_message("cannot read symbolic link", src, errno)};
    target[n] = '\0';
    struct stat existing {};
    if (!in_new_dir && c.o.no_clobber && ::lstat(dst.c_str(), &existing) == 0) {
        ++c.result.skipped;
        return std::nullopt;
    }
    // symlink(2) never follows or replaces what is at the name: a temporary
    // name is as safe as O_EXCL; it then replaces an existing entry by rename,
    // as cp -P replaces a destination it cannot write through.
    std::string where = dst;
    ++c.syscalls();
    int r = in_new_dir ? ::symlink(target, dst.c_str()) : -1;
    for (int attempt = 0; !in_new_dir && attempt < 16; ++attempt) {
        where = temp_name_for(dst);
        ++c.syscalls();
        r = ::symlink(target, where.c_str());
        if (r == 0 || errno != EEXIST) break;
    }
    if (r != 0) return create_failure(dst, errno, "symbolic link");
    if (where != dst) {
        ++c.syscalls();
        if (::rename(where.c_str(), dst.c_str()) != 0) {
            const int e = errno;
            ::unlink(where.c_str());
            return create_failure(dst, e, "symbolic link");
        }
    }
    keep_attributes(c, {-1, src}, {-1, dst.c_str()}, st, true);
    ++c.result.symlinks;
    return std::nullopt;
}

std::optional<Failure> copy_special(Ctx& c, const std::string& dst, const struct stat& st) {
    struct stat existing {};
    ++c.syscalls();
    if (::lstat(dst.c_str(), &existing) == 0) {
        if (c.o.no_clobber) {
            ++c.result.skipped;
            return std::nullopt;
        }
        // As cp -R: what is there is removed first (mknod cannot replace it).
        if (S_ISDIR(existing.st_mode))
            return Failure{CopyStatus::failure, "cannot overwrite directory '" + dst + "' with non-directory"};
        ++c.syscalls();
        if (::unlink(dst.c_str()) != 0 && errno != ENOENT)
            return Failure{CopyStatus::failure, quoted_message("cannot remove", dst, errno)};
    }
    ++c.syscalls();
    const mode_t perm = st.st_mode & 0777;  // the umask applies, as to a new file
    const bool fifo = S_ISFIFO(st.st_mode);
    const int r = fifo ? ::mkfifo(dst.c_str(), perm) : ::mknod(dst.c_str(), (st.st_mode & S_IFMT) | perm, st.st_rdev);
    if (r != 0) return create_failure(dst, errno, fifo ? "fifo" : "special file");
    keep_attributes(c, {}, {-1, dst.c_str()}, st, false);  // a device's attributes are not read
    ++c.result.specials;
    return std::nullopt;
}

// rm -r of a tree this copy created.
void remove_tree(const std::string& path, std::uint64_t& syscalls) {
    std::vector<DirEntry> list;
    if (read_directory(path.c_str(), list, syscalls) == 0)
        for (const DirEntry& e : list) {
            const std::string p = join(path, e.name);
            if (e.type == EntryType::directory) remove_tree(p, syscalls);
            else {
                ++syscalls;
                if (::unlink(p.c_str()) != 0 && errno == EISDIR) remove_tree(p, syscalls);
            }
        }
    ++syscalls;
    ::rmdir(path.c_str());
}

}  // namespace uringkit::fs::detail
