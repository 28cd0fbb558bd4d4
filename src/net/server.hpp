// `uringkit serve` as a library: an HTTP/1.1 (or TCP echo) server with one
// engine thread per --threads, each with its own ring (or epoll set), all
// accepting on one listening socket (no SO_REUSEPORT, so no other process can
// join the port).  Engines:
//   uring       hand-written completion handlers: multishot accept, multishot
//               recv into a provided buffer ring, sends batched into the next
//               io_uring_enter.
//   uring-coro  the same operations written as one coroutine per connection on
//               uringkit::async (kept for the coroutine-vs-callback measurement).
//   epoll       edge-triggered, non-blocking twin with the same Session code.
#pragma once

#include "net/session.hpp"
#include "net/stats.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace uringkit::net {

enum class EngineKind : std::uint8_t { Uring, UringCoro, Epoll };
std::string_view engine_name(EngineKind e) noexcept;
std::optional<EngineKind> parse_engine(
    std::string_view name) noexcept;  // "uring", "uring-coro", "epoll"

// serve --file-io: where the uring engine's file operations are made.
// Measured in bench/results/serve_files.md (docs/serve.md says which wins).
enum class FileIo : std::uint8_t {
    Calls,  // openat2, statx, pread and close from the engine thread, like epoll
    Ring,   // OPENAT2, READ and CLOSE on the ring; statx(2) on the opened descriptor
    // STATX on the ring too: the kernel hands every STATX to an io-wq
    // worker, a thread switch per request
    RingStatx
};

// serve --body-path: how a file's body reaches the socket.
enum class BodyPath : std::uint8_t {
    // Measured per size (bench/results/serve_files.md): bodies under
    // ServerConfig::body_send_from are read; larger ones sendfile (epoll)
    // or splice (uring with its files on the ring); the others always read.
    Auto,
    Read,      // read into the connection's output and sent with its head
    Sendfile,  // epoll engine only: sendfile(2) from the page cache, no user-space copy
    // uring engine with --file-io ring only: SPLICE file -> pipe -> socket
    // on the ring, no user-space copy (the kernel hands each to io-wq)
    Splice,
};

struct ServerConfig {
    Mode mode = Mode::Http;
    EngineKind engine = EngineKind::Uring;
    unsigned threads = 1;
    // An IPv4 or IPv6 address, or a host name: its first address from
    // getaddrinfo (the one clients resolving the name try first).
    std::string bind = "127.0.0.1";
    std::uint16_t port = 8080;   // 0: an ephemeral port (see Server::port())
    unsigned max_conns = 10000;  // for the whole server, shared evenly by the threads
    std::chrono::milliseconds idle_timeout{60000};
    // Output one connection may have waiting to be sent: at this much it
    // stops reading its socket (its requests wait in the kernel, and TCP
    // slows the client) until the client has taken half of it.  The server
    // holds at most max_conns × (max_pending + one response) of output.
    // At least 1.
    std::size_t max_pending = 256 * 1024;
    // A connection with output waiting and none of it taken for this long
    // is closed (nginx's send_timeout), so a client that never reads holds
    // its max_pending and its slot for this long, not forever.
    std::chrono::milliseconds send_timeout{60000};
    std::size_t body_size = 128;
    // HTTP only: answer GET and HEAD with the files beneath this directory
    // (file_response.hpp) instead of the fixed body.  Empty: the fixed body.
    std::string root;
    ResolveOptions resolve;                      // how request paths are resolved beneath it
    std::string mime_types = "/etc/mime.types";  // extension -> Content-Type (media-types)
    // uring engine only: how it opens, stats, reads and closes the files.
    FileIo file_io = FileIo::Ring;
    BodyPath body_path = BodyPath::Auto;
    // BodyPath::Auto's threshold: reading is cheaper at 16 KiB, the kernel's
    // paths from 64 KiB (docs/serve.md).
    std::uint64_t body_send_from = 64 * 1024;
    HttpLimits limits;
    int backlog = 4096;
    // uring engines
    unsigned ring_entries = 1024;
    unsigned buffer_count = 2048;  // provided buffers per thread (a power of two)
    std::uint32_t buffer_size = 4096;
    bool defer_taskrun = true;  // SINGLE_ISSUER|DEFER_TASKRUN where the kernel has them
    // uring engine only: recv bundles (Linux 6.10): one completion may fill
    // several provided buffers.  Check recv_bundle_unavailable_reason() first.
    bool recv_bundle = false;
    // uring engine only: an incremental buffer ring (Linux 6.12): a buffer
    // takes arrivals until it is full, so large buffers (buffer_size) cost
    // no memory for small messages.  Check recv_incremental_unavailable_reason().
    bool recv_incremental = false;
    // While many clients each already wait long for their turn, let
    // completions gather for up to this long per io_uring_enter
    // (async/batch_wait.hpp decides when; Linux 6.12).  0: never.
    std::chrono::microseconds batch_wait{20};
    // After SIGINT/SIGTERM, connections still sending get this long to finish.
    std::chrono::milliseconds grace{5000};
};

// "127.0.0.1:8080", "[::1]:8080": an address and port as URLs and logs write them.
std::string endpoint_name(const std::string& address, std::uint16_t port);

// Why the uring engines cannot run here (io_uring disabled, too old for
// multishot recv or buffer rings), or empty when they can.
std::string uring_unavailable_reason();
// Why ServerConfig::recv_bundle cannot be used here (no io_uring for the
// uring engine, or a kernel without IORING_FEAT_RECVSEND_BUNDLE), or empty.
std::string recv_bundle_unavailable_reason();
// recv_incremental on, with the buffers it is meant for: 128 of 64 KiB (the
// same 8 MiB as the default 2048 of 4 KiB), so a 64 KiB message fills one.
inline void use_recv_incremental(ServerConfig& c) noexcept {
    c.recv_incremental = true;
    c.buffer_count = 128;
    c.buffer_size = 64 * 1024;
}

// Why ServerConfig::recv_incremental cannot be used here, or empty.
std::string recv_incremental_unavailable_reason();
// Whether this kernel has the batching wait that ServerConfig::batch_wait uses.
bool batch_wait_available();

class Server {
public:
    // Creates, binds and listens on the socket every thread accepts from
    // (throws std::system_error naming the address on failure: EADDRINUSE
    // when another socket listens on the port).  No thread runs yet.
    explicit Server(ServerConfig config);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    std::uint16_t port() const noexcept { return port_; }
    // The address listened on, numeric ("127.0.0.1", "::1"): config().bind,
    // or the first address its host name resolved to.
    const std::string& address() const noexcept { return address_; }
    const ServerConfig& config() const noexcept { return config_; }

    // Starts the engine threads.
    void start();
    // Asks every thread to stop accepting, finish what it is sending and
    // close everything.  Any thread; returns at once.
    void stop() noexcept;
    // Joins the threads; rethrows the first error a thread died of.
    void wait();
    // A thread ended (after stop(), or on an error): the caller should wait().
    bool finished() const noexcept { return finished_.load(std::memory_order_acquire) > 0; }

    StatsSnapshot stats() const noexcept { return StatsSnapshot::sum(*stats_); }
    std::string stats_json() const;

private:
    ServerConfig config_;
    std::uint16_t port_ = 0;
    std::string address_;
    int listener_ = -1;          // shared by every engine thread
    std::vector<int> wake_fds_;  // eventfds: written by stop()
    std::unique_ptr<std::vector<ServerStats>> stats_;
    std::unique_ptr<StaticRoot> root_;  // --root, opened once; null without it
    std::vector<std::thread> threads_;
    std::mutex error_mutex_;
    std::exception_ptr error_;
    std::atomic<unsigned> finished_{0};
};

}  // namespace uringkit::net
