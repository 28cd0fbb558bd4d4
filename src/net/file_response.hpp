// serve --root: answering one request with a file under the root, for every
// engine alike.  The Session calls answer_file() for each complete request;
// it appends the head (or a whole error response) and, for a body, starts a
// FileBody, which the Session then pumps into its output as the engine's
// per-connection output cap leaves room: a 1 GiB file sent to a client that
// reads slowly holds one cap of memory, not the file.
//
// answer_file() opens and reads with plain system calls made by the engine
// thread (openat2, statx, pread, close), counted in the server's syscalls:
// the epoll and coroutine engines' way, and the same calls nginx makes with
// open_file_cache off (it sends with sendfile).  The io_uring engine can
// instead drive FileAnswer and FileBody itself and put the opens, stats,
// reads and closes on its ring (serve --file-io).
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
    // Appends file bytes to `out` with pread until the body is done or
    // out.size() reaches `stop`.
    Pump pump(std::string& out, std::size_t stop, ServerStats& stats);
    void close() noexcept;

    // The same one read at a time, for an engine that reads on its ring:
    // next_read() is how many bytes to read next at offset() (0: `out` is at
    // `stop`), and consumed() takes what the read returned (<= 0: Ended)
    // and says whether the body is Done, has More, or Ended.  Done and
    // Ended leave the descriptor to release() (the engine closes it).
    int fd() const noexcept { return fd_; }
    std::uint64_t length() const noexcept { return length_; }  // the whole range's, from start()
    std::uint64_t offset() const noexcept { return offset_; }
    std::size_t next_read(std::size_t out_size, std::size_t stop) const noexcept;
    Pump consumed(long got) noexcept;
    // For an engine that moves the body to the socket itself: how many
    // bytes to offer one sendfile(2) (all that is left, at most 2 MiB,
    // nginx's sendfile_max_chunk, so one client does not hold the thread).
    std::size_t next_send() const noexcept;
    int release() noexcept;

private:
    int fd_ = -1;
    std::uint64_t offset_ = 0;
    std::uint64_t left_ = 0;
    std::uint64_t length_ = 0;
};

// One request for a file answered in steps, so that an engine can open and
// stat on its ring: begin() either appends the whole response (a 405, a
// 400) or asks for open_name() to be opened beneath the root; opened()
// takes what openat2 and statx said and either appends the response,
// starting `body` with the descriptor, or asks for the next name (a
// directory's index.html).  The request head is copied: the engine's
// input buffer is gone by the time the open completes.
class FileAnswer {
public:
    enum class Step : std::uint8_t { Answered, Open };
    Step begin(const HttpRequest& req, std::string_view head, std::string_view connection,
               std::string& out);
    // `f.fd` is set to -1 when `body` took it; else the caller closes it.
    Step opened(const StaticRoot& root, OpenedFile& f, std::string& out, FileBody& body);
    // What to open with openat2(root.fd, open_name(), file_open_how()); it
    // lives until the next begin().
    const char* open_name() const noexcept { return path_.empty() ? "." : path_.c_str(); }
    int status() const noexcept { return status_; }

private:
    Step answer(int status, std::string_view body, std::string& out);
    std::string head_;                             // the request head; the plan reads its headers
    std::string path_;                             // decoded, beneath the root
    std::size_t target_at_ = 0, target_size_ = 0;  // the target, inside head_
    std::string_view connection_;
    bool head_only_ = false;
    bool index_ = false;  // path_ is a directory's index.html
    int status_ = 0;
};

// Answers `req` (whose head is `head`, request line included) from `root`:
// 405 for a method other than GET and HEAD, 400 for a target that does not
// decode (an encoded NUL), 404/403 for what cannot be opened beneath the
// root, 301 to the slash form for a directory named without it, the
// directory's index.html otherwise, 403 for anything but a regular file,
// and for a regular file plan_file_response()'s head, with `body` started
// for the bytes it names.  Returns the status.
// `answer` holds the steps' state (a session's, reused).
int answer_file(const StaticRoot& root, const HttpRequest& req, std::string_view head,
                std::string_view connection, std::string& out, FileBody& body, ServerStats& stats,
                FileAnswer& answer);

}  // namespace uringkit::net
