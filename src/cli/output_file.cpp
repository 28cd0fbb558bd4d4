#include "cli/output_file.hpp"

#include "uringkit/util/unique_fd.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace uringkit::cli {
namespace {

[[noreturn]] void fail(const std::string& path, std::string_view what, int err) {
    throw OutputError(path + ": " + std::string(what) + ": " + std::strerror(err), err);
}

std::string directory_of(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A new file ".BASE.uringkit-XXXXXXXXXXXX" beside `path`.  O_EXCL fails on
// any existing name, a planted symlink included (O_NOFOLLOW says so
// explicitly), and the suffix comes from getrandom, so no name can be
// prepared in advance.  `tmp` receives the name; returns the fd or -errno.
int create_temporary(const std::string& path, std::string& tmp) {
    static constexpr char kAlphabet[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    const std::string stem = directory_of(path) + "/." + base_of(path) + ".uringkit-";
    for (int attempt = 0; attempt < 100; ++attempt) {
        unsigned char bytes[12];
        if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) return -EIO;
        tmp = stem;
        for (unsigned char b : bytes) tmp += kAlphabet[b % (sizeof kAlphabet - 1)];
        const int fd =
            ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0) return fd;
        if (errno != EEXIST) return -errno;
    }
    return -EEXIST;
}

// 0 or the errno of the first failed write.
int write_all(int fd, std::string_view content) {
    std::size_t done = 0;
    while (done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno;
        if (n == 0) return ENOSPC;
        done += static_cast<std::size_t>(n);
    }
    return 0;
}

void write_in_place(const std::string& path, std::string_view content) {
    // No O_CREAT: a dangling symlink is an error, never a way to create its target.
    const util::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY));
    if (fd.get() < 0) fail(path, "cannot write", errno);
    if (const int err = write_all(fd.get(), content)) fail(path, "cannot write", err);
}

void write_and_rename(const std::string& path, std::string_view content) {
    std::string tmp;
    const int fd = create_temporary(path, tmp);
    if (fd < 0) fail(path, "cannot create a temporary file beside it", -fd);
    int err = write_all(fd, content);
    if (::close(fd) != 0 && !err) err = errno;
    if (!err && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
    if (err) {
        ::unlink(tmp.c_str());
        fail(path, "cannot write", err);
    }
}

}  // namespace

void check_output_path(const std::string& path) {
    if (is_standard_output(path)) return;
    struct stat lst;
    const bool lst_ok = ::lstat(path.c_str(), &lst) == 0;
    if (lst_ok) {
        struct stat st;
        if (::stat(path.c_str(), &st) != 0) fail(path, "cannot write the output there", errno);
        if (S_ISDIR(st.st_mode))
            throw OutputError(path + ": is a directory; give a file name for the output");
        if (::access(path.c_str(), W_OK) != 0) fail(path, "cannot write the output there", errno);
        if (!S_ISREG(lst.st_mode)) return;  // written in place: the directory does not matter
    } else if (errno != ENOENT) {
        fail(path, "cannot write the output there", errno);
    }
    // A new file or a regular file replaced by rename: a temporary must fit
    // in the directory.  For an existing file that is what fails, not the
    // file itself (`/proc/version` is there, and /proc takes no new file).
    std::string tmp;
    const int fd = create_temporary(path, tmp);
    if (fd < 0 && lst_ok)
        fail(path,
             "cannot write the output there: it is replaced whole through a new file beside it, "
             "and none can be created in " +
                 directory_of(path),
             -fd);
    if (fd < 0) fail(path, "cannot write the output there", -fd);
    ::close(fd);
    ::unlink(tmp.c_str());
}

void write_output(const std::string& path, std::string_view content) {
    if (is_standard_output(path)) {
        if (const int err = write_all(STDOUT_FILENO, content))
            throw OutputError(std::string("standard output: cannot write: ") + std::strerror(err),
                              err);
        return;
    }
    struct stat lst;
    if (::lstat(path.c_str(), &lst) == 0) {
        if (S_ISDIR(lst.st_mode))
            throw OutputError(path + ": is a directory; give a file name for the output");
        if (!S_ISREG(lst.st_mode)) return write_in_place(path, content);
    } else if (errno != ENOENT) {
        fail(path, "cannot write", errno);
    }
    write_and_rename(path, content);
}

bool same_file(const std::string& a, const std::string& b) noexcept {
    struct stat sa, sb;
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

}  // namespace uringkit::cli
