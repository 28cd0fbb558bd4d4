// The protocol side of one connection, independent of the engine: bytes in,
// response bytes out.  Engines call feed() with whatever arrived and send what
// it appended; nothing here knows about rings, epoll or sockets.
#pragma once

#include "net/file_response.hpp"
#include "net/http.hpp"
#include "net/stats.hpp"

#include <cstdint>
#include <ctime>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <unistd.h>

namespace uringkit::net {

enum class Mode : std::uint8_t { Http, Echo };

// serve --root: what the engine does itself, driven by Session::file_want().
struct FileServing {
    // The engine opens, stats, reads and closes the files (on its ring);
    // otherwise the session makes those system calls.
    bool engine_file_io = false;
    // The engine moves each body of at least `send_from` bytes from the
    // file to the socket itself (sendfile(2), SPLICE) instead of the
    // session reading it into the output; smaller bodies are read.
    bool engine_sends_body = false;
    std::uint64_t send_from = 0;
};

// What every connection of one engine thread shares: the mode, the limits, the
// prepared `GET /` responses and the thread's counters.
class Responder {
public:
    // `stats_json` renders GET /stats (called only for that request).
    Responder(Mode mode, std::size_t body_size, HttpLimits limits, ServerStats& stats,
              std::function<std::string()> stats_json);
    // serve --root: every request is answered from `root` (answer_file()),
    // none from the fixed body or /stats.  `root` outlives the Responder.
    Responder(const StaticRoot& root, HttpLimits limits, ServerStats& stats,
              FileServing serving = {});

    const StaticRoot* root() const noexcept { return files_; }
    bool engine_file_io() const noexcept { return serving_.engine_file_io; }
    // The engine moves this body to the socket itself (Session::FileWant::Send).
    bool engine_sends(std::uint64_t body_length) const noexcept {
        return serving_.engine_sends_body && body_length >= serving_.send_from;
    }
    // Counts a response's status class.
    void count_status(int status) const noexcept;

    Mode mode() const noexcept { return mode_; }
    const HttpLimits& limits() const noexcept { return limits_; }
    ServerStats& stats() const noexcept { return *stats_; }

    // Appends the response to a complete request.  Each thread has its own
    // Responder, so the prepared responses' Date is refreshed here unlocked.
    void respond(const HttpRequest& req, std::string& out) const;
    // The same under --root, where a file's body may follow: `head` is the
    // request's head (its headers are read) and `body` the session's.
    void respond_file(const HttpRequest& req, std::string_view head, std::string& out,
                      FileBody& body, FileAnswer& answer) const;
    // Appends the error response for a failed parse (the connection then closes).
    void respond_error(ParseStatus status, std::string& out) const;

private:
    Mode mode_;
    const StaticRoot* files_ = nullptr;
    FileServing serving_;
    HttpLimits limits_;
    ServerStats* stats_;
    std::function<std::string()> stats_json_;
    // Rewrites the Date of the prepared responses when the second changed.
    void refresh_date(std::time_t now) const noexcept;

    // The whole `GET /` response, built once: [HEAD][Connection: none, close,
    // keep-alive]; only its Date changes, in place, once a second.
    mutable std::string root_[2][3];
    mutable std::time_t root_date_ = 0;
    std::size_t date_offset_ = 0;  // where the Date value starts in each of root_
};

class Session {
public:
    explicit Session(const Responder& responder) noexcept : r_(&responder) {}

    // Consumes bytes that arrived and appends the responses they complete to
    // `out`.  Returns false once the connection must close after `out` is
    // sent (a Connection: close request, or an error answered); bytes fed
    // after that are ignored.
    //
    // `room` bounds what one call appends: once `out` has grown by that much
    // no further request is answered (the one that crossed it is, whole) and
    // the rest of the input is held, in order, for a later feed(), which
    // takes it before its own bytes; feed({}, ...) answers held input only.
    // An engine passes the room left under its per-connection output cap,
    // so a client that sends faster than it reads holds at most one cap of
    // output (+ one response) and its own input, not the server's memory.
    bool feed(std::string_view data, std::string& out, std::size_t room = kNoLimit);
    static constexpr std::size_t kNoLimit = static_cast<std::size_t>(-1);
    // Input feed() held back for want of room: the engine stops reading this
    // connection until it can answer it.
    bool held() const noexcept { return held_; }

    // True once per completed request (or echoed chunk): the engine restarts
    // the connection's idle clock.  Bytes of an unfinished request do not
    // count, so a client that trickles a request is closed at the timeout.
    bool take_progress() noexcept { return std::exchange(progress_, false); }
    bool closing() const noexcept { return close_; }
    // Holding the bytes of an unfinished request (or an unread body), or held input.
    bool mid_request() const noexcept {
        return !pending_.empty() || body_left_ != 0 || chunked_.has_value();
    }
    // A file's body is still being pumped into the output (--root).
    bool sending_file() const noexcept { return file_.active(); }

    // --root with Responder::engine_file_io() or engine_sends(): the
    // file operation the session waits for before it answers anything more
    // (its input is held, in order, meanwhile).  Open: openat2(root fd,
    // name, file_open_how()) and statx on the result; Read: `length` bytes
    // at `offset` of `fd`, read into the output's end; Send: up to `length`
    // bytes at `offset` of `fd` moved to the socket once everything in the
    // output before them is sent.  The name lives until the result is
    // handed back.
    struct FileWant {
        enum class Kind : std::uint8_t { None, Open, Read, Send };
        Kind kind = Kind::None;
        const char* name = nullptr;
        int fd = -1;
        std::uint64_t offset = 0;
        std::size_t length = 0;
    };
    FileWant file_want() const noexcept;
    // The Open's result (`f.fd` -1 and `f.error` on failure); the session
    // takes the descriptor.  Then answers what it holds, like feed({}, out, room).
    bool file_opened(OpenedFile& f, std::string& out, std::size_t room);
    // The Read's result: `got` bytes (<= 0: EOF or -errno) now end `out`.
    bool file_read(long got, std::string& out, std::size_t room);
    // The Send's result: `got` bytes of the body reached the socket (0: the
    // file ended early, truncated; < 0: -errno).  Less than `length` is
    // fine: the session asks for the rest.
    bool file_sent(long got, std::string& out, std::size_t room);
    // The engine cannot move this body itself (no pipe for its splice: the
    // descriptor limit): the session reads it instead, as a smaller body.
    bool file_send_unavailable(std::string& out, std::size_t room);
    // Descriptors the session is done with, for the engine to close (with
    // engine_file_io only); the engine clears the list.
    std::vector<int>& done_fds() noexcept { return done_fds_; }

    // Ready for a new connection; keeps the buffer's capacity when it is
    // small, so the next connection starts warm, but gives back what a large
    // held input grew it to: a pooled connection keeps no attack's memory.
    void reset() noexcept {
        if (pending_.capacity() > kKeptCapacity)
            std::string().swap(pending_);
        else
            pending_.clear();
        held_ = false;
        body_left_ = 0;
        chunked_.reset();
        file_.close();
        for (const int fd : done_fds_) ::close(fd);  // none unless the engine left them
        done_fds_.clear();
        waiting_ = FileWant::Kind::None;
        close_after_file_ = read_body_ = false;
        close_ = progress_ = false;
    }

    // A buffer a connection leaves behind up to this size is kept for the
    // next one (no allocation when it starts); a larger one is freed.  The
    // engines apply it to their output buffers too.
    static constexpr std::size_t kKeptCapacity = 64 * 1024;

private:
    bool process(std::string_view& data, std::string& out, std::size_t stop);
    bool echo(std::string_view data, std::string& out, std::size_t stop);
    // The chunked body ended: answer the request it belonged to.
    bool finish_chunked(std::string& out);
    // Answers `req`: from the root under --root, else the Responder's own.
    void answer(const HttpRequest& req, std::string_view head, std::string& out);
    // After a file step answered: close if the request asked to, else go on.
    bool after_file_step(std::string& out, std::size_t room);
    // A Read's or Send's `got` taken by the body: go on, or end it.
    bool body_step(long got, std::string& out, std::size_t room);

    const Responder* r_;
    std::string
        pending_;  // an incomplete head, or input held for want of room, for the next feed()
    std::uint64_t body_left_ = 0;  // request body bytes still to discard
    // A chunked body being discarded, and its request, answered once the body
    // ends (a body over the limit gets 413 instead).  The target is copied:
    // the bytes it pointed into are gone by then.
    std::optional<ChunkedBody> chunked_;
    HttpRequest chunked_request_;
    std::string chunked_head_;  // its head; the request's target points into it
    // --root: the body of the file being answered, pumped into the output
    // ahead of any later request; and whether the connection closes after it.
    FileBody file_;
    FileAnswer answer_;
    std::vector<int> done_fds_;
    FileWant::Kind waiting_ = FileWant::Kind::None;  // engine_file_io: what is in flight
    std::size_t read_length_ = 0;                    // the Read's or the Send's
    bool close_after_file_ = false;
    bool read_body_ = false;  // file_send_unavailable(): this body is read
    bool close_ = false;
    bool progress_ = false;
    bool held_ = false;
};

}  // namespace uringkit::net
