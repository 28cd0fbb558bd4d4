// An adaptive wait for event loops that serve many clients: plain waits by
// default, the kernel's batching wait (IORING_FEAT_MIN_TIMEOUT, 6.12) while
// the clients already wait much longer than the batch wait costs.
//
// Why: a batching wait lets the kernel keep the thread asleep for up to
// `min_wait` while completions gather, so a busy server makes one
// io_uring_enter and one wake-up for many requests instead of one or two per
// request.  That wait is added latency.  For one client in a ping-pong over
// loopback (~30 µs a round) a 50 µs wait more than doubles its latency and
// halves its requests/s; for 64 clients that each wait ~800 µs for their turn
// it is a few percent.  By Little's law the time a request spends in the
// system is (clients in flight) / (requests per second), so the loop counts,
// per window, the requests and the distinct clients that sent them, and
// batches only while that time is at least `latency_factor` batch waits.
// A wait gathers the requests of different clients, so fewer than
// `min_clients` never batch: a lone client that slows down (or a server
// thread that was descheduled for a while) is not a crowd.
#pragma once

#include "uringkit/cxx20.hpp"
#include "uringkit/ring/ring.hpp"

#include <chrono>
#include <cstdint>

namespace uringkit {

struct BatchWaitOptions {
    // The longest a completion waits for company; 0 turns batching off.
    std::chrono::microseconds min_wait{20};
    // Batch while clients' time in the system is at least this many min_waits.
    unsigned latency_factor = 10;
    // Length of one measurement window, and the fewest requests and distinct
    // clients in one that count as load.
    std::chrono::milliseconds window{20};
    unsigned min_requests = 32;
    unsigned min_clients = 4;
    // Return at once when this many completions are ready.
    unsigned wait_nr = 64;
    // With nothing at all to do, wake up after this long anyway.
    std::chrono::milliseconds timeout{1000};
};

class BatchWait {
public:
    BatchWait(const Ring& ring, BatchWaitOptions options) noexcept
        : options_(options),
          supported_((ring.features() & IORING_FEAT_MIN_TIMEOUT) && options.min_wait.count() > 0) {}

    // Whether the kernel has the batching wait (and it is not turned off):
    // without it every wait is a plain one.
    bool supported() const noexcept { return supported_; }
    bool batching() const noexcept { return batching_; }

    // Submits what is prepared and waits for the next wake-up, as
    // Ring::submit_and_wait(1) would; the batching wait may also return
    // -ETIME after `timeout` with nothing ready.
    int submit_and_wait(Ring& ring) noexcept {
        if (batching_)
            return ring.submit_and_wait_batch(options_.wait_nr, options_.min_wait,
                                              options_.timeout);
        return ring.submit_and_wait(1);
    }

    // One request arrived from the client that owns `stamp` (a per-client
    // integer starting at 0): the stamp records the window the client was
    // last counted in, so each client counts once per window.
    void request(std::uint32_t& stamp) noexcept {
        ++requests_;
        if (stamp != window_id_) {
            stamp = window_id_;
            ++clients_;
        }
    }

    // Call after each wake-up with a millisecond clock: closes the window
    // when it has run its length and decides how the next ones wait.
    void tick(std::uint64_t now_ms) noexcept {
        if (window_start_ == 0) window_start_ = now_ms;
        const std::uint64_t elapsed_ms = now_ms - window_start_;
        if (elapsed_ms < static_cast<std::uint64_t>(options_.window.count())) return;
        // Time in the system, clients / (requests / elapsed), at least
        // factor * min_wait; multiplied out by requests to avoid a division.
        const std::uint64_t clients_x_elapsed_us =
            static_cast<std::uint64_t>(clients_) * elapsed_ms * 1000;
        const std::uint64_t wanted = static_cast<std::uint64_t>(options_.latency_factor) *
                                     static_cast<std::uint64_t>(options_.min_wait.count()) *
                                     requests_;
        batching_ = supported_ && requests_ >= options_.min_requests &&
                    clients_ >= options_.min_clients && clients_x_elapsed_us >= wanted;
        window_start_ = now_ms;
        requests_ = clients_ = 0;
        ++window_id_;
    }

private:
    BatchWaitOptions options_;
    bool supported_;
    bool batching_ = false;
    std::uint32_t window_id_ = 1;  // clients start with stamp 0
    std::uint64_t window_start_ = 0;
    std::uint64_t requests_ = 0;
    std::uint32_t clients_ = 0;
};

}  // namespace uringkit
