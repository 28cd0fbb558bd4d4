// Output files a tool writes at the end of a run (bench's --json, --csv,
// --plot): never through a name another user could plant, never renamed over
// something that is not a regular file, never half-written.
#pragma once

#include <cerrno>
#include <stdexcept>
#include <string>
#include <string_view>

namespace uringkit::cli {

// An output path that cannot be written; what() names the path and the
// reason, error() is the errno (0 when the path is unsuitable, a directory).
class OutputError : public std::runtime_error {
public:
    explicit OutputError(const std::string& what, int error = 0)
        : std::runtime_error(what), error_(error) {}
    int error() const noexcept { return error_; }
    // Permission refused on a destination (EACCES, EPERM, EROFS) is status 1
    // by the README's rule; anything else about the path is 4.
    bool permission_refused() const noexcept {
        return error_ == EACCES || error_ == EPERM || error_ == EROFS;
    }

private:
    int error_;
};

// "-" names standard output.
inline bool is_standard_output(std::string_view path) noexcept {
    return path == "-";
}

// Checks before a run that `path` can be written, so a long run does not end
// in a write error: an existing file must be writable (and, when it will be
// replaced by rename, its directory too); a new one is tried by creating and
// removing a temporary in its directory.  The user's name itself is never
// created or touched.  Throws OutputError.
void check_output_path(const std::string& path);

// Writes `content` to `path`:
//  - "-": standard output;
//  - a new name or an existing regular file: a temporary created with
//    O_CREAT|O_EXCL|O_NOFOLLOW at a random name in the same directory, then
//    renamed over `path`, so a failed write leaves nothing half-written;
//  - anything else (a symlink such as /dev/stdout, a FIFO, a device): opened
//    through the link and written in place, never replaced.
// Throws OutputError.
void write_output(const std::string& path, std::string_view content);

// True when `a` and `b` both exist and are the same file (device and inode,
// through symlinks): an output must never be the input it measures.
bool same_file(const std::string& a, const std::string& b) noexcept;

}  // namespace uringkit::cli
