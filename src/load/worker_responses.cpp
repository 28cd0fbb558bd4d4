// Reading and checking what the server sends back: HTTP responses through
// the response reader, echo replies against the bytes sent (EchoMessages),
// each complete one counted with its latency.
#include "worker.hpp"

#include "uringkit/ops/ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace uringkit::load::detail {

EchoMessages::EchoMessages(std::size_t size) : pattern_(size, '\0') {
    for (std::size_t i = 0; i < size; ++i) pattern_[i] = static_cast<char>('a' + i % 26);
}

void EchoMessages::stamp(char (&out)[16], std::uint32_t conn, std::uint64_t seq) noexcept {
    std::memcpy(out, &seq, 8);
    std::memcpy(out + 8, &conn, 4);
    std::memcpy(out + 12, "ukEc", 4);
}

void EchoMessages::fill(char* out, std::uint32_t conn, std::uint64_t seq) const noexcept {
    std::memcpy(out, pattern_.data(), pattern_.size());
    char s[16];
    stamp(s, conn, seq);
    std::memcpy(out, s, std::min<std::size_t>(16, pattern_.size()));
}

bool EchoMessages::matches(std::string_view bytes, std::size_t offset, std::uint32_t conn,
                           std::uint64_t seq) const noexcept {
    std::size_t h = 0;
    if (offset < 16) {
        char s[16];
        stamp(s, conn, seq);
        h = std::min(16 - offset, bytes.size());
        if (std::memcmp(bytes.data(), s + offset, h) != 0) return false;
    }
    return std::memcmp(bytes.data() + h, pattern_.data() + offset + h, bytes.size() - h) == 0;
}

void Worker::arm_recv(Conn& c) {
    sqe(op::Recv::provided(Fd{c.fd}, kGroup).multishot()).user_data(ud(&c, kRecv));
    c.recv_armed = true;
}

void Worker::on_recv(Conn& c, const Completion& cqe) {
    if (cqe.res > 0) {
        const BufferRing::Delivery d = bufs_->take(cqe);
        if (d.error) {  // the run ends after this batch (Worker::wait_once)
            sqes_.fail(d.error, "multishot recv named no valid buffer");
            return;
        }
        if (c.state == Conn::State::Open)
            on_bytes(c, {reinterpret_cast<const char*>(d.bytes.data()), d.bytes.size()});
        bufs_->recycle(d.id);
    } else if (cqe.res == -ENOBUFS && measuring_) {
        ++result_.enobufs;
    }
    if (cqe.more()) return;
    c.recv_armed = false;
    if (c.state == Conn::State::Open) {
        if (cqe.res > 0 || cqe.res == -ENOBUFS) {
            arm_recv(c);  // the group ran dry or the kernel ended it: the connection goes on
        } else if (cqe.res == 0) {
            if (c.issued > c.answered || c.reader.mid_response() || c.echo_at > 0) {
                fail(c, ErrorKind::Closed,
                     fmt::format("the server closed the connection {}",
                                 c.reader.mid_response() || c.echo_at > 0
                                     ? "in the middle of a response"
                                     : "with requests outstanding"));
            } else {
                begin_close(c);  // closed between requests: open another, no error
            }
        } else {
            fail(c, classify(-cqe.res), fmt::format("recv: {}", std::strerror(-cqe.res)));
        }
    } else if (c.state == Conn::State::Closing) {
        advance_close(c);
    }
}

void BodyCheck::on_body(const net::ResponseHead& head, std::string_view piece) noexcept {
    if (want == nullptr || head.status != 200) return;
    if (differs_at == ~0ULL) {
        const std::uint64_t have = want->size() > at ? want->size() - at : 0;
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(have, piece.size()));
        const auto [mine, theirs] = std::mismatch(piece.begin(), piece.begin() + n,
                                                  want->begin() + static_cast<std::ptrdiff_t>(at));
        if (mine != piece.begin() + n)
            differs_at = at + static_cast<std::uint64_t>(mine - piece.begin());
        else if (n < piece.size())
            differs_at = at + n;  // longer than the file
    }
    at += piece.size();
}

std::size_t Worker::path_of(const Conn& c, std::uint64_t k) const noexcept {
    const std::size_t n = cfg_.paths.size();
    if (!cfg_.random_paths) return static_cast<std::size_t>((c.global + k) % n);
    // splitmix64 of (connection, sequence): the sender and the checker of
    // request k compute the same path without keeping a queue.
    std::uint64_t x = (static_cast<std::uint64_t>(c.global) << 40) ^ k;
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<std::size_t>((x ^ (x >> 31)) % n);
}

bool Worker::verify_body(Conn& c, int status) {
    BodyCheck& k = c.check;
    if (status != 200 || k.want == nullptr || cfg_.method == "HEAD") return true;
    if (k.differs_at == ~0ULL && k.at == k.want->size()) return true;
    const std::string& path = cfg_.paths[path_of(c, c.answered)];
    fail(c, ErrorKind::BadResponse,
         k.differs_at < k.at
             ? fmt::format("{}: the body differs from the file at byte {}", path, k.differs_at)
             : fmt::format("{}: a body of {} bytes where the file has {}", path, k.at,
                           k.want->size()));
    return false;
}

void Worker::on_bytes(Conn& c, std::string_view bytes) {
    c.last_progress = now_;
    if (measuring_ && now_ < end_) result_.bytes_in += bytes.size();
    if (http_) {
        while (!bytes.empty()) {
            if (!cfg_.expected.empty() && !c.reader.mid_response()) {
                // A response starts: it answers request c.answered.
                c.check.want = &cfg_.expected[path_of(c, c.answered)];
                c.check.at = 0;
                c.check.differs_at = ~0ULL;
            }
            const auto st = c.reader.next(bytes);
            if (st == net::ResponseReader::Status::NeedMore) break;
            if (st == net::ResponseReader::Status::Bad) {
                fail(c, ErrorKind::BadResponse, c.reader.error());
                return;
            }
            const net::ResponseHead& h = c.reader.head();
            if (h.status < 200) continue;  // interim (100 Continue, 103 Early Hints)
            if (c.answered >= c.issued) {
                fail(c, ErrorKind::BadResponse,
                     "a response to no request (more responses than requests)");
                return;
            }
            if (!cfg_.expected.empty() && !verify_body(c, h.status)) return;
            complete_response(c, h.status);
            if (h.close) {
                // The server closes after this response: what is still
                // outstanding will never be answered.
                if (c.answered < c.issued || !bytes.empty())
                    fail(c, ErrorKind::Closed, "Connection: close with requests outstanding");
                else
                    begin_close(c);
                return;
            }
        }
    } else {
        const std::size_t size = echo_.size();
        while (!bytes.empty()) {
            if (c.answered >= c.issued) {
                fail(c, ErrorKind::BadResponse, "more bytes echoed than were sent");
                return;
            }
            const std::size_t n = std::min(size - c.echo_at, bytes.size());
            if (!echo_.matches(bytes.substr(0, n), c.echo_at, c.global, c.answered)) {
                fail(c, ErrorKind::BadResponse, "echoed bytes differ from those sent");
                return;
            }
            c.echo_at += n;
            bytes.remove_prefix(n);
            if (c.echo_at == size) {
                c.echo_at = 0;
                complete_response(c, 200);
            }
        }
    }
    try_send(c);
}

void Worker::complete_response(Conn& c, int status) {
    const std::uint64_t k = c.answered++;
    if (!measuring_ || now_ >= end_) return;
    const std::int64_t from = open_loop_ ? intended(c, k) : c.batch_start;
    result_.latency.record(static_cast<std::uint64_t>(std::max<std::int64_t>(now_ - from, 0)));
    ++result_.requests;
    ++c.measured_responses;
    live_.requests.add();
    if (status < 200 || status > 299) ++result_.non_2xx;
}

}  // namespace uringkit::load::detail
