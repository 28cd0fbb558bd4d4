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
    bool inflight = false;       // an open (and statx) or a read
    bool read_inflight = false;  // a read: the output must not be handed to a send
    std::size_t read_at = 0;
    int statx_fd = -1;  // ring-statx: the opened file a STATX in flight names
    struct statx stx {};
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
    // Prepares the operation the session waits for (Session::file_want()),
    // if any: an open tagged `open_ud`, or a read into the end of `out`
    // tagged `read_ud`.
    void start(RingFile& f, const Session& s, std::string& out, std::uint64_t open_ud,
               std::uint64_t read_ud);
    // The OPENAT2 CQE: false while a STATX is still to come (tagged
    // `statx_ud`; only when `statx_on_ring` and the open succeeded), else
    // true with `out` the opened file or its error.
    bool on_open(RingFile& f, int res, bool go_on, std::uint64_t statx_ud, OpenedFile& out);
    OpenedFile on_statx(RingFile& f, int res);
    // The READ CQE: the bytes now ending `out` (<= 0: EOF or -errno).
    long on_read(RingFile& f, const Session& s, std::string& out, int res);
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
    unsigned closing_ = 0;
};

}  // namespace uringkit::net::detail
