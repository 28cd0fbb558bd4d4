// Which files a replay may touch, and how.  Read-only on the recorded paths
// by default; their own paths written only with --allow-write; with
// --scratch DIR, a copy of each file (its recorded extent) made with
// O_CREAT|O_EXCL|O_NOFOLLOW and removed at the end, so nothing the user did
// not name is ever written.
#include "files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace uringkit::replaybench::detail {
namespace {

std::string basename_of(const std::string& path) {
    const auto slash = path.find_last_of('/');
    std::string b = slash == std::string::npos ? path : path.substr(slash + 1);
    return b.empty() ? std::string("file") : b;
}

bool used(const FileInfo& f) {
    return f.reads + f.writes > 0;
}

const char* kind_of(mode_t mode) {
    switch (mode & S_IFMT) {
        case S_IFIFO:
            return "a FIFO";
        case S_IFCHR:
            return "a character device";
        case S_IFSOCK:
            return "a socket";
        case S_IFDIR:
            return "a directory";
        default:
            return "another kind of file";
    }
}

// Opens a file the trace names, as --filename is opened: a regular file or
// a block device, and nothing on the way may block or act.  A FIFO's open
// waits for a writer, a terminal's may become the controlling one, a tape's
// may rewind: none of them is what a program's I/O was recorded on.  So
// statx says what the path is before anything is opened, and the open takes
// O_NONBLOCK (a FIFO swapped in since does not block), O_NOFOLLOW (nor is
// one reached through a symlink planted since: the path is resolved first,
// so a trace may still name a file through a link) and O_NOCTTY; fstat then
// checks that what was opened is what statx saw.  O_NONBLOCK is cleared
// again before the descriptor is used: io_uring answers EAGAIN instead of
// waiting for a file opened with it.  Returns the descriptor, or -errno
// when the path cannot be resolved or opened; throws ReplayError
// (bad_input) when it names anything else.
int open_recorded(const std::string& path, int flags) {
    char* resolved = ::realpath(path.c_str(), nullptr);
    if (!resolved) return -errno;
    const std::string real(resolved);
    std::free(resolved);
    struct statx sx {};
    if (::statx(AT_FDCWD, real.c_str(), AT_STATX_SYNC_AS_STAT, STATX_TYPE | STATX_INO, &sx) != 0)
        return -errno;
    if (!S_ISREG(sx.stx_mode) && !S_ISBLK(sx.stx_mode))
        throw ReplayError(
            ReplayError::bad_input,
            fmt::format("{}: {}, not a regular file or block device; a trace's files are "
                        "read like --filename's",
                        path, kind_of(sx.stx_mode)));
    const int fd = ::open(real.c_str(), flags | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return -errno;
    struct stat st {};
    const bool same = ::fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == (sx.stx_mode & S_IFMT) &&
                      st.st_ino == sx.stx_ino && major(st.st_dev) == sx.stx_dev_major &&
                      minor(st.st_dev) == sx.stx_dev_minor;
    if (!same || ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
        ::close(fd);
        throw ReplayError(ReplayError::bad_input,
                          fmt::format("{}: changed while it was being opened; replay again", path));
    }
    return fd;
}

// Copies up to `bytes` of `src` into `dst` (both at 0); returns how many.
std::uint64_t copy_prefix(int src, int dst, std::uint64_t bytes) {
    std::uint64_t done = 0;
    while (done < bytes) {
        const ssize_t n = ::copy_file_range(src, nullptr, dst, nullptr, bytes - done, 0);
        if (n > 0) {
            done += static_cast<std::uint64_t>(n);
            continue;
        }
        if (n == 0) break;  // the source is shorter
        if (errno == EINTR) continue;
        if (errno != EXDEV && errno != EINVAL && errno != EOPNOTSUPP && errno != ENOSYS)
            throw ReplayError(ReplayError::failure,
                              fmt::format("copying into --scratch: {}", std::strerror(errno)));
        // No in-kernel copy between these: read and write.
        std::vector<char> buf(1 << 20);
        while (done < bytes) {
            const ssize_t r =
                ::pread(src, buf.data(), std::min<std::uint64_t>(buf.size(), bytes - done),
                        static_cast<off_t>(done));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) return done;
            for (ssize_t w = 0; w < r;) {
                const ssize_t k =
                    ::pwrite(dst, buf.data() + w, static_cast<std::size_t>(r - w),
                             static_cast<off_t>(done + static_cast<std::uint64_t>(w)));
                if (k < 0 && errno == EINTR) continue;
                if (k < 0)
                    throw ReplayError(
                        ReplayError::failure,
                        fmt::format("copying into --scratch: {}", std::strerror(errno)));
                w += k;
            }
            done += static_cast<std::uint64_t>(r);
        }
    }
    return done;
}

}  // namespace

ReplayFiles::ReplayFiles(const Program& program, const Config& config)
    : program_(program), fds_(program.files().size(), -1) {
    const auto& files = program.files();
    if (program.writes() && !config.allow_write && config.scratch.empty()) {
        const auto w = std::find_if(files.begin(), files.end(),
                                    [](const FileInfo& f) { return f.writes > 0; });
        const auto n = std::count_if(files.begin(), files.end(),
                                     [](const FileInfo& f) { return f.writes > 0; });
        throw ReplayError(
            ReplayError::usage,
            fmt::format("the trace writes to {}{} ({} write steps); give --allow-write to "
                        "replay the writes on those files, or --scratch DIR to replay "
                        "into copies made there",
                        w->path,
                        n > 1 ? fmt::format(" and {} other file{}", n - 1, n > 2 ? "s" : "") : "",
                        program.shape().writes));
    }
    if (!config.scratch.empty()) {
        struct stat st {};
        if (::stat(config.scratch.c_str(), &st) != 0)
            throw ReplayError(
                ReplayError::bad_input,
                fmt::format("--scratch {}: {}", config.scratch, std::strerror(errno)));
        if (!S_ISDIR(st.st_mode))
            throw ReplayError(ReplayError::bad_input,
                              fmt::format("--scratch {}: not a directory", config.scratch));
    }
    unsigned missing = 0, direct_refused = 0;
    try {
        for (std::size_t i = 0; i < files.size(); ++i) {
            const FileInfo& f = files[i];
            if (!used(f)) continue;
            const int sync_flags = static_cast<int>(f.open_flags & (O_SYNC | O_DSYNC));
            const bool direct = f.open_flags & O_DIRECT;
            int fd = -1;
            if (!config.scratch.empty()) {
                const std::string path =
                    fmt::format("{}/uringkit-replay-{}-{}", config.scratch, i, basename_of(f.path));
                fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd < 0)
                    throw ReplayError(ReplayError::bad_input,
                                      fmt::format("--scratch: {}: {}", path, std::strerror(errno)));
                scratch_paths_.push_back(path);
                fds_[i] = fd;
                std::uint64_t copied = 0;
                const int src = open_recorded(f.path, O_RDONLY);
                if (src >= 0) {
                    copied = copy_prefix(src, fd, f.extent);
                    ::close(src);
                } else {
                    ++missing;
                }
                if (copied < f.extent && ::ftruncate(fd, static_cast<off_t>(f.extent)) != 0)
                    throw ReplayError(ReplayError::failure,
                                      fmt::format("--scratch: {}: {}", path, std::strerror(errno)));
                if (direct || sync_flags) {
                    // Reopen with the program's O_DIRECT/O_SYNC now the copy is made.
                    const int again =
                        ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | sync_flags |
                                                 (direct ? O_DIRECT : 0));
                    if (again >= 0) {
                        ::close(fd);
                        fds_[i] = again;
                    } else if (direct) {
                        ++direct_refused;
                    }
                }
                continue;
            }
            const int access = f.writes > 0 ? O_RDWR : O_RDONLY;
            fd = open_recorded(f.path, access | sync_flags | (direct ? O_DIRECT : 0));
            if (fd == -EINVAL && direct) {
                ++direct_refused;
                fd = open_recorded(f.path, access | sync_flags);
            }
            if (fd < 0)
                throw ReplayError(
                    ReplayError::bad_input,
                    fmt::format("{}: {}{}", f.path, std::strerror(-fd),
                                fd == -ENOENT ? " (the trace's files are read where it "
                                                "recorded them; --scratch DIR replays "
                                                "into copies of the recorded sizes)"
                                              : ""));
            fds_[i] = fd;
        }
    } catch (...) {
        release();
        throw;
    }
    if (!config.scratch.empty())
        notes_.push_back(fmt::format(
            "replayed into {} cop{} in {} (the recorded extent of each file, its "
            "bytes where the original is readable here{}), removed afterwards",
            scratch_paths_.size(), scratch_paths_.size() == 1 ? "y" : "ies", config.scratch,
            missing ? fmt::format("; {} missing here, so zeros", missing) : ""));
    else if (program.writes())
        notes_.push_back("--allow-write: the trace's writes went to the files it names");
    if (direct_refused)
        notes_.push_back(
            fmt::format("{} file{} opened with O_DIRECT in the trace refused it here: replayed "
                        "through the page cache",
                        direct_refused, direct_refused == 1 ? "" : "s"));
}

ReplayFiles::~ReplayFiles() {
    release();
}

void ReplayFiles::release() noexcept {
    for (int& fd : fds_)
        if (fd >= 0) {
            ::close(fd);
            fd = -1;
        }
    for (const std::string& p : scratch_paths_) ::unlink(p.c_str());
    scratch_paths_.clear();
}

void ReplayFiles::warm() const {
    std::vector<char> buf(1 << 20);
    for (std::size_t i = 0; i < fds_.size(); ++i) {
        if (fds_[i] < 0) continue;
        const std::uint64_t extent = program_.files()[i].extent;
        // A descriptor with O_DIRECT bypasses the cache: warm through a plain one.
        const int fd = ::fcntl(fds_[i], F_GETFL) & O_DIRECT ? -1 : fds_[i];
        if (fd < 0) continue;
        ::posix_fadvise(fd, 0, static_cast<off_t>(extent), POSIX_FADV_WILLNEED);
        for (std::uint64_t off = 0; off < extent;) {
            const ssize_t n =
                ::pread(fd, buf.data(), std::min<std::uint64_t>(buf.size(), extent - off),
                        static_cast<off_t>(off));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            off += static_cast<std::uint64_t>(n);
        }
    }
}

void ReplayFiles::drop() const {
    for (std::size_t i = 0; i < fds_.size(); ++i) {
        if (fds_[i] < 0) continue;
        if (program_.files()[i].writes) ::fdatasync(fds_[i]);
        ::posix_fadvise(fds_[i], 0, 0, POSIX_FADV_DONTNEED);
    }
}

}  // namespace uringkit::replaybench::detail
