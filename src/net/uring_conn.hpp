// The uring engine's connection and the tags of its completions
// (internal; uring_engine.cpp).
#pragma once

#include "net/engine.hpp"
#include "net/session.hpp"
#include "uring_files.hpp"
#include "uringkit/ring/hand_loop.hpp"

#include <cstdint>
#include <string>

namespace uringkit::net::detail {

// user_data: a Conn pointer with the operation in the low 4 bits (Conn is
// 16-aligned), or a small constant for the thread's own operations.  0 marks a
// completion nobody waits for (cancels); kRejected the close of a connection
// accepted only to be refused, which the loop waits for before it ends.
enum : std::uint64_t {
    kIgnore = 0,
    kAccept = 1,
    kTimer = 2,
    kWake = 3,
    kBackoff = 4,
    kRejected = 5,
    kFileClosed = 6  // --file-io ring: the close of a served file
};
enum : std::uint64_t {
    kRecv = 1,
    kSend = 2,
    kClose = 3,
    kOpen = 4,
    kStatx = 5,
    kRead = 6,
    kSplice = 7  // --body-path splice: its splices and POLLOUT waits (uring_files.hpp)
};

struct alignas(16) Conn {
    explicit Conn(const Responder& r) : session(r) {}
    int fd = -1;
    Session session;
    std::string out;           // responses not yet handed to a send
    std::string sending;       // what the send in flight points to: untouched until its CQE
    std::size_t sent = 0;      // of `sending`
    std::size_t counted = 0;   // its output not sent yet, as last added to stats_.pending
    std::uint32_t window = 0;  // BatchWait's window of its last request
    DeadlineHook<Conn> idle;   // on the engine's idle list
    DeadlineHook<Conn> stall;  // on the stalled-output list while output waits to be sent
    bool recv_armed = false;
    bool paused = false;  // output at the cap (or input held): the recv is cancelled, not re-armed
    bool input_done = false;  // the recv ended with EOF or an error: never re-armed
    bool send_inflight = false;
    bool closing = false;   // no more input; close once the output is sent
    bool aborting = false;  // close now; drop the output
    bool recv_cancelled = false;
    bool send_cancelled = false;
    bool close_submitted = false;
    RingFile file;  // --file-io ring: the session's file operation in flight (uring_files.hpp)
};

using ConnUd = TaggedUserData<Conn, 4>;  // a Conn and the operation, or a constant below 16

}  // namespace uringkit::net::detail
