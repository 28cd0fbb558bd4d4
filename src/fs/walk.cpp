#include "fs/walk.hpp"

#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/kernel_owned.hpp"
#include "uringkit/ring/ring.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace uringkit::fs {
namespace {

EntryType type_of_dtype(unsigned char t) noexcept {
    switch (t) {
        case DT_REG:
            return EntryType::regular;
        case DT_DIR:
            return EntryType::directory;
        case DT_LNK:
            return EntryType::symlink;
        case DT_UNKNOWN:
            return EntryType::unknown;
        default:
            return EntryType::other;
    }
}

// File systems whose regular files hold what st_size says: a read comes back
// short only at end of file.  (io_uring's own read path also continues short
// non-blocking reads of regular files until the end or an error.)
bool disk_like(long magic) noexcept {
    switch (static_cast<unsigned long>(magic)) {
        case 0xEF53:      // ext2/3/4
        case 0x58465342:  // xfs
        case 0x9123683E:  // btrfs
        case 0x01021994:  // tmpfs
        case 0xF2F52010:  // f2fs
        case 0x794C7630:  // overlayfs (the layers below are disk file systems)
        case 0x2FC12FC1:  // zfs
            return true;
        default:
            return false;
    }
}

}  // namespace

EntryType type_of(mode_t mode) noexcept {
    if (S_ISREG(mode)) return EntryType::regular;
    if (S_ISDIR(mode)) return EntryType::directory;
    if (S_ISLNK(mode)) return EntryType::symlink;
    return EntryType::other;
}

const char* type_name(EntryType t) noexcept {
    switch (t) {
        case EntryType::regular:
            return "regular file";
        case EntryType::directory:
            return "directory";
        case EntryType::symlink:
            return "symbolic link";
        case EntryType::other:
            return "special file";
        case EntryType::unknown:
            break;
    }
    return "unknown";
}

const char* kind_name(mode_t mode) noexcept {
    if (S_ISFIFO(mode)) return "fifo";
    if (S_ISSOCK(mode)) return "socket";
    if (S_ISCHR(mode)) return "character device";
    if (S_ISBLK(mode)) return "block device";
    if (S_ISDIR(mode)) return "directory";
    if (S_ISLNK(mode)) return "symbolic link";
    return "regular file";
}

namespace {
int list_open_directory(int fd, std::vector<DirEntry>& out, std::uint64_t& syscalls);
}

ListedStat::~ListedStat() {
    if (dirfd_ >= 0) ::close(dirfd_);
}

void ListedStat::enter(std::string_view prefix, std::uint64_t& syscalls) {
    if (dirfd_ >= 0) {
        ++syscalls;
        ::close(dirfd_);
    }
    prefix_.assign(prefix);
    have_prefix_ = true;
    hits_ = 0;
    listed_ = false;
    const char* dir = prefix_.empty() ? "." : prefix_.c_str();
    // Readable, to be listed; else (search permission only) O_PATH, which
    // still looks names up.
    ++syscalls;
    dirfd_ = ::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    readable_ = dirfd_ >= 0;
    if (dirfd_ < 0) {
        ++syscalls;
        dirfd_ = ::open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    struct stat st {};
    struct statfs sf {};
    syscalls += 2;
    if (dirfd_ >= 0 && ::fstat(dirfd_, &st) == 0 && ::fstatfs(dirfd_, &sf) == 0) {
        dev_ = st.st_dev;
        eof_ = disk_like(sf.f_type);
    } else {
        dev_ = 0;
        eof_ = false;
    }
}

int ListedStat::stat_at(const char* path, const char* name, Answer& out, std::uint64_t& syscalls) {
    struct stat st {};
    ++syscalls;
    const int r = dirfd_ >= 0 ? ::fstatat(dirfd_, name, &st, 0) : ::stat(path, &st);
    if (r != 0) return -errno;
    out.type = st.st_mode & S_IFMT;
    // A symbolic link or a mount may lead off the directory's file system.
    out.short_read_is_eof = dirfd_ >= 0 && eof_ && st.st_dev == dev_;
    return 0;
}

int ListedStat::lookup(const char* path, Answer& out, std::uint64_t& syscalls) {
    out = {};
    const std::string_view p(path);
    const std::size_t slash = p.rfind('/');
    const std::string_view prefix = slash == std::string_view::npos ? "" : p.substr(0, slash + 1);
    const char* name = path + prefix.size();
    // A path ending in '/' names a directory by its whole path: nothing to share.
    if (*name == '\0') {
        struct stat st {};
        ++syscalls;
        if (::stat(path, &st) != 0) return -errno;
        out.type = st.st_mode & S_IFMT;
        return 0;
    }
    if (!have_prefix_ || prefix != prefix_) enter(prefix, syscalls);
    if (++hits_ == 2 && readable_) {
        // A second path in this directory: list it once, as the walk does.
        listed_ = read_directory_at(dirfd_, entries_, syscalls) == 0;
    }
    if (listed_) {
        const auto it = std::lower_bound(
            entries_.begin(), entries_.end(), std::string_view(name),
            [](const DirEntry& e, std::string_view n) { return std::string_view(e.name) < n; });
        if (it != entries_.end() && it->name == name &&
            (it->type == EntryType::regular || it->type == EntryType::directory)) {
            out.type = it->type == EntryType::regular ? S_IFREG : S_IFDIR;
            out.short_read_is_eof = it->type == EntryType::regular && eof_;
            return 0;
        }
    }
    return stat_at(path, name, out, syscalls);
}

int read_directory(const char* path, std::vector<DirEntry>& out, std::uint64_t& syscalls,
                   bool* short_read_is_eof) {
    out.clear();
    ++syscalls;
    const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -errno;
    if (short_read_is_eof) {
        struct statfs sf {};
        ++syscalls;
        *short_read_is_eof = ::fstatfs(fd, &sf) == 0 && disk_like(sf.f_type);
    }
    const int err = list_open_directory(fd, out, syscalls);
    ++syscalls;
    ::close(fd);
    return err;
}

int read_directory_at(int fd, std::vector<DirEntry>& out, std::uint64_t& syscalls) {
    out.clear();
    // From the start, whatever an earlier listing of this descriptor read.
    ++syscalls;
    if (::lseek(fd, 0, SEEK_SET) < 0) return -errno;
    return list_open_directory(fd, out, syscalls);
}

namespace {
int list_open_directory(int fd, std::vector<DirEntry>& out, std::uint64_t& syscalls) {
    alignas(dirent64) static thread_local char buf[64 * 1024];
    int err = 0;
    for (;;) {
        ++syscalls;
        const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            err = -errno;
            break;
        }
        if (n == 0) break;
        for (long pos = 0; pos < n;) {
            // glibc's dirent64 has the kernel's linux_dirent64 layout.
            const auto* d = reinterpret_cast<const dirent64*>(buf + pos);
            pos += d->d_reclen;
            const char* name = d->d_name;
            if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
                continue;
            out.push_back({name, type_of_dtype(d->d_type)});
        }
    }
    std::sort(out.begin(), out.end(),
              [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    return err;
}
}  // namespace

int stat_batch(Ring* ring, std::span<const char* const> paths, int flags, unsigned mask,
               std::span<struct statx> out, std::span<int> results, std::uint64_t& syscalls) {
    const std::size_t n = paths.size();
    const auto blocking = [&](std::size_t i) {
        ++syscalls;
        results[i] = ::statx(AT_FDCWD, paths[i], flags, mask, &out[i]) == 0 ? 0 : -errno;
    };
    if (!ring) {
        for (std::size_t i = 0; i < n; ++i) blocking(i);
        return 0;
    }
    // The kernel writes each statx into memory of ours, copied out at its CQE:
    // if the ring fails with statx still in flight, that memory is kept (never
    // freed) instead of the caller's `out` being written after we return.
    auto landing = std::make_unique<struct statx[]>(n);
    std::size_t next = 0, done = 0;
    unsigned stalls = 0;
    int failure = 0;
    std::vector<bool> completed(n, false);
    const auto reap = [&](const Completion& c) {
        const auto i = static_cast<std::size_t>(c.user_data);
        completed[i] = true;
        if (c.res == -EAGAIN || c.res == -EINTR) {
            blocking(i);  // rare: resubmit synchronously rather than complicate the batch
        } else {
            results[i] = c.res;
            if (c.res == 0) out[i] = landing[i];
        }
        ++done;
    };
    while (done < next || next < n) {
        while (next < n) {
            Sqe s = ring->prepare(op::Statx(AT_FDCWD, paths[next], flags, mask, &landing[next]));
            if (!s) break;
            s.user_data(next);
            ++next;
        }
        const int r = ring->submit_and_wait(1);
        const unsigned reaped = ring->for_each_completion(reap);
        if (r >= 0 || reaped > 0) {
            stalls = 0;
            continue;
        }
        // -EBUSY/-EAGAIN: the kernel wants completions reaped first, and some
        // may come; anything else, or backpressure that never eases, ends the
        // batch: every path not done yet reports the ring's error.
        if ((r == -EBUSY || r == -EAGAIN) && ++stalls <= Ring::kReserveStalls) {
            (void)ring->wait_for_completion(Ring::kReserveStallWait);
            continue;
        }
        failure = r;
        break;
    }
    if (!failure) return 0;
    // Give what the kernel took a bounded time to complete; SQEs it never
    // took stay in the SQ (this ring cannot submit any more).  Whatever may
    // still complete keeps `landing` alive for the rest of the process.
    for (unsigned i = 0; done + ring->sq_pending() < next && i < Ring::kReserveStalls; ++i)
        if (ring->for_each_completion(reap) == 0 &&
            ring->wait_for_completion(Ring::kReserveStallWait) < 0)
            break;
    if (done < next) keep_for_kernel(landing.release());
    for (std::size_t i = 0; i < n; ++i)
        if (!completed[i]) results[i] = failure;
    return failure;
}

}  // namespace uringkit::fs
