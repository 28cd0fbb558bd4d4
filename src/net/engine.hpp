// What one engine thread is given, and the engines' entry points (internal).
#pragma once

#include "net/server.hpp"
#include "uringkit/async/batch_wait.hpp"

#include <time.h>

#include <algorithm>
#include <cstdint>

namespace uringkit::net::detail {

struct WorkerContext {
    const ServerConfig* config;
    int listen_fd;       // non-blocking, owned by Server, shared by all its threads
    int wake_fd;         // eventfd; readable once stop() was called
    unsigned max_conns;  // this thread's share
    ServerStats* stats;
    const Responder* responder;
};

void run_uring_engine(WorkerContext& ctx);
void run_coro_engine(WorkerContext& ctx);
void run_epoll_engine(WorkerContext& ctx);

// Milliseconds on a coarse monotonic clock (a vDSO read, no system call):
// idle deadlines need no better than a tick.
inline std::uint64_t now_ms() noexcept {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000 +
           static_cast<std::uint64_t>(ts.tv_nsec) / 1000000;
}

// How often an engine looks for idle and stalled connections: a quarter of
// the shorter timeout, between 10 ms and 1 s.
inline std::uint64_t tick_ms(const ServerConfig& c) noexcept {
    const auto shorter = std::min(c.idle_timeout, c.send_timeout);
    const auto t = static_cast<std::uint64_t>(shorter.count()) / 4;
    return t < 10 ? 10 : t > 1000 ? 1000 : t;
}

// The per-connection output bound (ServerConfig::max_pending): reading stops
// at `cap` bytes not yet sent and resumes at half of it, so a connection
// that just crossed the cap does not stop and start again for each response.
struct OutputCap {
    std::size_t cap;
    bool full(std::size_t pending) const noexcept { return pending >= cap; }
    bool low(std::size_t pending) const noexcept { return pending <= cap / 2; }
    // What Session::feed() may append.
    std::size_t room(std::size_t pending) const noexcept {
        return pending < cap ? cap - pending : 0;
    }
};

// The uring engines' wait: batching under load (see ServerConfig::batch_wait).
// The timeout only bounds an idle wait; the tick timer does the real work.
inline BatchWaitOptions batch_wait_options(const ServerConfig& c) noexcept {
    BatchWaitOptions o;
    o.min_wait = c.batch_wait;
    return o;
}

// A connection's place in a DeadlineList: each list it can be on has one.
template <class C>
struct DeadlineHook {
    C* prev = nullptr;
    C* next = nullptr;
    std::uint64_t deadline = 0;
    bool linked = false;
};

// Connections ordered by deadline, all deadlines on one list being "now + the
// same timeout": a connection that makes progress moves to the back with the
// newest deadline, so the expired ones are always at the front and a sweep
// stops at the first that is not.  Intrusive: no allocation, O(1) moves.
// `Hook` names the connection's DeadlineHook for this list, so one
// connection can be on several (idle, stalled output).
template <class C, DeadlineHook<C> C::*Hook>
class DeadlineList {
public:
    void push_back(C* c, std::uint64_t deadline) noexcept {
        DeadlineHook<C>& h = c->*Hook;
        h.deadline = deadline;
        h.prev = tail_;
        h.next = nullptr;
        (tail_ ? (tail_->*Hook).next : head_) = c;
        tail_ = c;
        h.linked = true;
    }
    void remove(C* c) noexcept {
        DeadlineHook<C>& h = c->*Hook;
        if (!h.linked) return;
        (h.prev ? (h.prev->*Hook).next : head_) = h.next;
        (h.next ? (h.next->*Hook).prev : tail_) = h.prev;
        h.prev = h.next = nullptr;
        h.linked = false;
    }
    void touch(C* c, std::uint64_t deadline) noexcept {
        if (!(c->*Hook).linked) return;
        remove(c);
        push_back(c, deadline);
    }
    static bool contains(const C* c) noexcept { return (c->*Hook).linked; }
    C* front() const noexcept { return head_; }

    // Takes off the list every connection whose deadline has passed (they
    // are at the front), or every one when `all` is set (a stop's grace is
    // over), and hands each to f(c, expired).  f may put c back with a later
    // deadline.
    template <class F>
    void expire(std::uint64_t now, bool all, F&& f) {
        while (C* c = head_) {
            const bool expired = (c->*Hook).deadline <= now;
            if (!expired && !all) return;
            remove(c);
            f(c, expired);
        }
    }
    // f(c) for every connection on the list; f may take c off it.
    template <class F>
    void for_each(F&& f) {
        for (C* c = head_; c != nullptr;) {
            C* next = (c->*Hook).next;
            f(c);
            c = next;
        }
    }

private:
    C* head_ = nullptr;
    C* tail_ = nullptr;
};

// One sweep of a server's deadlines (the uring and epoll engines): a
// connection idle past --idle-timeout, or every idle one once a stop's grace
// is over, and one whose output took no byte for --send-timeout are handed
// to `abort`, counted as idle_closed and send_timeouts.
template <class IdleList, class StallList, class Abort>
void expire_deadlines(IdleList& idle, StallList& stalled, ServerStats& stats, std::uint64_t now,
                      bool grace_over, Abort&& abort) {
    idle.expire(now, grace_over, [&](auto* c, bool expired) {
        if (expired) stats.idle_closed.add();
        abort(c);
    });
    // Output waiting and none of it taken for --send-timeout: the client
    // does not read.  Aborting takes the connection off this list.
    stalled.expire(now, false, [&](auto* c, bool) {
        stats.send_timeouts.add();
        abort(c);
    });
}

// After each event of connection `c` (with `pending` bytes not yet sent):
// keeps the server's pending-output gauge and peak in step, and the
// stalled-output list: a connection is on it while it has output to send
// and is not being aborted, its deadline (`deadline`) set when it joins;
// the engines push it back on every send that moves bytes.
// `body_waits`: a file body the engine moves itself (sendfile) waits for
// the socket too, though none of it is in the output.
template <class C, class List>
void account_output(ServerStats& stats, List& stalled, C* c, std::size_t pending,
                    std::uint64_t deadline, bool body_waits = false) noexcept {
    if (pending != c->counted) {
        if (pending > c->counted)
            stats.pending.add(pending - c->counted);
        else
            stats.pending.sub(c->counted - pending);
        c->counted = pending;
        stats.pending_peak.raise_to(pending);
    }
    if ((pending == 0 && !body_waits) || c->aborting)
        stalled.remove(c);
    else if (!stalled.contains(c))
        stalled.push_back(c, deadline);
}

}  // namespace uringkit::net::detail
