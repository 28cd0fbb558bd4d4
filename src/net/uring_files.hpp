// The uring engine's file operations for `serve --root` with --file-io ring
// or ring-statx (internal): OPENAT2 beneath the root, STATX (ring-statx) or
// statx(2), READ into the end of a connection's output, and CLOSE of what a
// session is done with, each prepared on the engine's ring.  The engine
// keeps one RingFile per connection and hands its CQEs here; what the
// session makes of the results stays in the engine.
#pragma once

#include "net/server.hpp"
#include "net/session.hpp"
#include "net/static_files.hpp"
#include "uringkit/ring/hand_loop.hpp"

#include <linux/openat2.h>
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace uringkit::net::detail {

// One connection's file operation in flight.  The session, the name it
// opens and, for a read, the output from `read_at` on are the kernel's
// until its CQE: the engine neither swaps nor resets them meanwhile.
struct RingFile {
    RingFile() = default;
    RingFile(const RingFile&) = delete;
    RingFile& operator=(const RingFile&) = delete;
    ~RingFile();  // closes the pipe (the engine's ring is gone by then)

    bool inflight = false;       // an open (and statx) or a read
    bool read_inflight = false;  // a read: the output must not be handed to a send
    std::size_t read_at = 0;
    int statx_fd = -1;  // ring-statx: the opened file a STATX in flight names
    struct statx stx {};

    // --body-path splice: the connection's pipe, made at its first body
    // and kept, empty, for the next connection of the pool.
    int pipe_r = -1, pipe_w = -1;
    std::uint32_t pipe_size = 0;
    std::uint32_t in_pipe = 0;  // body bytes spliced in, not yet out to the socket
    // The CQEs still to come, in order: a chain file->pipe, pipe->socket;
    // a pipe->socket alone; or a POLLOUT wait for a full socket.
    enum class Stage : std::uint8_t { In, Out, Poll };
    Stage stages[2]{};
    std::uint8_t splicing = 0;  // how many of stages[] are still to come
    int in_result = 0;          // the file->pipe CQE's, for the Out that follows
    bool cancel_sent = false;   // since the last CQE (cancel())

    // A CQE of this connection's file operations is still to come: the
    // connection is not closed (nor its session reset) before it.
    bool busy() const noexcept { return inflight || splicing != 0; }
};

class RingFiles {
public:
    // Enabled when the responder serves files through the engine
    // (Responder::engine_file_io()); otherwise nothing here is used.  Each
    // close is tagged `close_ud`, whose CQE the engine hands to closed().
    RingFiles(SqeSupply& sqes, ServerStats& stats, const ServerConfig& cfg, const Responder& r,
              std::uint64_t close_ud);

    bool enabled() const noexcept { return enabled_; }
    // Closes on the ring the descriptors the session is done with.
    void close_done(std::vector<int>& fds);
    void close(int fd);
    // user_data of one connection's file operations.
    struct Tags {
        std::uint64_t open, read, splice;
    };
    // Prepares the operation the session waits for (Session::file_want()),
    // if any: an open tagged `tags.open`, a read into the end of `out`
    // tagged `tags.read`, or (--body-path splice) the splices that move the
    // body to socket `sock`, tagged `tags.splice`.  False when the pipe
    // could not be made (the descriptor limit): nothing is prepared, and
    // the engine has the session read the body instead.
    bool start(RingFile& f, const Session& s, std::string& out, int sock, const Tags& tags);
    // The OPENAT2 CQE: false while a STATX is still to come (tagged
    // `statx_ud`; only when `statx_on_ring` and the open succeeded), else
    // true with `out` the opened file or its error.
    bool on_open(RingFile& f, int res, bool go_on, std::uint64_t statx_ud, OpenedFile& out);
    OpenedFile on_statx(RingFile& f, int res);
    // The READ CQE: the bytes now ending `out` (<= 0: EOF or -errno).
    long on_read(RingFile& f, const Session& s, std::string& out, int res);
    // A CQE tagged `splice` (its stage is the next of f.stages): true with
    // `got` for Session::file_sent() (bytes that reached the socket; 0 the
    // file ended; < 0 -errno), or false while the move goes on (the rest of
    // the pipe re-sent, or a POLLOUT armed on a full socket; only when
    // `go_on`: an aborting connection starts nothing more).
    bool on_splice(RingFile& f, int res, int sock, std::uint64_t splice_ud, bool go_on, long& got);
    // Aborting: a POLLOUT wait, or a splice asleep on a full socket, would
    // never end for a client that does not read: both are cancelled.
    void cancel(RingFile& f, std::uint64_t splice_ud);
    // The connection closed: a pipe that still holds body bytes is closed,
    // an empty one kept for the next connection.
    void recycle(RingFile& f);
    // A close's CQE (the engine's kFileClosed).
    void closed() noexcept { --closing_; }
    // Closes not completed yet: the loop must not end before they are.
    unsigned closing() const noexcept { return closing_; }

private:
    SqeSupply& sqes_;
    ServerStats& stats_;
    const bool enabled_;
    const bool statx_on_ring_;
    const int root_fd_;
    const std::uint64_t close_ud_;
    const open_how how_;  // OPENAT2 reads it at submission; it lives as long as the engine
    bool make_pipe(RingFile& f);
    void splice_out(RingFile& f, int sock, std::uint64_t ud);
    unsigned closing_ = 0;
};

}  // namespace uringkit::net::detail
