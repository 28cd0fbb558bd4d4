// The io_uring engine, written as completion handlers.  Per thread: one ring,
// one provided buffer ring, one multishot accept; per connection: one
// multishot recv and at most one send in flight.  Every SQE prepared while
// handling a batch of completions goes to the kernel in the same
// io_uring_enter that waits for the next batch, so a busy server makes about
// one system call per batch, not per request.
#include "engine.hpp"
#include "uring_conn.hpp"
#include "uring_files.hpp"
#include "uringkit/async/batch_wait.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/buffer_ring.hpp"
#include "uringkit/ring/hand_loop.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/error.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace uringkit::net::detail {
namespace {

constexpr std::uint16_t kGroup = 0;

class UringEngine {
public:
    explicit UringEngine(WorkerContext& ctx)
        : ctx_(ctx),
          cfg_(*ctx.config),
          stats_(*ctx.stats),
          ring_(Ring::create(cfg_.ring_entries, ring_options(cfg_))),
          bufs_(ring_, kGroup, cfg_.buffer_count, cfg_.buffer_size, cfg_.recv_incremental),
          wait_(ring_, batch_wait_options(cfg_)),
          sqes_(ring_),
          cap_{cfg_.max_pending},
          files_(sqes_, stats_, cfg_, *ctx.responder, kFileClosed),
          send_timeout_(static_cast<std::uint64_t>(cfg_.send_timeout.count())) {
        tick_.tv_sec = static_cast<long long>(tick_ms(cfg_) / 1000);
        tick_.tv_nsec = static_cast<long long>(tick_ms(cfg_) % 1000) * 1000000;
    }

    void run() {
        now_ = now_ms();
        arm_accept();
        arm_timer();
        sqe(op::PollAdd(Fd{ctx_.wake_fd}, POLLIN)).user_data(kWake);
        wake_armed_ = true;
        std::uint64_t counted = 0;
        for (;;) {
            if (wait_.batching()) stats_.batch_waits.add();
            check_enter(wait_.submit_and_wait(ring_));
            now_ = now_ms();
            ring_.for_each_completion([this](const Completion& c) { dispatch(c); });
            sqes_.check();  // a handler's failure ends the engine here, outside the handlers
            wait_.tick(now_);
            const std::uint64_t calls = ring_.enter_calls();
            stats_.syscalls.add(calls - counted);
            counted = calls;
            if (stopping_ && conns_ == 0) {
                if (timer_armed_ && !timer_removed_) {
                    sqe(op::TimeoutRemove(kTimer)).user_data(kIgnore);
                    timer_removed_ = true;
                }
                // A close prepared in this batch (a connection accepted
                // after the stop) is submitted by the next wait: end only
                // once it has completed, or its descriptor would leak.
                if (!accept_armed_ && !timer_armed_ && !backoff_armed_ && !wake_armed_ &&
                    rejected_closing_ == 0 && files_.closing() == 0)
                    break;
            }
        }
    }

private:
    static RingOptions ring_options(const ServerConfig& c) {
        RingOptions o;
        o.cq_entries = c.ring_entries * 8;  // many multishot CQEs per SQE
        // Completion work runs only when this thread waits, in one batch,
        // instead of interrupting it (6.1).  Measured in bench/results/serve_*.md.
        // Ring::create drops both where the kernel refuses them (before 6.0/6.1).
        o.single_issuer = o.defer_taskrun = c.defer_taskrun;
        o.register_ring_fd = true;
        return o;
    }

    // A free SQE; when the SQ is full, the prepared ones go to the kernel
    // first.  When the kernel takes none of them (-EBUSY/-EAGAIN: it wants
    // completions reaped, which cannot nest in the dispatch that calls this)
    // or the ring itself fails, the engine stops with the kernel's error,
    // explained, after the batch (run()), instead of retrying blindly or
    // throwing from a completion handler (ring/hand_loop.hpp).
    template <class Op>
    Sqe sqe(const Op& op) noexcept {
        return sqes_.prepare(op);
    }

    static std::uint64_t ud(Conn* c, std::uint64_t tag) noexcept { return ConnUd::make(c, tag); }

    void dispatch(const Completion& c) {
        const std::uint64_t tag = ConnUd::tag(c.user_data);
        Conn* conn = ConnUd::object(c.user_data);
        if (conn == nullptr) {
            switch (c.user_data) {
                case kAccept:
                    on_accept(c);
                    break;
                case kTimer:
                    on_timer(c);
                    break;
                case kWake:
                    wake_armed_ = false;
                    begin_stop();
                    break;
                case kRejected:
                    --rejected_closing_;
                    break;
                case kFileClosed:
                    files_.closed();
                    break;
                case kBackoff:
                    backoff_armed_ = false;
                    if (!stopping_) arm_accept();
                    break;
                default:
                    break;  // kIgnore
            }
            return;
        }
        switch (tag) {
            case kRecv:
                on_recv(conn, c);
                break;
            case kSend:
                on_send(conn, c);
                break;
            case kClose:
                on_close(conn);
                break;
            case kOpen:
                on_open(conn, c);
                break;
            case kStatx:
                opened(conn, files_.on_statx(conn->file, c.res));
                break;
            case kRead:
                on_read(conn, c);
                break;
            case kSplice:
                on_splice(conn, c);
                break;
            default:
                break;
        }
    }

    void arm_accept() {
        sqe(op::Accept(Fd{ctx_.listen_fd}).flags(SOCK_CLOEXEC).multishot()).user_data(kAccept);
        accept_armed_ = true;
        accept_cancelled_ = false;
    }

    void arm_timer() {
        sqe(op::Timeout(&tick_)).user_data(kTimer);
        timer_armed_ = true;
    }

    void on_accept(const Completion& c) {
        if (c.res >= 0) {
            stats_.accepted.add();
            if (stopping_ || conns_ >= ctx_.max_conns) {
                // Over --max-conns: accepted and closed at once, so the client
                // learns now instead of waiting in the backlog.
                stats_.rejected.add();
                sqe(op::Close(Fd{c.res})).user_data(kRejected);
                ++rejected_closing_;
            } else {
                open(c.res);
            }
        } else if (c.res != -ECANCELED && c.more() && !accept_cancelled_) {
            // An error the multishot survived: stop it, and back off below.
            sqe(op::AsyncCancel(kAccept)).user_data(kIgnore);
            accept_cancelled_ = true;
        }
        if (c.more()) return;
        accept_armed_ = false;
        if (stopping_) return;
        if (c.res >= 0) {
            arm_accept();
            return;
        }
        // EMFILE, ENFILE, ENOBUFS...: the backlog still holds the connection,
        // so accepting again at once would fail again at once.  Pause.
        stats_.accept_backoffs.add();
        backoff_.tv_sec = 0;
        backoff_.tv_nsec = 50 * 1000000;
        sqe(op::Timeout(&backoff_)).user_data(kBackoff);
        backoff_armed_ = true;
    }

    Conn* allocate() {
        if (!free_.empty()) {
            Conn* c = free_.back();
            free_.pop_back();
            return c;
        }
        all_.push_back(std::make_unique<Conn>(*ctx_.responder));
        return all_.back().get();
    }

    void open(int fd) {
        Conn* c = allocate();
        c->fd = fd;
        ++conns_;
        stats_.active.add();
        idle_.push_back(c, now_ + static_cast<std::uint64_t>(cfg_.idle_timeout.count()));
        arm_recv(c);
    }

    void arm_recv(Conn* c) {
        op::Recv recv = op::Recv::provided(Fd{c->fd}, kGroup).multishot();
        if (cfg_.recv_bundle) recv.bundle();
        sqe(recv).user_data(ud(c, kRecv));
        c->recv_armed = true;
        c->recv_cancelled = false;
    }

    // Output not sent yet: gathered, and the rest of the send in flight.
    static std::size_t pending(const Conn* c) noexcept {
        return c->out.size() + c->sending.size() - c->sent;
    }

    // Requests beyond the room under the cap are held by the session (copied:
    // the provided buffer still goes straight back) and answered by advance().
    void feed(Conn* c, std::span<const std::byte> bytes) {
        const bool keep =
            c->session.feed({reinterpret_cast<const char*>(bytes.data()), bytes.size()}, c->out,
                            cap_.room(pending(c)));
        after_session(c, keep);
    }

    void after_session(Conn* c, bool keep) {
        if (c->session.take_progress())
            idle_.touch(c, now_ + static_cast<std::uint64_t>(cfg_.idle_timeout.count()));
        if (!keep) c->closing = true;
        if (files_.enabled()) start_file_io(c);
    }

    // --file-io ring: the files the session is done with are closed, and
    // the operation it waits for goes on the ring.
    // A body spliced to the socket waits until the head before it is sent.
    void start_file_io(Conn* c) {
        files_.close_done(c->session.done_fds());
        if (c->file.busy() || c->aborting) return;
        if (waits_body(c) && pending(c) != 0) return;  // advance() starts it after the send
        // The only refusal is a pipe the splice cannot have (EMFILE, ENFILE):
        // the body is read instead, so the client still gets all of it.
        if (!files_.start(c->file, c->session, c->out, c->fd,
                          {ud(c, kOpen), ud(c, kRead), ud(c, kSplice)})) {
            stats_.body_read_fallbacks.add();
            after_session(c, c->session.file_send_unavailable(c->out, cap_.room(pending(c))));
        }
    }
    static bool waits_body(const Conn* c) noexcept {
        return c->session.file_want().kind == Session::FileWant::Kind::Send;
    }

    void on_splice(Conn* c, const Completion& cqe) {
        long got = 0;
        if (files_.on_splice(c->file, cqe.res, c->fd, ud(c, kSplice), !c->aborting, got) &&
            !c->aborting) {
            if (got > 0) stall_.touch(c, now_ + send_timeout_);  // the client takes the body
            after_session(c, c->session.file_sent(got, c->out, cap_.room(pending(c))));
        }
        advance(c);
    }

    void on_open(Conn* c, const Completion& cqe) {
        OpenedFile f;
        if (files_.on_open(c->file, cqe.res, !c->aborting, ud(c, kStatx), f)) opened(c, f);
    }

    void opened(Conn* c, OpenedFile f) {
        if (c->aborting) {  // nothing more is answered
            if (f.fd >= 0) files_.close(f.fd);
            advance(c);
            return;
        }
        after_session(c, c->session.file_opened(f, c->out, cap_.room(pending(c))));
        advance(c);
    }

    void on_read(Conn* c, const Completion& cqe) {
        const long got = files_.on_read(c->file, c->session, c->out, cqe.res);
        if (c->aborting) {
            advance(c);  // the session's body is closed with the connection
            return;
        }
        after_session(c, c->session.file_read(got, c->out, cap_.room(pending(c))));
        advance(c);
    }

    void on_recv(Conn* c, const Completion& cqe) {
        if (cqe.res > 0 && cfg_.recv_bundle) {
            wait_.request(c->window);
            if (!c->closing) stats_.bytes_in.add(static_cast<std::uint64_t>(cqe.res));
            const int err = bufs_.take_bundle(cqe, [&](const BufferRing::Delivery& d) {
                stats_.recv_buffers.add();
                if (!c->closing) feed(c, d.bytes);
                bufs_.stage(d.id);
            });
            bufs_.publish();  // one release store for the whole bundle
            if (err != 0) {   // the engine stops after this batch (run())
                sqes_.fail(err, "a recv bundle's buffers do not add up");
                return;
            }
        } else if (cqe.res > 0) {
            wait_.request(c->window);
            // take() checks the completion against the group (a forged or
            // stale buffer id is an error, never a read outside it) and, on
            // an incremental ring, points at this piece of the buffer.
            const BufferRing::Delivery d = bufs_.take(cqe);
            if (d.error != 0) {  // the engine stops after this batch (run())
                sqes_.fail(d.error, "a recv completion that does not fit its buffer group");
                return;
            }
            if (!c->closing) {
                stats_.bytes_in.add(static_cast<std::uint64_t>(cqe.res));
                feed(c, d.bytes);
            }
            // The bytes are parsed (or copied into the session): the buffer
            // goes straight back, so the group only runs dry under a burst;
            // an incremental one only once the kernel has filled it.
            if (d.has_buffer) {
                stats_.recv_buffers.add();
                bufs_.recycle(d.id);
            }
        } else if (cqe.res == -ENOBUFS) {
            stats_.enobufs.add();
        }
        if (!cqe.more()) {
            c->recv_armed = false;
            if (cqe.res == 0 || (cqe.res < 0 && cqe.res != -ENOBUFS && cqe.res != -ECANCELED)) {
                // EOF: answer what was asked, then close.  An error (reset):
                // nothing can be delivered.
                c->input_done = true;
                if (!c->closing) {
                    c->closing = true;
                    if (cqe.res < 0) c->aborting = true;
                }
            } else if (!c->closing && !c->paused) {
                // ENOBUFS ends the multishot but not the connection: the
                // buffers were recycled above, so re-arming finds them.
                // -ECANCELED here is a pause's cancel, and the connection
                // resumed before this last CQE came: it reads again now.
                if (cqe.res != -ECANCELED) stats_.recv_rearms.add();
                arm_recv(c);
            }
        }
        advance(c);
    }

    void on_send(Conn* c, const Completion& cqe) {
        c->send_inflight = false;
        if (cqe.res < 0) {
            c->closing = c->aborting = true;
        } else {
            stats_.bytes_out.add(static_cast<std::uint64_t>(cqe.res));
            c->sent += static_cast<std::size_t>(cqe.res);
            if (cqe.res > 0) stall_.touch(c, now_ + send_timeout_);  // the client takes its output
            if (c->sent < c->sending.size() && !c->aborting)
                send(c);  // a short send: the rest, from where it stopped
        }
        if (!c->send_inflight) {
            c->sending.clear();
            c->sent = 0;
        }
        advance(c);
    }

    void send(Conn* c) {
        sqe(op::Send(Fd{c->fd}, c->sending.data() + c->sent,
                     static_cast<std::uint32_t>(c->sending.size() - c->sent), MSG_NOSIGNAL))
            .user_data(ud(c, kSend));
        c->send_inflight = true;
    }

    // The connection's state machine after any event: answer held input once
    // there is room, send what is pending, stop or resume reading, and once
    // closing, wait for the send, cancel the recv, then close.
    void advance(Conn* c) {
        if (c->aborting)
            c->out.clear();
        else if (c->session.held() && cap_.low(pending(c)))
            feed(c, {});
        if (!c->send_inflight && !c->out.empty() && !c->file.read_inflight) {
            c->sending.swap(c->out);
            c->out.clear();
            c->sent = 0;
            send(c);
        }
        if (files_.enabled() && pending(c) == 0 && waits_body(c)) start_file_io(c);
        regulate(c);
        account(c);
        if (!c->closing) return;
        if (c->send_inflight) {
            if (c->aborting && !c->send_cancelled) {
                sqe(op::AsyncCancel(ud(c, kSend))).user_data(kIgnore);
                c->send_cancelled = true;
            }
            return;
        }
        // The recv holds a reference to the socket: close() alone would not
        // end it, so cancel it and close after its last CQE.
        if (c->recv_armed) {
            if (!c->recv_cancelled) {
                sqe(op::AsyncCancel(ud(c, kRecv))).user_data(kIgnore);
                c->recv_cancelled = true;
            }
            return;
        }
        if (c->file.busy()) {  // its CQEs come first
            if (c->aborting) files_.cancel(c->file, ud(c, kSplice));
            return;
        }
        if (!c->close_submitted) {
            idle_.remove(c);
            sqe(op::Close(Fd{c->fd})).user_data(ud(c, kClose));
            c->close_submitted = true;
        }
    }

    // Reading stops while the connection's output is at the cap or its
    // session holds input, and starts again once half the cap has drained
    // and nothing is held: a client that sends without reading fills its
    // socket and TCP's window, not this process.  The paused multishot recv
    // is cancelled, and re-armed only after its last CQE (on_recv), so one
    // recv at most is ever in flight and no buffer it fills is lost: what
    // arrives before the cancel takes effect is fed, and held.
    void regulate(Conn* c) {
        if (c->closing) {
            // Closing: nothing more is answered, so no cap applies, and the
            // recv reads again only to drop what arrives (see advance()).
            if (!c->paused) return;
            c->paused = false;
            if (!c->recv_armed && !c->input_done && !c->aborting) arm_recv(c);
            return;
        }
        const std::size_t p = pending(c);
        if (!c->paused) {
            if (!cap_.full(p) && !c->session.held()) [[likely]]
                return;
            c->paused = true;
            stats_.read_pauses.add();
            if (c->recv_armed && !c->recv_cancelled) {
                sqe(op::AsyncCancel(ud(c, kRecv))).user_data(kIgnore);
                c->recv_cancelled = true;
            }
        } else if (cap_.low(p) && !c->session.held()) {
            c->paused = false;
            if (!c->recv_armed) arm_recv(c);  // else its last CQE is still to come: on_recv re-arms
        }
    }

    // engine.hpp's account_output: the gauge and the stalled-output list
    // (deadlines pushed back by every send that moves bytes).
    void account(Conn* c) {
        account_output(stats_, stall_, c, pending(c), now_ + send_timeout_, waits_body(c));
    }

    void on_close(Conn* c) {
        --conns_;
        stats_.active.sub();
        stats_.pending.sub(c->counted);  // 0 unless the output was dropped (aborted)
        c->counted = 0;
        stall_.remove(c);
        // Back to the pool with its buffers' capacity, so the next connection
        // starts with warm memory and no allocation; but output grown past
        // what a connection usually needs is given back, so a pool of closed
        // connections never keeps an attack's (or a large body's) memory.
        files_.close_done(c->session.done_fds());
        files_.recycle(c->file);
        c->session.reset();
        release(c->out);
        release(c->sending);
        c->sent = 0;
        c->fd = -1;
        c->recv_armed = c->send_inflight = c->closing = c->aborting = false;
        c->paused = c->input_done = false;
        c->recv_cancelled = c->send_cancelled = c->close_submitted = false;
        free_.push_back(c);
    }

    static void release(std::string& s) noexcept {
        if (s.capacity() > Session::kKeptCapacity)
            std::string().swap(s);
        else
            s.clear();
    }

    void on_timer(const Completion& c) {
        timer_armed_ = false;
        if (c.res == -ECANCELED) return;  // removed at exit
        expire_deadlines(idle_, stall_, stats_, now_, stopping_ && now_ >= grace_deadline_,
                         [this](Conn* conn) {
                             conn->closing = conn->aborting = true;
                             advance(conn);
                         });
        if (!timer_removed_) arm_timer();
    }

    void begin_stop() {
        if (stopping_) return;
        stopping_ = true;
        grace_deadline_ = now_ + static_cast<std::uint64_t>(cfg_.grace.count());
        if (accept_armed_ && !accept_cancelled_) {
            sqe(op::AsyncCancel(kAccept)).user_data(kIgnore);
            accept_cancelled_ = true;
        }
        if (backoff_armed_) sqe(op::TimeoutRemove(kBackoff)).user_data(kIgnore);
        // Every connection finishes the response it is sending, then closes;
        // a half-received request is dropped.
        idle_.for_each([this](Conn* c) {
            c->closing = true;
            advance(c);
        });
    }

    WorkerContext& ctx_;
    const ServerConfig& cfg_;
    ServerStats& stats_;
    // Memory the kernel may still point to (timespecs, connections) is
    // declared before the ring, so it outlives it.
    __kernel_timespec tick_{};
    __kernel_timespec backoff_{};
    std::vector<std::unique_ptr<Conn>> all_;
    std::vector<Conn*> free_;
    DeadlineList<Conn, &Conn::idle> idle_;
    DeadlineList<Conn, &Conn::stall> stall_;
    Ring ring_;
    BufferRing bufs_;
    BatchWait wait_;
    SqeSupply sqes_;  // get an SQE or fail after the batch (ring/hand_loop.hpp)
    const OutputCap cap_;
    RingFiles files_;  // --file-io ring: the session's file operations on the ring
    const std::uint64_t send_timeout_;
    std::uint64_t now_ = 0;
    std::uint64_t grace_deadline_ = 0;
    unsigned conns_ = 0;
    unsigned rejected_closing_ = 0;  // kRejected closes not completed yet
    bool stopping_ = false;
    bool accept_armed_ = false;
    bool accept_cancelled_ = false;
    bool timer_armed_ = false;
    bool timer_removed_ = false;
    bool backoff_armed_ = false;
    bool wake_armed_ = false;
};

}  // namespace

void run_uring_engine(WorkerContext& ctx) {
    UringEngine engine(ctx);
    engine.run();
}

}  // namespace uringkit::net::detail
