// The io_uring engine written on uringkit::async: one coroutine per
// connection, reading like blocking code.  The same operations as the
// hand-written engine (multishot accept, one multishot recv per connection
// into a provided buffer ring, sends batched into the next enter), so the
// two measure what the coroutine layer costs.
#include "engine.hpp"
#include "uringkit/async/loop.hpp"
#include "uringkit/async/streams.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/buffer_ring.hpp"
#include "uringkit/ring/ring.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

namespace uringkit::net::detail {
namespace {

constexpr std::uint16_t kGroup = 0;

struct Conn {
    int fd = -1;
    std::uint32_t window = 0;  // BatchWait's window of its last request
    DeadlineHook<Conn> idle;   // on the engine's idle list
    DeadlineHook<Conn> stall;  // on the stalled-output list: output was waiting when put there
    bool cancelled = false;
    async::RecvStream* in = nullptr;  // for a stop to end its input; null once past it
    async::SendStream* out =
        nullptr;                   // for the ticker to see its output move; set while on `stall`
    std::uint64_t sent_taken = 0;  // bytes taken from out->take_sent()
    std::uint64_t sent_seen = 0;   // sent_taken + out->sent() when put on `stall`
    std::size_t counted = 0;       // its output not sent yet, as last added to stats_.pending
};

class CoroEngine {
public:
    explicit CoroEngine(WorkerContext& ctx)
        : ctx_(ctx),
          cfg_(*ctx.config),
          stats_(*ctx.stats),
          ring_(Ring::create(cfg_.ring_entries, options(cfg_))),
          bufs_(ring_, kGroup, cfg_.buffer_count, cfg_.buffer_size),
          wait_(ring_, batch_wait_options(cfg_)),
          cap_{cfg_.max_pending},
          send_timeout_(static_cast<std::uint64_t>(cfg_.send_timeout.count())),
          loop_(ring_),
          accepts_(loop_, Fd{ctx.listen_fd}) {
        loop_.set_wait(&wait_);
    }

    void run() {
        now_ = now_ms();
        loop_.spawn(acceptor());
        loop_.spawn(ticker());
        loop_.spawn(stopper());
        std::uint64_t counted = 0;
        while (loop_.live_tasks() > 0) {
            if (wait_.batching()) stats_.batch_waits.add();
            loop_.run_once();
            now_ = now_ms();
            wait_.tick(now_);
            const std::uint64_t calls = ring_.enter_calls();
            stats_.syscalls.add(calls - counted);
            counted = calls;
        }
    }

private:
    static RingOptions options(const ServerConfig& c) {
        RingOptions o;
        o.cq_entries = c.ring_entries * 8;
        // Ring::create drops both where the kernel refuses them (before 6.0/6.1).
        o.single_issuer = o.defer_taskrun = c.defer_taskrun;
        o.register_ring_fd = true;
        return o;
    }

    async::Task<void> acceptor() {
        accepts_.arm();
        while (!stopping_) {
            const async::Result c = co_await accepts_.next();
            if (c.res >= 0) {
                stats_.accepted.add();
                if (stopping_ || conns_ >= ctx_.max_conns) {
                    stats_.rejected.add();
                    co_await loop_.close(Fd{c.res});
                } else {
                    loop_.spawn(connection(c.res));
                }
            }
            if (c.more() || stopping_) continue;
            if (c.res < 0 && c.res != -ECANCELED) {
                stats_.accept_backoffs.add();  // EMFILE...: pause instead of spinning
                co_await loop_.sleep(std::chrono::milliseconds(50));
            }
            if (!stopping_) accepts_.arm();
        }
        // The cancelled accept's last CQEs: connections it accepted before
        // the cancel took effect are closed, not dropped with their fds.
        while (accepts_.armed()) {
            const async::Result c = co_await accepts_.next();
            if (c.res >= 0) {
                stats_.accepted.add();
                stats_.rejected.add();
                co_await loop_.close(Fd{c.res});
            }
        }
    }

    async::Task<void> ticker() {
        __kernel_timespec tick{};
        tick.tv_sec = static_cast<long long>(tick_ms(cfg_) / 1000);
        tick.tv_nsec = static_cast<long long>(tick_ms(cfg_) % 1000) * 1000000;
        while (!(stopping_ && conns_ == 0)) {
            auto sleep = loop_.submit(op::Timeout(&tick));
            ticker_sleep_ = &sleep;
            co_await sleep;
            ticker_sleep_ = nullptr;
            now_ = now_ms();
            idle_.expire(now_, stopping_ && now_ >= grace_deadline_, [this](Conn* c, bool expired) {
                if (expired) stats_.idle_closed.add();
                cancel(c);
            });
            // The coroutine cannot see its sends complete while it waits, so
            // the ticker looks: a connection whose output is still waiting
            // and took no byte since it was put on the list is closed
            // (--send-timeout); one whose output moved goes back on.
            stall_.expire(now_, false, [this](Conn* c, bool) {
                if (c->out->backlog() == 0) return;  // drained: back on once it has output again
                const std::uint64_t sent = c->sent_taken + c->out->sent();
                if (sent != c->sent_seen) {
                    c->sent_seen = sent;
                    stall_.push_back(c, now_ + send_timeout_);
                } else if (!c->cancelled) {
                    stats_.send_timeouts.add();
                    cancel(c);
                }
            });
        }
    }

    async::Task<void> stopper() {
        co_await loop_.submit(op::PollAdd(Fd{ctx_.wake_fd}, POLLIN));
        stopping_ = true;
        grace_deadline_ = now_ + static_cast<std::uint64_t>(cfg_.grace.count());
        accepts_.cancel();
        // Every connection's input ends (a half-received request is dropped);
        // each finishes sending what was asked, then closes.  The ticker
        // cancels its send if the grace period runs out first.
        idle_.for_each([](Conn* c) {
            if (c->in) c->in->cancel();  // null: already past its input, closing
        });
        wake_ticker_if_done();
    }

    // At the end of a stop, the ticker's sleep is the last thing holding the
    // loop: end it now rather than at the next tick.
    void wake_ticker_if_done() {
        if (!stopping_ || conns_ != 0 || ticker_sleep_ == nullptr || ticker_woken_) return;
        ticker_woken_ = true;
        ticker_sleep_->cancel();
    }

    // Ends the connection's recv (and send): its coroutine sees -ECANCELED and unwinds.
    void cancel(Conn* c) {
        if (c->cancelled) return;
        c->cancelled = true;
        loop_.post(op::AsyncCancel::file(Fd{c->fd}).all());
    }

    // Output not sent yet, in the pending gauge; and on the stalled-output
    // list whenever some waits (the ticker takes it off once drained).
    void account(Conn& c, async::SendStream& out) {
        const std::size_t p = out.backlog();
        if (p != c.counted) {
            if (p > c.counted)
                stats_.pending.add(p - c.counted);
            else
                stats_.pending.sub(c.counted - p);
            c.counted = p;
            stats_.pending_peak.raise_to(p);
        }
        if (p == 0 || stall_.contains(&c)) [[likely]]
            return;
        c.sent_seen = c.sent_taken + out.sent();
        stall_.push_back(&c, now_ + send_timeout_);
    }

    void take_sent(Conn& c, async::SendStream& out) {
        if (const std::uint64_t n = out.take_sent()) {
            stats_.bytes_out.add(n);
            c.sent_taken += n;
        }
    }

    async::Task<void> connection(int fd) {
        Conn conn;
        conn.fd = fd;
        ++conns_;
        stats_.active.add();
        const auto idle = static_cast<std::uint64_t>(cfg_.idle_timeout.count());
        idle_.push_back(&conn, now_ + idle);
        Session session(*ctx_.responder);
        {
            async::RecvStream in(loop_, Fd{fd}, bufs_);
            // At most one send in flight; responses gather meanwhile and go
            // in the next one, as in the hand-written engine.  The coroutine
            // waits for a send only when its output backs up.
            async::SendStream out(loop_, Fd{fd});
            conn.in = &in;
            conn.out = &out;
            bool deliver = true;  // false after a reset: nothing can be delivered
            for (bool keep = true; keep;) {
                auto chunk = co_await in.next();
                if (const std::uint32_t dry = in.take_enobufs()) {
                    stats_.enobufs.add(dry);
                    stats_.recv_rearms.add(dry);
                }
                if (chunk.res < 0) {
                    // A stop ends the input with -ECANCELED: what was asked is
                    // still answered.  Anything else is a reset.
                    deliver = stopping_ && chunk.res == -ECANCELED;
                    break;
                }
                if (chunk.res == 0) {
                    keep = false;  // EOF: answer what was asked, then close
                } else {
                    wait_.request(conn.window);
                    stats_.bytes_in.add(static_cast<std::uint64_t>(chunk.res));
                    // Requests beyond the room under the cap are held (copied).
                    keep = session.feed(chunk.text(), out.buffer(), cap_.room(out.backlog()));
                    chunk.reset();
                    if (session.take_progress()) idle_.touch(&conn, now_ + idle);
                    // What has already arrived joins this send: a burst (a
                    // large message over many buffers, pipelined requests)
                    // costs one send, as in the hand-written engine.
                    if (keep && in.ready() && !session.held() && !cap_.full(out.backlog()))
                        continue;
                }
                out.flush();
                if (keep && (session.held() || cap_.full(out.backlog()))) [[unlikely]]
                    keep = co_await backpressure(conn, session, in, out);
                account(conn, out);
                if (out.error() != 0) [[unlikely]] {
                    deliver = false;
                    break;
                }
                take_sent(conn, out);
            }
            if (deliver) {
                co_await out.drained();  // flushes first
                take_sent(conn, out);
            }
            conn.in = nullptr;
            co_await in.stop();
            // The stream goes with this scope: off the list that looks at it.
            stall_.remove(&conn);
            conn.out = nullptr;
        }
        stats_.pending.sub(conn.counted);
        idle_.remove(&conn);
        co_await loop_.close(Fd{fd});
        --conns_;
        stats_.active.sub();
        wake_ticker_if_done();
    }

    // The client sends faster than it reads: its output is at the cap, or
    // the session holds input for want of room.  Stops reading (the recv is
    // cancelled and its last completion awaited, and what it had queued is
    // copied into the session, so a paused connection holds no provided
    // buffer of the ring the thread's connections share) until half the cap
    // has drained, answering held input as room appears; next() then
    // receives again.  False once the session wants the connection closed.
    async::Task<bool> backpressure(Conn& conn, Session& session, async::RecvStream& in,
                                   async::SendStream& out) {
        stats_.read_pauses.add();
        account(conn, out);
        co_await in.pause();
        bool keep = true;
        while (keep && in.queued()) {
            auto chunk = co_await in.next();  // queued: does not suspend
            stats_.bytes_in.add(static_cast<std::uint64_t>(chunk.res));
            keep = session.feed(chunk.text(), out.buffer(), 0);
            chunk.reset();
        }
        while (keep && out.error() == 0 && (session.held() || cap_.full(out.backlog()))) {
            co_await out.below(cap_.cap / 2 + 1);  // backlog() <= cap / 2: OutputCap::low
            if (out.error() != 0) break;
            keep = session.feed({}, out.buffer(), cap_.room(out.backlog()));
            if (session.take_progress())
                idle_.touch(&conn, now_ + static_cast<std::uint64_t>(cfg_.idle_timeout.count()));
            out.flush();
            account(conn, out);
            take_sent(conn, out);
        }
        co_return keep;
    }

    WorkerContext& ctx_;
    const ServerConfig& cfg_;
    ServerStats& stats_;
    Ring ring_;
    BufferRing bufs_;
    BatchWait wait_;
    const OutputCap cap_;
    const std::uint64_t send_timeout_;
    async::Loop loop_;
    async::AcceptStream accepts_;
    DeadlineList<Conn, &Conn::idle> idle_;
    DeadlineList<Conn, &Conn::stall> stall_;
    std::uint64_t now_ = 0;
    std::uint64_t grace_deadline_ = 0;
    unsigned conns_ = 0;
    bool stopping_ = false;
    bool ticker_woken_ = false;
    async::detail::OpAwaiter<op::Timeout>* ticker_sleep_ = nullptr;
};

}  // namespace

void run_coro_engine(WorkerContext& ctx) {
    CoroEngine engine(ctx);
    engine.run();
}

}  // namespace uringkit::net::detail
