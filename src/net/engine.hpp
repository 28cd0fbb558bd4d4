// What one engine thread is given, and the engines' entry points (internal).
#pragma once

#include "uringkit/net/server.hpp"
#include "uringkit/ring/batch_wait.hpp"

#include <time.h>

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
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000 + static_cast<std::uint64_t>(ts.tv_nsec) / 1000000;
}

// How often an engine looks for idle connections: a quarter of the timeout,
// between 10 ms and 1 s.
inline std::uint64_t tick_ms(const ServerConfig& c) noexcept {
    const auto t = static_cast<std::uint64_t>(c.idle_timeout.count()) / 4;
    return t < 10 ? 10 : t > 1000 ? 1000 : t;
}

// The uring engines' wait: batching under load (see ServerConfig::batch_wait).
// The timeout only bounds an idle wait; the tick timer does the real work.
inline BatchWaitOptions batch_wait_options(const ServerConfig& c) noexcept {
    BatchWaitOptions o;
    o.min_wait = c.batch_wait;
    return o;
}

// Connections ordered by idle deadline: a connection that makes progress
// moves to the back with the newest deadline, so the expired ones are always
// at the front and a sweep stops at the first that is not.  Intrusive: no
// allocation, O(1) moves.  C has `C* idle_prev, *idle_next; bool in_idle;
// std::uint64_t deadline`.
template <class C>
class IdleList {
public:
    void push_back(C* c, std::uint64_t deadline) noexcept {
        c->deadline = deadline;
        c->idle_prev = tail_;
        c->idle_next = nullptr;
        (tail_ ? tail_->idle_next : head_) = c;
        tail_ = c;
        c->in_idle = true;
    }
    void remove(C* c) noexcept {
        if (!c->in_idle) return;
        (c->idle_prev ? c->idle_prev->idle_next : head_) = c->idle_next;
        (c->idle_next ? c->idle_next->idle_prev : tail_) = c->idle_prev;
        c->idle_prev = c->idle_next = nullptr;
        c->in_idle = false;
    }
    void touch(C* c, std::uint64_t deadline) noexcept {
        if (!c->in_idle) return;
        remove(c);
        push_back(c, deadline);
    }
    C* front() const noexcept { return head_; }

    // Takes off the list every connection whose deadline has passed (they
    // are at the front), or every one when `all` is set (a stop's grace is
    // over), and hands each to f(c, expired).
    template <class F>
    void expire(std::uint64_t now, bool all, F&& f) {
        while (C* c = head_) {
            const bool expired = c->deadline <= now;
            if (!expired && !all) return;
            remove(c);
            f(c, expired);
        }
    }
    // f(c) for every connection on the list; f may take c off it.
    template <class F>
    void for_each(F&& f) {
        for (C* c = head_; c != nullptr;) {
            C* next = c->idle_next;
            f(c);
            c = next;
        }
    }

private:
    C* head_ = nullptr;
    C* tail_ = nullptr;
};

}  // namespace uringkit::net::detail
