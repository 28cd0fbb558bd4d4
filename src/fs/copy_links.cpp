// cp's -b (backups), -l and -s (links instead of copies) and --sparse=always|never.
#include "copy_internal.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

namespace uringkit::fs::detail {
namespace {

// `name` (relative to `dir`, or a path when `dir` is AT_FDCWD) split into
// the directory part, kept as given ("" for none), and the last name.
std::pair<std::string, std::string> split_name(const std::string& name) {
    const auto slash = name.find_last_of('/');
    if (slash == std::string::npos) return {"", name};
    return {name.substr(0, slash + 1), name.substr(slash + 1)};
}

// The highest N of the BASE.~N~ entries in the directory (0: none).
unsigned long highest_numbered(Ctx& c, int dir, const std::string& part, const std::string& base) {
    ++c.syscalls();
    const int fd =
        ::openat(dir, part.empty() ? "." : part.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return 0;
    DIR* d = ::fdopendir(fd);
    if (!d) {
        ::close(fd);
        return 0;
    }
    unsigned long highest = 0;
    const std::string prefix = base + ".~";
    while (const dirent* e = ::readdir(d)) {
        const std::string_view n = e->d_name;
        if (n.size() <= prefix.size() + 1 || n.substr(0, prefix.size()) != prefix ||
            n.back() != '~')
            continue;
        const std::string_view digits = n.substr(prefix.size(), n.size() - prefix.size() - 1);
        if (digits.empty() || digits[0] == '0' ||
            digits.find_first_not_of("0123456789") != std::string_view::npos)
            continue;
        highest = std::max(highest, std::strtoul(std::string(digits).c_str(), nullptr, 10));
    }
    c.syscalls() += 2;
    ::closedir(d);
    return highest;
}

bool same_inode(const struct stat& a, const struct stat& b) noexcept {
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

std::string backup_name(Ctx& c, int dir, const std::string& name) {
    const auto [part, base] = split_name(name);
    if (c.o.backup == Backup::simple) return name + c.o.backup_suffix;
    const unsigned long highest = highest_numbered(c, dir, part, base);
    if (c.o.backup == Backup::existing && highest == 0) return name + c.o.backup_suffix;
    return part + base + ".~" + std::to_string(highest + 1) + "~";
}

std::optional<Failure> back_up(Ctx& c, const Where& dst, const struct stat& src,
                               const char* src_name) {
    const std::string to = backup_name(c, dst.dir, dst.name);
    struct stat there {};
    ++c.syscalls();
    if (::fstatat(dst.dir, to.c_str(), &there, AT_SYMLINK_NOFOLLOW) == 0 && same_inode(there, src))
        return Failure{
            CopyStatus::failure,
            "backing up '" + dst.path + "' might destroy source;  '" + src_name + "' not copied"};
    ++c.syscalls();
    if (::renameat(dst.dir, dst.name.c_str(), dst.dir, to.c_str()) != 0)
        return Failure{CopyStatus::failure, quoted_message("cannot backup", dst.path, errno)};
    // The backup as the user names it: beside the destination's path.
    const std::string shown =
        dst.dir == AT_FDCWD ? to : join(dirname_of(dst.path), basename_of(to));
    c.event(CopyEvent::backed_up, dst.path, shown);
    return std::nullopt;
}

std::optional<Failure> make_link(Ctx& c, const char* src, const Where& dst, bool follow) {
    struct stat st {};
    ++c.syscalls();
    if ((follow ? ::stat(src, &st) : ::lstat(src, &st)) != 0)
        return Failure{CopyStatus::bad_input, quoted_message("cannot stat", src, errno)};
    const bool hard = c.o.link_instead == LinkInstead::hard;
    if (!hard && src[0] != '/' && dst.path.find('/') != std::string::npos) {
        // A relative link's target is read from the link's own directory:
        // made anywhere but here it would name something else (cp's rule).
        struct stat here {
        }, there{};
        c.syscalls() += 2;
        if (::stat(".", &here) != 0 || ::stat(dirname_of(dst.path).c_str(), &there) != 0 ||
            !same_inode(here, there))
            return Failure{
                CopyStatus::failure,
                "'" + dst.path + "': can make relative symbolic links only in current directory"};
    }
    std::string from = src;  // -bf of a file onto itself: linked from its backup
    for (int attempt = 0;; ++attempt) {
        ++c.syscalls();
        const int r = hard ? ::linkat(AT_FDCWD, from.c_str(), dst.dir, dst.name.c_str(),
                                      follow ? AT_SYMLINK_FOLLOW : 0)
                           : ::symlinkat(src, dst.dir, dst.name.c_str());
        if (r == 0) break;
        const int err = errno;
        const std::string what =
            std::string(hard ? "cannot create hard link '" : "cannot create symbolic link '") +
            dst.path + "' to '" + src + "'";
        struct stat existing {};
        if (err != EEXIST || attempt > 0 ||
            ::fstatat(dst.dir, dst.name.c_str(), &existing, AT_SYMLINK_NOFOLLOW) != 0)
            return Failure{status_of_create(err), what + ": " + std::strerror(err)};
        struct stat named {};
        if (hard && same_inode(existing, st) && c.o.backup != Backup::none && c.o.force &&
            dst.dir == AT_FDCWD && dst.name == src) {
            from = backup_name(c, dst.dir, dst.name);
            if (auto f = back_up(c, dst, st, src)) return f;
            continue;
        }
        if (hard &&
            (same_inode(existing, st) || (::stat(src, &named) == 0 && same_inode(existing, named))))
            return std::nullopt;  // already that file
        if (S_ISDIR(existing.st_mode))
            return Failure{CopyStatus::failure,
                           "cannot overwrite directory '" + dst.path + "' with non-directory"};
        if (keep_existing(c, st, existing, dst)) {
            ++c.result.skipped;
            return std::nullopt;
        }
        if (c.o.backup != Backup::none) {
            if (auto f = back_up(c, dst, st, src)) return f;
        } else if (c.o.force || c.o.remove_destination) {
            ++c.syscalls();
            if (::unlinkat(dst.dir, dst.name.c_str(), 0) != 0 && errno != ENOENT)
                return Failure{CopyStatus::failure,
                               quoted_message("cannot remove", dst.path, errno)};
            c.event(CopyEvent::removed, dst.path);
        } else {
            return Failure{CopyStatus::failure, what + ": " + std::strerror(err)};
        }
    }
    c.event(CopyEvent::copied, src, dst.path);
    if (hard || S_ISREG(st.st_mode))
        ++c.result.files;
    else
        ++c.result.symlinks;
    return std::nullopt;
}

std::optional<Failure> copy_sparse_mode(Ctx& c, int sfd, const struct stat& st, int dfd,
                                        const std::string& dst, std::uint64_t& bytes) {
    // Holes are found per block of the destination's preferred size (what
    // its file system allocates at a time).
    struct stat dst_st {};
    ++c.syscalls();
    std::size_t block = ::fstat(dfd, &dst_st) == 0 && dst_st.st_blksize > 0
                            ? static_cast<std::size_t>(dst_st.st_blksize)
                            : 4096;
    block = std::min<std::size_t>(block, 1 << 20);
    const std::size_t chunk = std::max<std::size_t>(block, (256 * 1024) / block * block);
    const std::unique_ptr<char[]> buf(new char[chunk]);
    const bool holes = c.o.sparse == Sparse::always;
    std::uint64_t off = 0;
    for (;;) {
        if (c.stop_requested()) return Failure{CopyStatus::interrupted, dst};
        ++c.syscalls();
        const ssize_t n = ::pread(sfd, buf.get(), chunk, static_cast<off_t>(off));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Failure{CopyStatus::failure, io_message(dst, "read", off, errno)};
        if (n == 0) break;
        for (std::size_t at = 0; at < static_cast<std::size_t>(n); at += block) {
            const std::size_t len = std::min(block, static_cast<std::size_t>(n) - at);
            const char* p = buf.get() + at;
            if (holes && p[0] == 0 && std::memcmp(p, p + 1, len - 1) == 0) continue;
            for (std::size_t done = 0; done < len;) {
                ++c.syscalls();
                const ssize_t w =
                    ::pwrite(dfd, p + done, len - done, static_cast<off_t>(off + at + done));
                if (w < 0 && errno == EINTR) continue;
                if (w <= 0)
                    return Failure{status_of_write(w < 0 ? errno : EIO),
                                   io_message(dst, "write", off + at + done, w < 0 ? errno : EIO)};
                done += static_cast<std::size_t>(w);
            }
        }
        off += static_cast<std::uint64_t>(n);
        if (c.o.on_progress) c.o.on_progress(off);
    }
    ++c.syscalls();
    if (::ftruncate(dfd, static_cast<off_t>(off)) != 0)  // a hole at the end
        return Failure{status_of_write(errno), io_message(dst, "truncate", off, errno)};
    if (off != static_cast<std::uint64_t>(st.st_size))
        return Failure{CopyStatus::failure, dst + ": the source changed size while being copied"};
    bytes = off;
    ++c.result.read_write_files;
    return std::nullopt;
}

}  // namespace uringkit::fs::detail
