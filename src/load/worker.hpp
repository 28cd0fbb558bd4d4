// One thread of `uringkit load`: its ring, its provided buffer ring and its
// share of the connections (internal to src/load).
#pragma once

#include "load/load.hpp"
#include "measure/histogram.hpp"
#include "net/http_response.hpp"
#include "net/stats.hpp"
#include "uringkit/ring/buffer_ring.hpp"
#include "uringkit/ring/hand_loop.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/error.hpp"

#include <linux/time_types.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <latch>
#include <memory>
#include <string>
#include <vector>

namespace uringkit::load::detail {

// Monotonic nanoseconds (a vDSO read, no system call).
std::int64_t now_ns() noexcept;

// The provided-buffer group every connection's recv draws from.
constexpr std::uint16_t kGroup = 0;

// A connection that failed with errno `err`: a timeout, or else a reset.
inline ErrorKind classify(int err) noexcept {
    return err == ETIMEDOUT ? ErrorKind::Timeout : ErrorKind::Reset;
}

// What run_load shares with its threads.  The start and end times are
// written before `phase` moves to kRun with a release store.
struct Shared {
    const LoadConfig* config = nullptr;
    std::string request;                // one HTTP request, the same bytes for every connection
    std::vector<std::string> requests;  // with LoadConfig::paths: the request of each path
    std::latch* ready = nullptr;        // each thread: its connections are set up
    std::latch* measured = nullptr;     // each thread: past the end, counters frozen
    std::atomic<int> phase{0};          // kWait, kRun, kCleanup
    std::int64_t start_ns = 0, end_ns = 0;
    const std::atomic<bool>* stop = nullptr;  // the user's (SIGINT/SIGTERM)
    std::atomic<bool> abort{false};           // another thread failed: end the run
    static constexpr int kWait = 0, kRun = 1, kCleanup = 2;
};

// Read by the progress line while the thread runs.
struct alignas(64) LiveCounters {
    net::Counter requests, errors;
};

// The message of echo mode: a 16-byte stamp (sequence number, connection
// number, a constant) and a pattern, so a reply that belongs to another
// message or connection, or is corrupted, does not compare equal.
class EchoMessages {
public:
    explicit EchoMessages(std::size_t size);
    void fill(char* out, std::uint32_t conn, std::uint64_t seq) const noexcept;
    // Whether `bytes` equal the bytes at [offset, offset + bytes.size()) of the message.
    bool matches(std::string_view bytes, std::size_t offset, std::uint32_t conn,
                 std::uint64_t seq) const noexcept;
    std::size_t size() const noexcept { return pattern_.size(); }

private:
    static void stamp(char (&out)[16], std::uint32_t conn, std::uint64_t seq) noexcept;
    std::string pattern_;
};

// --verify: compares the body of the response being read with the file its
// request named, piece by piece as the reader passes over it.
struct BodyCheck final : net::BodySink {
    const std::string* want = nullptr;  // the file's bytes; null: this body is not compared
    std::uint64_t at = 0;               // body bytes seen
    std::uint64_t differs_at = ~0ULL;   // the first byte that differs
    void on_body(const net::ResponseHead& head, std::string_view piece) noexcept override;
};

struct Conn {
    unsigned index = 0;        // within the thread: its turn in the open loop
    std::uint32_t global = 0;  // connection number in the whole run
    int fd = -1;
    enum class State : std::uint8_t { Down, Connecting, Open, Closing } state = State::Down;
    bool recv_armed = false, send_inflight = false, connect_inflight = false,
         close_inflight = false;
    bool cancelled = false;      // cancels sent for this close
    bool retry_slow = false;     // after a connect error: wait before connecting again
    std::uint64_t issued = 0;    // requests written
    std::uint64_t answered = 0;  // responses completed (or lost with a connection)
    std::uint32_t send_len = 0, send_done = 0;
    std::int64_t batch_start = 0;    // closed loop: when the outstanding batch was written
    std::int64_t last_progress = 0;  // the last time bytes arrived or requests were written
    std::int64_t retry_at = 0;
    std::size_t echo_at = 0;  // echo: bytes of the current reply seen
    std::uint64_t measured_responses = 0;
    net::ResponseReader reader;
    std::vector<char> out;  // echo, and http with paths: the bytes of the send in flight
    BodyCheck check;
};

struct WorkerResult {
    std::uint64_t requests = 0, sent = 0, non_2xx = 0, reconnects = 0, bytes_in = 0, bytes_out = 0;
    std::uint64_t syscalls = 0, enobufs = 0, late = 0;
    std::uint64_t errors[static_cast<int>(ErrorKind::kCount)] = {};
    std::int64_t end_ns = 0;
    std::vector<std::uint64_t> per_connection;
    std::string first_error;
    measure::LatencyHistogram latency;
};

class Worker {
public:
    Worker(Shared& shared, unsigned thread, unsigned threads, LiveCounters& live);
    ~Worker();
    // The whole life of the thread: connect, wait for the start, run until
    // the end, freeze the counters, wait for the cleanup, close everything
    // and reap every final completion.
    void run();
    WorkerResult& result() noexcept { return result_; }

private:
    enum : std::uint64_t { kConnect = 1, kRecv = 2, kSend = 3, kClose = 4 };
    using ConnUd = TaggedUserData<Conn>;  // a Conn and the operation; 0: nobody waits
    static std::uint64_t ud(Conn* c, std::uint64_t tag) noexcept { return ConnUd::make(c, tag); }

    void setup();
    void loop();
    void drain();
    void release() noexcept;
    // The kernel still holds requests naming the connections' memory: keep
    // it, the buffer ring and the ring for the life of the process.
    void keep_for_kernel_in_flight() noexcept;
    void wait_once(std::int64_t deadline);
    void dispatch(const Completion& c);

    void connect(Conn& c);
    void on_connect(Conn& c, const Completion& cqe);
    void arm_recv(Conn& c);
    void on_recv(Conn& c, const Completion& cqe);
    void on_bytes(Conn& c, std::string_view bytes);
    void on_send(Conn& c, const Completion& cqe);
    void on_close(Conn& c);
    void try_send(Conn& c);
    void write(Conn& c, std::uint64_t count);
    void send_rest(Conn& c);
    void complete_response(Conn& c, int status);
    // --paths: the index of the path of request `k` of connection `c`.
    std::size_t path_of(const Conn& c, std::uint64_t k) const noexcept;
    // --verify: false (the connection failed) when the response just read
    // differs from the file its request named.
    bool verify_body(Conn& c, int status);
    void count_error(Conn& c, ErrorKind kind, std::string_view why);
    void fail(Conn& c, ErrorKind kind, std::string_view why);
    void begin_close(Conn& c);
    void cancel(std::uint64_t target);
    void advance_close(Conn& c);
    void housekeeping();
    void release_due();
    std::uint64_t due_count(const Conn& c) const noexcept;
    std::int64_t intended(const Conn& c, std::uint64_t k) const noexcept;
    template <class Op>
    Sqe sqe(const Op& op);

    Shared& shared_;
    const LoadConfig& cfg_;
    unsigned thread_;
    LiveCounters& live_;
    bool http_;
    bool open_loop_;
    EchoMessages echo_;
    std::string batch_;  // http: `pipeline` requests back to back
    WorkerResult result_;
    // Memory the kernel may point to (connections, their send buffers, the
    // link timeout of connects) is declared before the rings, so it outlives them.
    __kernel_timespec connect_timeout_{};
    std::vector<Conn> conns_;
    std::unique_ptr<Ring> ring_;
    std::unique_ptr<BufferRing> bufs_;
    std::int64_t now_ = 0;
    std::int64_t start_ = 0, end_ = 0, thread_start_ = 0;
    double interval_ns_ = 0;       // open loop: between this thread's requests
    std::uint64_t next_slot_ = 0;  // open loop: the first request slot not released yet
    std::int64_t next_housekeeping_ = 0;
    bool measuring_ = false;
    bool stopping_ = false;
    std::size_t aux_inflight_ = 0;      // cancels and link timeouts not completed yet
    std::uint64_t extra_syscalls_ = 0;  // socket(), setsockopt(): not through the ring
    std::uint64_t syscalls_at_start_ = 0;
    SqeSupply sqes_;  // bound to ring_ in setup()
};

// A free SQE; when the SQ is full the prepared ones go to the kernel first,
// and a kernel that takes none of them ends the run with its error after
// the batch (wait_once), as serve's engine does, instead of retrying
// blindly or throwing from a completion handler (ring/hand_loop.hpp).
template <class Op>
Sqe Worker::sqe(const Op& op) {
    return sqes_.prepare(op);
}

}  // namespace uringkit::load::detail
