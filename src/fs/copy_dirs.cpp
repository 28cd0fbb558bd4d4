// HeldDirs: a tree's destination directories by descriptor (copy_tree.hpp).
#include "copy_tree.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace uringkit::fs::detail {

HeldDirs::HeldDirs(const Tree& t, std::uint64_t& syscalls)
    : t_(t),
      syscalls_(syscalls),
      fd_(t.dst.size(), -1),
      pins_(t.dst.size(), 0),
      id_(t.dst.size()),
      at_(t.dst.size()) {
    // A quarter of the descriptors the process may open: the rest are for
    // the files being copied (two per chain or pool thread) and the caller.
    struct rlimit rl {};
    ++syscalls_;
    const rlim_t soft =
        ::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? rl.rlim_cur : 1024;
    budget_ = std::clamp<std::size_t>(static_cast<std::size_t>(soft / 4), 8, 4096);
}

HeldDirs::~HeldDirs() {
    for (int fd : fd_)
        if (fd >= 0) {
            ++syscalls_;
            ::close(fd);
        }
}

void HeldDirs::touch(std::size_t i) {
    if (i == 0) return;  // the root is never closed
    lru_.splice(lru_.end(), lru_, at_[i]);
}

void HeldDirs::make_room() {
    for (auto it = lru_.begin(); open_ >= budget_ && it != lru_.end();) {
        const std::size_t i = *it;
        if (pins_[i] > 0) {
            ++it;
            continue;
        }
        ++syscalls_;
        ::close(fd_[i]);
        fd_[i] = -1;
        --open_;
        it = lru_.erase(it);
    }
}

void HeldDirs::hold(std::size_t i, int fd, const struct stat& st) {
    make_room();
    fd_[i] = fd;
    id_[i] = {st.st_dev, st.st_ino};
    ++open_;
    if (i != 0) at_[i] = lru_.insert(lru_.end(), i);
}

int HeldDirs::get(std::size_t i) {
    if (fd_[i] >= 0) {
        touch(i);
        return fd_[i];
    }
    if (i == 0) return -EBADF;  // the root was never entered
    const std::size_t p = t_.parent[i];
    const int pfd = get(p);
    if (pfd < 0) return pfd;
    pin(p);  // while its child is opened
    make_room();
    ++syscalls_;
    const int fd = ::openat(pfd, t_.name(i), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int err = fd < 0 ? -errno : 0;
    struct stat st {};
    if (fd >= 0) {
        ++syscalls_;
        if (::fstat(fd, &st) != 0)
            err = -errno;
        else if (std::pair<dev_t, ino_t>{st.st_dev, st.st_ino} != id_[i])
            err = -ESTALE;
        if (err != 0) {
            ++syscalls_;
            ::close(fd);
        }
    } else if (err == -ELOOP || err == -ENOTDIR || err == -ENOENT) {
        err = -ESTALE;  // renamed away or replaced since the copy entered it
    }
    unpin(p);
    if (err != 0) return err;
    fd_[i] = fd;
    ++open_;
    at_[i] = lru_.insert(lru_.end(), i);
    return fd;
}

void HeldDirs::pin(std::size_t i) {
    if (pins_[i]++ == 0) ++pinned_;
}

void HeldDirs::unpin(std::size_t i) {
    if (--pins_[i] == 0) --pinned_;
}

std::string dir_failure_message(const std::string& path, int err) {
    if (err == -ESTALE)
        return "'" + path +
               "' was moved or replaced while being copied: nothing more is written there";
    return quoted_message("cannot open directory", path, err);
}

// enter_directory (copy_tree.hpp): directory `i` of the tree, `name` in the directory `pfd`: made
// (0700, the copier's own until its mode is set at the end) unless `made` says it already was, or
// entered when it is already there and `may_exist`; its descriptor is then held in `dirs`.  False
// (reported) when it is neither.
bool enter_directory(Ctx& c, const Tree& t, HeldDirs& dirs, std::size_t i, int pfd,
                     const char* name, bool made, bool may_exist, bool& created) {
    const std::string path(t.dst[i]);
    if (!made) {
        ++c.syscalls();
        if (::mkdirat(pfd, name, S_IRWXU) == 0) {
            made = true;
        } else if (errno != EEXIST || !may_exist) {
            c.report({i == 0 ? status_of_create(errno) : status_of_write(errno),
                      quoted_message("cannot create directory", path, errno)});
            return false;
        }
    }
    ++c.syscalls();
    const int fd = ::openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        if (made)  // what mkdirat made was renamed away or replaced at once
            c.report({CopyStatus::failure,
                      "'" + path + "' was replaced while being created: nothing copied into it"});
        else if (err == ELOOP ||
                 err == ENOTDIR)  // a symbolic link or a file is there: never followed
            c.report({CopyStatus::failure, "cannot overwrite non-directory '" + path +
                                               "' with directory '" + std::string(t.src[i]) + "'"});
        else
            c.report({CopyStatus::failure, quoted_message("cannot open directory", path, err)});
        return false;
    }
    struct stat st {};
    ++c.syscalls();
    // mkdirat returns no inode: what is at the name now must be a directory
    // of ours with no access for anyone else, or it is not the one made.
    const bool ours =
        ::fstat(fd, &st) == 0 && (!made || (st.st_uid == ::geteuid() && (st.st_mode & 077) == 0));
    if (!ours) {
        ++c.syscalls();
        ::close(fd);
        c.report({CopyStatus::failure,
                  "'" + path + "' was replaced while being created: nothing copied into it"});
        return false;
    }
    created = made;
    dirs.hold(i, fd, st);
    return true;
}

}  // namespace uringkit::fs::detail
