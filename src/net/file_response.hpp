// serve --root: answering one request with a file under the root, for every
// engine alike.  The Session calls answer_file() for each complete request;
// it appends the head (or a whole error response) and, for a body, starts a
// FileBody, which the Session then pumps into its output as the engine's
// per-connection output cap leaves room: a 1 GiB file sent to a client that
// reads slowly holds one cap of memory, not the file.
//
// Opening and reading are plain system calls made by the engine thread
// (openat2, statx, pread, close), counted in the server's syscalls.  On a
// file in the page cache each takes microseconds; they are the same calls
// nginx makes with open_file_cache off (it sends with sendfile).
#pragma once

#include "net/http.hpp"
#include "net/static_files.hpp"
#include "net/stats.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace uringkit::net {

// What serve --root serves: the root directory, opened once by the server
// (O_PATH | O_DIRECTORY) and shared read-only by its threads, with the media
// types and the resolve options.
struct StaticRoot {
    int fd = -1;
    MimeTypes mime;
    ResolveOptions resolve;
};

// The part of a file still to send after its head.
class FileBody {
public:
    FileBody() = default;
    FileBody(const FileBody&) = delete;
    FileBody& operator=(const FileBody&) = delete;
    ~FileBody() { close(); }

    bool active() const noexcept { return fd_ >= 0; }
    // Takes `fd` (closed once the body is sent or abandoned).
    void start(int fd, std::uint64_t offset, std::uint64_t length) noexcept;

    enum class Pump : std::uint8_t {
        Done,  // the whole range is in `out`; the file is closed
        More,  // `out` reached `stop`: call again once there is room
        Ended  // the file ended before the range did (truncated while being
               // sent) or a read failed: `out` holds what was read, and the
               // connection must close after it (never padded, never resent)
    };
    // Appends file bytes to `out` until the body is done or out.size()
    // reaches `stop`.
    Pump pump(std::string& out, std::size_t stop, ServerStats& stats);
    void close() noexcept;

private:
    int fd_ = -1;
    std::uint64_t offset_ = 0;
    std::uint64_t left_ = 0;
};

// Answers `req` (whose head is `head`, request line included) from `root`:
// 405 for a method other than GET and HEAD, 400 for a target that does not
// decode (an encoded NUL), 404/403 for what cannot be opened beneath the
// root, 301 to the slash form for a directory named without it, the
// directory's index.html otherwise, 403 for anything but a regular file,
// and for a regular file plan_file_response()'s head, with `body` started
// for the bytes it names.  Returns the status.
int answer_file(const StaticRoot& root, const HttpRequest& req, std::string_view head,
                std::string_view connection, std::string& out, FileBody& body, ServerStats& stats);

}  // namespace uringkit::net
