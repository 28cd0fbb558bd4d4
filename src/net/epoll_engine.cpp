// The epoll twin: edge-triggered, non-blocking, the same Session and the same
// responses as the io_uring engine, so a comparison measures only how bytes
// move.  It counts its own system calls the way the uring engine counts
// io_uring_enter.  Under --root it moves file bodies with sendfile(2), as
// nginx does.
#include "engine.hpp"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

namespace uringkit::net::detail {
namespace {

struct Conn {
    explicit Conn(const Responder& r) : session(r) {}
    int fd = -1;
    Session session;
    std::string out;
    std::size_t sent = 0;      // of `out`
    std::size_t counted = 0;   // its output not sent yet, as last added to stats_.pending
    DeadlineHook<Conn> idle;   // on the engine's idle list
    DeadlineHook<Conn> stall;  // on the stalled-output list while output waits to be sent
    bool closing = false;
    bool aborting = false;
    bool paused = false;  // output at the cap (or input held): its socket is not read
};

// epoll_event.data.ptr values for the two non-connection descriptors.
char listener_tag, wake_tag;

class EpollEngine {
public:
    explicit EpollEngine(WorkerContext& ctx)
        : ctx_(ctx),
          cfg_(*ctx.config),
          stats_(*ctx.stats),
          buf_(64 * 1024),
          cap_{cfg_.max_pending},
          send_timeout_(static_cast<std::uint64_t>(cfg_.send_timeout.count())) {
        ep_ = ::epoll_create1(EPOLL_CLOEXEC);
        if (ep_ < 0) throw std::system_error(errno, std::system_category(), "epoll_create1");
        add(ctx.listen_fd, EPOLLIN | EPOLLET, &listener_tag);
        add(ctx.wake_fd, EPOLLIN | EPOLLET, &wake_tag);
    }
    ~EpollEngine() {
        for (auto& c : all_)
            if (c->fd >= 0) ::close(c->fd);
        ::close(ep_);
    }

    void run() {
        std::vector<epoll_event> events(256);
        now_ = now_ms();
        std::uint64_t next_sweep = now_ + tick_ms(cfg_);
        for (;;) {
            int timeout = static_cast<int>(next_sweep > now_ ? next_sweep - now_ : 0);
            if (accept_paused_until_ != 0 && accept_paused_until_ <= next_sweep)
                timeout =
                    static_cast<int>(accept_paused_until_ > now_ ? accept_paused_until_ - now_ : 0);
            const int n =
                ::epoll_wait(ep_, events.data(), static_cast<int>(events.size()), timeout);
            stats_.syscalls.add();
            if (n < 0 && errno != EINTR)
                throw std::system_error(errno, std::system_category(), "epoll_wait");
            now_ = now_ms();
            for (int i = 0; i < n; ++i) {
                void* p = events[static_cast<std::size_t>(i)].data.ptr;
                if (p == &listener_tag)
                    accept_all();
                else if (p == &wake_tag)
                    begin_stop();
                else
                    on_event(static_cast<Conn*>(p), events[static_cast<std::size_t>(i)].events);
            }
            // Connections closed during the batch are reusable only now: a
            // later event of the same batch may still name them.
            free_.insert(free_.end(), closed_.begin(), closed_.end());
            closed_.clear();
            if (accept_paused_until_ != 0 && now_ >= accept_paused_until_) {
                accept_paused_until_ = 0;
                accept_all();  // edge-triggered: the backlog will not announce itself again
            }
            if (now_ >= next_sweep) {
                sweep();
                next_sweep = now_ + tick_ms(cfg_);
            }
            if (stopping_ && conns_ == 0) return;
        }
    }

private:
    void add(int fd, std::uint32_t events, void* ptr) {
        epoll_event ev{};
        ev.events = events;
        ev.data.ptr = ptr;
        if (::epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev) < 0)
            throw std::system_error(errno, std::system_category(), "epoll_ctl");
    }

    void accept_all() {
        if (stopping_) return;
        for (;;) {
            const int fd =
                ::accept4(ctx_.listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            stats_.syscalls.add();
            if (fd < 0) {
                if (errno == EINTR || errno == ECONNABORTED) continue;
                if (errno == EAGAIN) return;
                // EMFILE, ENFILE, ENOBUFS...: the connection stays in the
                // backlog; trying again at once would spin.  Pause.
                stats_.accept_backoffs.add();
                accept_paused_until_ = now_ + 50;
                return;
            }
            stats_.accepted.add();
            if (conns_ >= ctx_.max_conns) {
                stats_.rejected.add();
                ::close(fd);
                stats_.syscalls.add();
                continue;
            }
            Conn* c = allocate();
            c->fd = fd;
            ++conns_;
            stats_.active.add();
            idle_.push_back(c, now_ + static_cast<std::uint64_t>(cfg_.idle_timeout.count()));
            // Both directions, edge-triggered, registered once: no epoll_ctl
            // per request.  ADD reports data that is already there.
            add(fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, c);
            stats_.syscalls.add();
        }
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

    void on_event(Conn* c, std::uint32_t ev) {
        // Closed earlier in this batch (by the stop, or by an error on a send):
        // the event is stale, and acting on it would close the slot twice.
        if (c->fd < 0) return;
        if (ev & EPOLLERR) c->closing = c->aborting = true;
        if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) {
            // Paused: the input stays in the socket until resume() reads it.
            if (!c->closing && !c->paused)
                read_all(c, (ev & (EPOLLRDHUP | EPOLLHUP)) != 0);
            else if (c->closing && !c->aborting)
                discard_input(c);
        }
        advance(c);
    }

    // A connection that is closing still reads what arrives, and drops it:
    // a socket closed with unread input is reset (RFC 2525), and the reset
    // throws away the answers still in its send buffer: a client that sent
    // more after a `Connection: close` request lost the end of its answer.
    // The uring engines keep their multishot recv armed until the close for
    // the same reason.
    // Bounded, as read_all(): a short read drained the socket (more raises
    // a new edge), and a client that keeps it full cannot hold the thread.
    void discard_input(Conn* c) {
        for (int reads = 0; reads < 16; ++reads) {
            const ssize_t n = ::recv(c->fd, buf_.data(), buf_.size(), 0);
            stats_.syscalls.add();
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0 || static_cast<std::size_t>(n) < buf_.size())
                return;  // drained, EOF, or an error
        }
    }

    static std::size_t pending(const Conn* c) noexcept { return c->out.size() - c->sent; }

    // Requests beyond the room under the cap are held by the session and
    // answered by resume().  Output partly sent is moved to the front first,
    // so `out` holds no more than the cap (+ one response) however slowly
    // the client reads; a client that reads every send whole never has any.
    bool feed(Conn* c, std::string_view data) {
        if (c->sent > 0) [[unlikely]] {
            c->out.erase(0, c->sent);
            c->sent = 0;
        }
        return feed_after(c, c->session.feed(data, c->out, cap_.room(pending(c))));
    }

    // `eof_seen`: the peer's FIN came with this edge; read until the 0, as no
    // later edge will announce it.  Stops at the cap (or once the session
    // holds input): the rest stays in the socket, where it costs this process
    // nothing and TCP's window stops the client, until resume().
    void read_all(Conn* c, bool eof_seen) {
        for (;;) {
            const ssize_t n = ::recv(c->fd, buf_.data(), buf_.size(), 0);
            stats_.syscalls.add();
            if (n > 0) {
                stats_.bytes_in.add(static_cast<std::uint64_t>(n));
                if (!feed(c, {buf_.data(), static_cast<std::size_t>(n)})) return;
                if (c->session.held() || cap_.full(pending(c))) [[unlikely]] {
                    c->paused = true;
                    stats_.read_pauses.add();
                    return;
                }
                // A short read drained the socket; data arriving later raises
                // a new edge, so no read is needed just to see EAGAIN.
                if (static_cast<std::size_t>(n) < buf_.size() && !eof_seen) return;
                continue;
            }
            if (n == 0) {
                c->closing = true;  // EOF: answer what was asked, then close
                return;
            }
            if (errno == EINTR) continue;
            if (errno != EAGAIN) c->closing = c->aborting = true;
            return;
        }
    }

    // After any event: send what is pending, answer held input and read again
    // as the output drains, and once closing and sent, close.
    void advance(Conn* c) {
        bool blocked = false;
        do {
            if (c->aborting) {
                c->out.clear();
                c->sent = 0;
            }
            blocked = !push(c);
        } while (resume(c));
        account(c);
        if (!c->closing) return;
        if (blocked && !c->aborting) return;  // an EPOLLOUT edge goes on
        if (!c->aborting) discard_input(c);   // what came since the last edge
        close(c);
    }

    // Sends until everything is sent or the socket takes no more: false
    // then (EAGAIN), and an EPOLLOUT edge goes on.
    bool flush(Conn* c) {
        while (c->sent < c->out.size()) {
            const ssize_t n =
                ::send(c->fd, c->out.data() + c->sent, c->out.size() - c->sent, MSG_NOSIGNAL);
            stats_.syscalls.add();
            if (n > 0) {
                stats_.bytes_out.add(static_cast<std::uint64_t>(n));
                c->sent += static_cast<std::size_t>(n);
                stall_.touch(c, now_ + send_timeout_);  // the client takes its output
                continue;
            }
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && errno == EAGAIN) return false;
            c->closing = c->aborting = true;
            break;
        }
        c->out.clear();
        c->sent = 0;
        return true;
    }

    // flush(), then the file body the session waits to have sent, with
    // sendfile(2) straight from the page cache, then what the session
    // answered after it, until all is sent or the socket takes no more
    // (false: an EPOLLOUT edge goes on).  Each sendfile moves bytes or
    // ends the body (0: the file was truncated), so this loop ends.
    bool push(Conn* c) {
        for (;;) {
            if (!flush(c)) return false;
            if (c->aborting) return true;
            const Session::FileWant w = c->session.file_want();
            if (w.kind != Session::FileWant::Kind::Send) return true;
            auto offset = static_cast<off_t>(w.offset);
            const ssize_t n = ::sendfile(c->fd, w.fd, &offset, w.length);
            stats_.syscalls.add();
            const int err = n < 0 ? errno : 0;  // before discard_sigpipe() changes errno
            if (err == EINTR) continue;
            if (err == EAGAIN) return false;
            if (err == EPIPE) discard_sigpipe();
            if (n > 0) {
                stats_.bytes_out.add(static_cast<std::uint64_t>(n));
                stats_.bytes_spliced.add(static_cast<std::uint64_t>(n));
                stall_.touch(c, now_ + send_timeout_);
            }
            // An error (the socket's, or EIO from the file) ends the body
            // where it is, like a truncation: the connection closes after
            // what is in the output (nothing, or answers to held requests).
            feed_after(c, c->session.file_sent(n >= 0 ? n : -err, c->out, cap_.room(pending(c))));
        }
    }

    // sendfile(2) has no MSG_NOSIGNAL: a client gone raises SIGPIPE at this
    // thread, which run_epoll_engine() blocks; take it off this thread's
    // pending set so it is never delivered later.
    void discard_sigpipe() noexcept {
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        const timespec now{0, 0};
        for (;;) {
            stats_.syscalls.add();
            if (::sigtimedwait(&pipe, nullptr, &now) != SIGPIPE) return;
        }
    }

    // After a session call other than feed(): the idle clock and closing.
    bool feed_after(Conn* c, bool keep) {
        if (c->session.take_progress())
            idle_.touch(c, now_ + static_cast<std::uint64_t>(cfg_.idle_timeout.count()));
        if (!keep) c->closing = true;
        return keep;
    }

    // Once half the cap has drained: answers held input, then, with nothing
    // held and room left, reads the socket again (edge-triggered, so what
    // arrived while paused raises no new edge: read it all, as at a FIN).
    // True when that gave output to send.
    bool resume(Conn* c) {
        const std::size_t before = pending(c);
        if (c->aborting || !cap_.low(before)) return false;
        if (c->session.held()) feed(c, {});
        if (c->paused && !c->closing && !c->session.held() && !cap_.full(pending(c))) {
            c->paused = false;
            read_all(c, true);
        }
        return pending(c) != before;
    }

    // engine.hpp's account_output: the gauge and the stalled-output list
    // (deadlines pushed back by every send that moves bytes).
    void account(Conn* c) {
        account_output(stats_, stall_, c, pending(c), now_ + send_timeout_,
                       c->session.file_want().kind == Session::FileWant::Kind::Send);
    }

    void close(Conn* c) {
        idle_.remove(c);
        stall_.remove(c);
        stats_.pending.sub(c->counted);
        c->counted = 0;
        ::close(c->fd);  // also leaves the epoll set
        stats_.syscalls.add();
        --conns_;
        stats_.active.sub();
        c->fd = -1;
        // Pooled with its buffers' capacity, but not with what an attack
        // (or a large body) grew them to.
        c->session.reset();
        if (c->out.capacity() > Session::kKeptCapacity) std::string().swap(c->out);
        c->out.clear();
        c->sent = 0;
        c->closing = c->aborting = c->paused = false;
        closed_.push_back(c);
    }

    void sweep() {
        expire_deadlines(idle_, stall_, stats_, now_, stopping_ && now_ >= grace_deadline_,
                         [this](Conn* c) {
                             c->closing = c->aborting = true;
                             advance(c);
                         });
    }

    void begin_stop() {
        if (stopping_) return;
        stopping_ = true;
        grace_deadline_ = now_ + static_cast<std::uint64_t>(cfg_.grace.count());
        ::epoll_ctl(ep_, EPOLL_CTL_DEL, ctx_.listen_fd, nullptr);
        stats_.syscalls.add();
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
    int ep_ = -1;
    std::vector<char>
        buf_;  // one receive buffer for the thread: data is parsed before the next read
    std::vector<std::unique_ptr<Conn>> all_;
    std::vector<Conn*> free_;
    std::vector<Conn*> closed_;  // closed in the current batch of events; see run()
    DeadlineList<Conn, &Conn::idle> idle_;
    DeadlineList<Conn, &Conn::stall> stall_;
    const OutputCap cap_;
    const std::uint64_t send_timeout_;
    std::uint64_t now_ = 0;
    std::uint64_t grace_deadline_ = 0;
    std::uint64_t accept_paused_until_ = 0;
    unsigned conns_ = 0;
    bool stopping_ = false;
};

}  // namespace

void run_epoll_engine(WorkerContext& ctx) {
    // A library does not own the process's SIGPIPE disposition (nginx
    // ignores it process-wide); blocking it in this thread is enough for the
    // SIGPIPE sendfile(2) raises at the thread that called it.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    EpollEngine engine(ctx);
    engine.run();
}

}  // namespace uringkit::net::detail
