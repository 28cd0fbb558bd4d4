// The event loop of one `uringkit load` thread.  Every SQE prepared while
// handling a batch of completions goes to the kernel in the io_uring_enter
// that waits for the next batch (or for the next request due, in the open
// loop), so a busy thread makes about one system call per batch.
#include "worker.hpp"

#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/kernel_owned.hpp"
#include "uringkit/sys/error.hpp"

#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace uringkit::load::detail {
namespace {

constexpr std::uint32_t kBufferSize = 8192;
constexpr std::int64_t kMs = 1'000'000;
// After a failed connect, wait this long before the next try, so a server
// that is down costs a few attempts per second, not a busy loop.
constexpr std::int64_t kConnectRetryNs = 100 * kMs;

unsigned next_pow2(unsigned v) noexcept {
    unsigned p = 1;
    while (p < v) p <<= 1;
    return p;
}

}  // namespace

std::int64_t now_ns() noexcept {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

Worker::Worker(Shared& shared, unsigned thread, unsigned threads, LiveCounters& live)
    : shared_(shared),
      cfg_(*shared.config),
      thread_(thread),
      live_(live),
      http_(cfg_.mode == Mode::Http),
      open_loop_(cfg_.rate > 0),
      echo_(http_ ? 0 : cfg_.size) {
    const unsigned n = connections_of_thread(cfg_.connections, threads, thread);
    conns_.resize(n);
    for (unsigned i = 0; i < n; ++i) {
        conns_[i].index = i;
        conns_[i].global = thread + i * threads;
        if (!http_) conns_[i].out.resize(cfg_.pipeline * cfg_.size);
        conns_[i].reader.set_head_requests(http_ && cfg_.method == "HEAD");
        if (!cfg_.expected.empty()) conns_[i].reader.set_body_sink(&conns_[i].check);
    }
    if (http_)
        for (unsigned i = 0; i < cfg_.pipeline; ++i) batch_ += shared.request;
    result_.per_connection.assign(n, 0);
    connect_timeout_.tv_sec = cfg_.timeout.count() / 1'000'000'000;
    connect_timeout_.tv_nsec = cfg_.timeout.count() % 1'000'000'000;
}

Worker::~Worker() = default;

void Worker::run() {
    bool ready = false, measured = false;
    try {
        setup();
        shared_.ready->count_down();
        ready = true;
        shared_.phase.wait(Shared::kWait, std::memory_order_acquire);
        if (shared_.phase.load(std::memory_order_acquire) == Shared::kRun) loop();
        shared_.measured->count_down();
        measured = true;
        for (int p; (p = shared_.phase.load(std::memory_order_acquire)) != Shared::kCleanup;)
            shared_.phase.wait(p, std::memory_order_acquire);
        drain();
        release();
    } catch (...) {
        if (!ready) shared_.ready->count_down();
        if (!measured) shared_.measured->count_down();
        try {
            drain();
            release();
        } catch (...) {
        }
        throw;
    }
}

void Worker::release() noexcept {
    // On this thread: with SINGLE_ISSUER only the ring's own thread may
    // unregister the buffer ring, and the registered ring fd is in its table.
    bufs_.reset();
    ring_.reset();
}

void Worker::setup() {
    const unsigned n = static_cast<unsigned>(conns_.size());
    const unsigned entries = std::clamp(next_pow2(2 * n + 16), 64u, 4096u);
    ring_ = std::make_unique<Ring>(Ring::create(entries, single_thread_options(entries * 8)));
    sqes_ = SqeSupply(*ring_);
    bufs_ = std::make_unique<BufferRing>(*ring_, kGroup, std::clamp(next_pow2(2 * n), 256u, 4096u),
                                         kBufferSize);
    now_ = now_ns();
    for (Conn& c : conns_) connect(c);
    // Every connect ends by its link timeout at the latest.
    while (std::any_of(conns_.begin(), conns_.end(),
                       [](const Conn& c) { return c.state == Conn::State::Connecting; }))
        wait_once(now_ + 100 * kMs);
}

void Worker::loop() {
    start_ = shared_.start_ns;
    end_ = shared_.end_ns;
    const unsigned n = static_cast<unsigned>(conns_.size());
    if (open_loop_) {
        // This thread's share of the rate, its requests taking turns over
        // its connections; threads start a global interval apart.
        const double thread_rate = cfg_.rate * n / cfg_.connections;
        interval_ns_ = 1e9 / thread_rate;
        thread_start_ = start_ + static_cast<std::int64_t>(1e9 / cfg_.rate * thread_);
    }
    measuring_ = true;
    syscalls_at_start_ = ring_->enter_calls() + extra_syscalls_;
    now_ = now_ns();
    next_housekeeping_ = now_;
    for (Conn& c : conns_) {
        c.last_progress = now_;
        try_send(c);
    }
    const std::int64_t tick = std::clamp<std::int64_t>(cfg_.timeout.count() / 4, kMs, 50 * kMs);
    for (;;) {
        if ((shared_.stop && shared_.stop->load(std::memory_order_relaxed)) ||
            shared_.abort.load(std::memory_order_relaxed))
            end_ = std::min(end_, now_);
        if (now_ >= end_) break;
        if (now_ >= next_housekeeping_) {
            housekeeping();
            next_housekeeping_ = now_ + tick;
        }
        std::int64_t deadline = std::min(end_, next_housekeeping_);
        if (open_loop_) {
            release_due();
            deadline = std::min(
                deadline, thread_start_ + static_cast<std::int64_t>(
                                              static_cast<double>(next_slot_) * interval_ns_));
        }
        wait_once(deadline);
    }
    measuring_ = false;
    result_.end_ns = end_;
    result_.syscalls = ring_->enter_calls() + extra_syscalls_ - syscalls_at_start_;
    for (Conn& c : conns_) {
        result_.per_connection[c.index] = c.measured_responses;
        if (open_loop_) {
            now_ = end_ - 1;
            const std::uint64_t due = due_count(c);
            if (due > c.issued) result_.late += due - c.issued;
        }
    }
}

void Worker::wait_once(std::int64_t deadline) {
    const std::int64_t wait = deadline - now_;
    int r;
    if (wait <= 0)
        r = ring_->submit();
    else
        r = ring_->submit_and_wait_for(1, std::chrono::nanoseconds(wait));
    check_enter(r);
    now_ = now_ns();
    ring_->for_each_completion([this](const Completion& c) { dispatch(c); });
    sqes_.check();  // a handler's failure ends the run here, outside the handlers
}

void Worker::dispatch(const Completion& cqe) {
    if (cqe.user_data == 0) {  // a cancel or a connect's link timeout
        --aux_inflight_;
        return;
    }
    Conn& c = *ConnUd::object(cqe.user_data);
    switch (ConnUd::tag(cqe.user_data)) {
        case kConnect:
            on_connect(c, cqe);
            break;
        case kRecv:
            on_recv(c, cqe);
            break;
        case kSend:
            on_send(c, cqe);
            break;
        case kClose:
            on_close(c);
            break;
        default:
            break;
    }
}

void Worker::connect(Conn& c) {
    const Target& t = cfg_.target;
    const int fd = ::socket(t.address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ++extra_syscalls_;
    if (fd < 0) {
        count_error(c, ErrorKind::Connect, fmt::format("socket: {}", std::strerror(errno)));
        c.retry_at = now_ + kConnectRetryNs;
        return;
    }
    // The connect and its timeout are one chain: both must fit in this
    // submit.  No room: the run ends with the kernel's error after this batch.
    if (!sqes_.reserve(2)) {
        ::close(fd);
        return;
    }
    // As wrk: small requests leave at once instead of waiting for Nagle.
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ++extra_syscalls_;
    c.fd = fd;
    c.state = Conn::State::Connecting;
    c.connect_inflight = true;
    ring_
        ->prepare(op::Connect(Fd{fd}, reinterpret_cast<const sockaddr*>(&t.address), t.address_len))
        .user_data(ud(&c, kConnect))
        .link();
    ring_->prepare(op::LinkTimeout(&connect_timeout_)).user_data(std::uint64_t{0});
    ++aux_inflight_;
}

void Worker::on_connect(Conn& c, const Completion& cqe) {
    c.connect_inflight = false;
    if (c.state == Conn::State::Closing) {
        advance_close(c);
        return;
    }
    if (cqe.res < 0) {
        c.retry_slow = true;
        fail(c, ErrorKind::Connect,
             cqe.res == -ECANCELED ? std::string("connect timed out")
                                   : fmt::format("connect: {}", std::strerror(-cqe.res)));
        return;
    }
    c.state = Conn::State::Open;
    c.reader.reset();
    c.echo_at = 0;
    c.answered = c.issued;
    c.last_progress = now_;
    arm_recv(c);
    try_send(c);
}

void Worker::count_error(Conn& c, ErrorKind kind, std::string_view why) {
    // Errors while the run is set up or measured; not those of the closing.
    if (stopping_ || (measuring_ && now_ >= end_) || (!measuring_ && result_.end_ns != 0)) return;
    ++result_.errors[static_cast<int>(kind)];
    live_.errors.add();
    if (result_.first_error.empty())
        result_.first_error =
            fmt::format("{} (connection {}): {}", error_name(kind), c.global, why);
}

void Worker::fail(Conn& c, ErrorKind kind, std::string_view why) {
    if (c.state == Conn::State::Closing || c.state == Conn::State::Down)
        return;  // one error per connection
    count_error(c, kind, why);
    begin_close(c);
}

void Worker::begin_close(Conn& c) {
    c.state = Conn::State::Closing;
    if (!c.cancelled) {
        // The recv holds a reference to the socket: a close alone would not
        // end it, so cancel it (and any send or connect) and close after
        // their final completions.
        if (c.recv_armed) cancel(ud(&c, kRecv));
        if (c.send_inflight) cancel(ud(&c, kSend));
        if (c.connect_inflight) cancel(ud(&c, kConnect));
        c.cancelled = true;
    }
    advance_close(c);
}

void Worker::cancel(std::uint64_t target) {
    sqe(op::AsyncCancel(target)).user_data(std::uint64_t{0});
    ++aux_inflight_;
}

void Worker::advance_close(Conn& c) {
    if (c.recv_armed || c.send_inflight || c.connect_inflight || c.close_inflight) return;
    if (c.fd >= 0) {
        sqe(op::Close(Fd{c.fd})).user_data(ud(&c, kClose));
        c.close_inflight = true;
        c.fd = -1;
        return;
    }
    on_close(c);
}

void Worker::on_close(Conn& c) {
    c.close_inflight = false;
    c.cancelled = false;
    c.state = Conn::State::Down;
    c.answered = c.issued;  // what was outstanding is lost with the connection
    c.reader.reset();
    c.echo_at = 0;
    if (stopping_) return;
    c.retry_at = c.retry_slow ? now_ + kConnectRetryNs : now_;
    c.retry_slow = false;
    if (c.retry_at > now_) return;  // housekeeping connects it again
    if (measuring_ && now_ < end_) ++result_.reconnects;
    connect(c);
}

void Worker::housekeeping() {
    for (Conn& c : conns_) {
        if (c.state == Conn::State::Open && c.issued > c.answered &&
            now_ - c.last_progress > cfg_.timeout.count()) {
            fail(c, ErrorKind::Timeout,
                 fmt::format("no response for {} ms", cfg_.timeout.count() / kMs));
        } else if (c.state == Conn::State::Down && now_ >= c.retry_at) {
            if (measuring_) ++result_.reconnects;
            connect(c);
        }
    }
}

void Worker::keep_for_kernel_in_flight() noexcept {
    // Moving the vector keeps its elements where they are: the kernel's
    // pointers into them stay valid, and nothing here frees them.
    keep_for_kernel(new std::vector<Conn>(std::move(conns_)));
    keep_for_kernel(bufs_.release());
    keep_for_kernel(ring_.release());
}

void Worker::drain() {
    if (!ring_) return;
    stopping_ = true;
    measuring_ = false;
    now_ = now_ns();
    for (Conn& c : conns_)
        if (c.state == Conn::State::Open || c.state == Conn::State::Connecting) begin_close(c);
    // Every operation that names a connection's memory ends before it is
    // freed.  Cancelled operations end promptly; a kernel that left one
    // pending for seconds is reported instead of waited on for ever.
    std::int64_t last_progress = now_;
    auto pending = [this] {
        std::size_t n = aux_inflight_;
        for (const Conn& c : conns_) n += c.state != Conn::State::Down;
        return n;
    };
    for (std::size_t left = pending(); left > 0;) {
        wait_once(now_ + 100 * kMs);
        const std::size_t now_left = pending();
        if (now_left < left)
            last_progress = now_;
        else if (now_ - last_progress > 5000 * kMs) {
            keep_for_kernel_in_flight();
            throw std::runtime_error(fmt::format(
                "{} operations still pending 5 s after their cancel (their memory is kept)",
                now_left));
        }
        left = now_left;
    }
}

}  // namespace uringkit::load::detail
