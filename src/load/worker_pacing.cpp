// Sending: in the closed loop a connection's next request goes out when
// its previous response is in; in the open loop (--rate) each request has
// an intended time, is released when due, and its latency is counted from
// that time, so a slow server cannot hide its queueing (no coordinated
// omission).
#include "worker.hpp"

#include "uringkit/ops/ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace uringkit::load::detail {

std::uint64_t Worker::due_count(const Conn& c) const noexcept {
    if (now_ < thread_start_) return 0;
    const auto g =
        static_cast<std::uint64_t>(static_cast<double>(now_ - thread_start_) / interval_ns_);
    if (g < c.index) return 0;
    return (g - c.index) / conns_.size() + 1;
}

std::int64_t Worker::intended(const Conn& c, std::uint64_t k) const noexcept {
    const double slot = static_cast<double>(k) * static_cast<double>(conns_.size()) + c.index;
    return thread_start_ + static_cast<std::int64_t>(slot * interval_ns_);
}

void Worker::release_due() {
    if (now_ < thread_start_) return;
    const auto g =
        static_cast<std::uint64_t>(static_cast<double>(now_ - thread_start_) / interval_ns_);
    if (g < next_slot_) return;
    const std::size_t n = conns_.size();
    if (g - next_slot_ + 1 >= n) {
        for (Conn& c : conns_) try_send(c);
    } else {
        for (std::uint64_t s = next_slot_; s <= g; ++s) try_send(conns_[s % n]);
    }
    next_slot_ = g + 1;
}

void Worker::try_send(Conn& c) {
    if (c.state != Conn::State::Open || c.send_inflight || !measuring_ || now_ >= end_) return;
    const std::uint64_t outstanding = c.issued - c.answered;
    if (outstanding >= cfg_.pipeline) return;
    std::uint64_t count;
    if (!open_loop_) {
        // wrk's pipelining: the next write once every response of the last is in.
        if (outstanding > 0) return;
        count = cfg_.pipeline;
    } else {
        const std::uint64_t due = due_count(c);
        if (due <= c.issued) return;
        count = std::min<std::uint64_t>(due - c.issued, cfg_.pipeline - outstanding);
    }
    write(c, count);
}

void Worker::write(Conn& c, std::uint64_t count) {
    if (c.issued == c.answered)
        c.last_progress = now_;  // the timeout runs from the first request outstanding
    c.batch_start = now_;
    if (http_ && !shared_.requests.empty()) {
        // --paths: this write's requests, each for its own path (the
        // buffer keeps its capacity, so only the first writes allocate).
        c.out.clear();
        for (std::uint64_t i = 0; i < count; ++i) {
            const std::string& r = shared_.requests[path_of(c, c.issued + i)];
            c.out.insert(c.out.end(), r.begin(), r.end());
        }
        c.send_len = static_cast<std::uint32_t>(c.out.size());
    } else if (http_) {
        c.send_len = static_cast<std::uint32_t>(count * shared_.request.size());
    } else {
        for (std::uint64_t i = 0; i < count; ++i)
            echo_.fill(c.out.data() + i * echo_.size(), c.global, c.issued + i);
        c.send_len = static_cast<std::uint32_t>(count * echo_.size());
    }
    c.send_done = 0;
    c.issued += count;
    result_.sent += count;
    send_rest(c);
}

void Worker::send_rest(Conn& c) {
    const char* base = http_ && shared_.requests.empty() ? batch_.data() : c.out.data();
    sqe(op::Send(Fd{c.fd}, base + c.send_done, c.send_len - c.send_done, MSG_NOSIGNAL))
        .user_data(ud(&c, kSend));
    c.send_inflight = true;
}

void Worker::on_send(Conn& c, const Completion& cqe) {
    c.send_inflight = false;
    if (c.state != Conn::State::Open) {
        if (c.state == Conn::State::Closing) advance_close(c);
        return;
    }
    if (cqe.res <= 0) {
        fail(c, cqe.res == 0 ? ErrorKind::Reset : classify(-cqe.res),
             fmt::format("send: {}", cqe.res == 0 ? "wrote nothing" : std::strerror(-cqe.res)));
        return;
    }
    if (measuring_ && now_ < end_) result_.bytes_out += static_cast<std::uint64_t>(cqe.res);
    c.send_done += static_cast<std::uint32_t>(cqe.res);
    if (c.send_done < c.send_len) {
        send_rest(c);  // a short send: the rest, from where it stopped
        return;
    }
    try_send(c);
}

}  // namespace uringkit::load::detail
