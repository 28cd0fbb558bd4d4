// Server counters.  Each engine thread owns one ServerStats and is its only
// writer; `GET /stats` (any thread) and the CLI read all of them.  A counter is
// an atomic written with a relaxed load + store (one writer, so no lost update
// and no locked instruction on the hot path) and read relaxed: a reader gets a
// value that was true at some recent moment, which is all a counter promises.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>

namespace uringkit::net {

class Counter {
public:
    void add(std::uint64_t n = 1) noexcept {
        v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    void sub(std::uint64_t n = 1) noexcept {
        v_.store(v_.load(std::memory_order_relaxed) - n, std::memory_order_relaxed);
    }
    std::uint64_t get() const noexcept { return v_.load(std::memory_order_relaxed); }
    // For a high-water mark: keeps the larger of the two.
    void raise_to(std::uint64_t n) noexcept {
        if (n > get()) v_.store(n, std::memory_order_relaxed);
    }

private:
    std::atomic<std::uint64_t> v_{0};
};

struct alignas(64) ServerStats {
    Counter accepted;       // connections accepted (rejected ones included)
    Counter rejected;       // closed at once because --max-conns was reached
    Counter active;         // open now
    Counter idle_closed;    // closed by --idle-timeout
    Counter send_timeouts;  // closed by --send-timeout: output pending and none of it taken for
                            // that long
    Counter requests;       // complete requests parsed (HTTP) or recv calls with data (echo)
    Counter status_2xx, status_4xx, status_5xx;
    Counter bytes_in, bytes_out;
    // Of bytes_out: file bodies moved by sendfile(2) or SPLICE from the page
    // cache to the socket, never through the server's memory (--body-path).
    Counter bytes_spliced;
    // Bodies that were to be spliced but were read: no pipe could be made.
    Counter body_read_fallbacks;
    Counter syscalls;         // every system call the engine made (io_uring_enter counted)
    Counter recv_rearms;      // multishot recv re-armed (ENOBUFS or the kernel ended it)
    Counter recv_buffers;     // provided buffers filled by recv (above recv completions: bundles)
    Counter enobufs;          // recv found the provided buffer ring empty
    Counter accept_backoffs;  // accept failed (EMFILE...) and paused
    Counter batch_waits;      // io_uring_enter calls that used the batching wait (--batch-wait)
    // Output held per connection (--max-pending).
    Counter pending;       // bytes of responses not sent yet, all connections, now (a gauge)
    Counter pending_peak;  // the most one connection has had not sent yet (a high-water mark)
    Counter read_pauses;   // times a connection stopped reading because its output reached the cap
};

// The sum over all engine threads.
struct StatsSnapshot {
    std::uint64_t accepted = 0, rejected = 0, active = 0, idle_closed = 0, requests = 0;
    std::uint64_t status_2xx = 0, status_4xx = 0, status_5xx = 0, bytes_in = 0, bytes_out = 0,
                  bytes_spliced = 0, body_read_fallbacks = 0;
    std::uint64_t syscalls = 0, recv_rearms = 0, recv_buffers = 0, enobufs = 0, accept_backoffs = 0,
                  batch_waits = 0;
    std::uint64_t send_timeouts = 0, pending = 0, pending_peak = 0, read_pauses = 0;

    static StatsSnapshot sum(std::span<const ServerStats> threads) noexcept;
    // {"engine":..., "connections":{...}, "requests":..., ...}
    std::string to_json(std::string_view engine, std::string_view mode, unsigned threads) const;
};

}  // namespace uringkit::net
