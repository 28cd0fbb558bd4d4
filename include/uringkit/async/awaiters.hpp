// The awaiters behind Loop::submit(), chain(), batch() and with_timeout().
// Each lives in the awaiting coroutine's frame, which the loop destroys only
// after the operation's final completion (loop.hpp, lifetime rules).
#pragma once

#include "uringkit/async/loop.hpp"
#include "uringkit/cxx20.hpp"

#include <cerrno>
#include <optional>
#include <stop_token>

namespace uringkit::async::detail {

template <class Op>
struct OpAwaiter : Pending {
    LoopCore* loop;
    Op op;
    std::coroutine_handle<> handle;
    Result result;
    std::uint64_t ud = 0;      // while in flight
    std::int32_t refused = 0;  // -errno: the SQE became a NOP (multishot; opcode this kernel lacks)

    OpAwaiter(LoopCore* l, const Op& o) noexcept : loop(l), op(o) {
        complete = &on_cqe;
        fill = &on_fill;
    }
    OpAwaiter(const OpAwaiter&) = delete;
    OpAwaiter& operator=(const OpAwaiter&) = delete;
    ~OpAwaiter() {
        if (deferred)
            loop->withdraw(*this);
        else if (ud)
            loop->abandon(ud, Leftover::nothing());
    }

    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> h) noexcept {
        handle = h;
        if (loop->issue(*this)) return true;
        result = {loop->issue_refusal(*this), 0};  // never reached the kernel
        return false;
    }
    Result await_resume() const noexcept { return result; }

    // Asks the kernel to end this operation early (it completes with -ECANCELED).
    void cancel() noexcept {
        if (ud) loop->cancel(ud);
    }

    static void on_fill(Pending* self, io_uring_sqe* const* sqes) noexcept {
        auto* a = static_cast<OpAwaiter*>(self);
        a->op.prepare(*sqes[0]);
        confine(*sqes[0]);
        a->ud = a->loop->track(a);
        a->refused = a->loop->refusal(*sqes[0]);
        sqes[0]->user_data = a->ud;
    }
    static void on_cqe(Pending* self, const Completion& c) noexcept {
        auto* a = static_cast<OpAwaiter*>(self);
        // A zero-copy send completes twice: the result, then (F_NOTIF) the
        // moment the kernel lets go of the buffer.  Resume only then.
        if (!(c.flags & IORING_CQE_F_NOTIF)) a->result = {c.res, c.flags & ~IORING_CQE_F_MORE};
        if (c.more()) return;
        a->ud = 0;
        if (a->refused) a->result = {a->refused, 0};
        a->loop->resume(a->handle);
    }
};

// Loop::send_all: a short send issues the rest from the completion handler
// (the slot is released before the handler runs), so the caller resumes once,
// with every byte sent or the first error.  The bytes between `p` and the end
// are the kernel's until then, as for every awaiter: the caller's frame holds
// this awaiter and the caller keeps the buffer.
struct SendAllAwaiter : Pending {
    LoopCore* loop;
    File f;
    const char* p;
    std::size_t left;
    std::size_t total;
    std::coroutine_handle<> handle;
    Result result;
    std::uint64_t ud = 0;  // while in flight

    SendAllAwaiter(LoopCore* l, File file, const void* buf, std::size_t len) noexcept
        : loop(l), f(file), p(static_cast<const char*>(buf)), left(len), total(len) {
        complete = &on_cqe;
        fill = &on_fill;
    }
    SendAllAwaiter(const SendAllAwaiter&) = delete;
    SendAllAwaiter& operator=(const SendAllAwaiter&) = delete;
    ~SendAllAwaiter() {
        if (deferred)
            loop->withdraw(*this);
        else if (ud)
            loop->abandon(ud, Leftover::nothing());
    }

    bool await_ready() const noexcept { return left == 0; }
    bool await_suspend(std::coroutine_handle<> h) noexcept {
        handle = h;
        if (loop->issue(*this)) return true;
        result = {loop->issue_refusal(*this), 0};  // never reached the kernel
        return false;
    }
    Result await_resume() const noexcept {
        return left == 0 ? Result{static_cast<std::int32_t>(total), 0} : result;
    }

    static void on_fill(Pending* self, io_uring_sqe* const* sqes) noexcept {
        auto* a = static_cast<SendAllAwaiter*>(self);
        const std::size_t chunk = a->left > 0x7fffffffu ? 0x7fffffffu : a->left;
        op::Send(a->f, a->p, static_cast<std::uint32_t>(chunk), MSG_NOSIGNAL).prepare(*sqes[0]);
        a->ud = a->loop->track(a);
        sqes[0]->user_data = a->ud;
    }
    static void on_cqe(Pending* self, const Completion& c) noexcept {
        auto* a = static_cast<SendAllAwaiter*>(self);
        if (c.more()) return;
        a->ud = 0;
        if (c.res > 0) {
            a->p += c.res;
            a->left -= static_cast<std::size_t>(c.res);
            // The rest; resumed when it is all out.
            if (a->left > 0 && a->loop->issue(*a)) return;
            if (a->left > 0) a->result = {a->loop->issue_refusal(*a), 0};
        } else {
            a->result = {c.res == 0 ? -EPIPE : c.res, 0};
        }
        a->loop->resume(a->handle);
    }
};

template <bool Linked, class... Ops>
struct ChainAwaiter {
    static constexpr std::size_t N = sizeof...(Ops);
    static_assert(N >= 1 && N <= kMaxChain, "a chain holds 1 to kMaxChain operations");

    struct Link : Pending {
        ChainAwaiter* owner = nullptr;
        std::uint64_t ud = 0;
        std::int32_t refused = 0;
    };

    LoopCore* loop;
    std::tuple<Ops...> ops;
    std::array<Result, N> results{};
    std::array<Link, N> links{};
    std::coroutine_handle<> handle;
    std::size_t left = N;
    bool race = false;       // when_any: the first final completion cancels the others
    std::size_t winner = N;  // its index, once there is one

    ChainAwaiter(LoopCore* l, const Ops&... o) noexcept : loop(l), ops(o...) {
        for (Link& k : links) {
            k.owner = this;
            k.complete = &on_cqe;
        }
        links[0].fill = &on_fill;
        links[0].sqes = static_cast<std::uint8_t>(N);
    }
    ChainAwaiter(const ChainAwaiter&) = delete;
    ChainAwaiter& operator=(const ChainAwaiter&) = delete;
    ~ChainAwaiter() {
        if (links[0].deferred) loop->withdraw(links[0]);
        for (Link& k : links)
            if (k.ud) loop->abandon(k.ud, Leftover::nothing());
    }

    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> h) noexcept {
        handle = h;
        if (loop->issue(links[0])) return true;
        results.fill(Result{loop->issue_refusal(links[0]), 0});  // never reached the kernel
        return false;
    }
    std::array<Result, N> await_resume() const noexcept { return results; }

    // Asks the kernel to end every link still in flight.
    void cancel() noexcept {
        for (Link& k : links)
            if (k.ud) loop->cancel(k.ud);
    }

    static void on_fill(Pending* self, io_uring_sqe* const* sqes) noexcept {
        auto* a = static_cast<Link*>(self)->owner;
        std::size_t i = 0;
        std::apply([&](const auto&... op) { (a->fill_one(op, *sqes[i], i), ...); }, a->ops);
    }
    template <class Op>
    void fill_one(const Op& op, io_uring_sqe& s, std::size_t& i) noexcept {
        op.prepare(s);
        // A link the op set itself stays inside the chain; the last SQE
        // links to nothing, and a batch links nothing at all.
        const auto hard = static_cast<std::uint8_t>(s.flags & IOSQE_IO_HARDLINK);
        confine(s);
        if (Linked && i + 1 < N) s.flags |= hard;
        Link& k = links[i];
        k.ud = loop->track(&k);
        k.refused = loop->refusal(s);
        s.user_data = k.ud;
        if (Linked && i + 1 < N) s.flags |= IOSQE_IO_LINK;
        ++i;
    }
    static void on_cqe(Pending* self, const Completion& c) noexcept {
        auto* k = static_cast<Link*>(self);
        ChainAwaiter* a = k->owner;
        const std::size_t i = static_cast<std::size_t>(k - a->links.data());
        if (!(c.flags & IORING_CQE_F_NOTIF)) a->results[i] = {c.res, c.flags & ~IORING_CQE_F_MORE};
        if (c.more()) return;
        k->ud = 0;
        if (k->refused) a->results[i] = {k->refused, 0};
        if (a->race && a->winner == N) {
            a->winner = i;
            a->cancel();  // the losers: resumed only after their own final completions
        }
        if (--a->left == 0) a->loop->resume(a->handle);
    }
};

// The timespec outlives the chain that names it: a base constructed first.
struct TimeoutSpec {
    __kernel_timespec ts{};
    explicit TimeoutSpec(std::chrono::nanoseconds t) noexcept {
        ts.tv_sec = static_cast<long long>(t.count() / 1000000000);
        ts.tv_nsec = static_cast<long long>(t.count() % 1000000000);
    }
};

template <class Op>
struct TimedAwaiter : private TimeoutSpec, ChainAwaiter<true, Op, op::LinkTimeout> {
    // `absolute`: t is a CLOCK_MONOTONIC time (std::chrono::steady_clock's epoch on Linux).
    TimedAwaiter(LoopCore* l, const Op& o, std::chrono::nanoseconds t,
                 bool absolute = false) noexcept
        : TimeoutSpec(t),
          ChainAwaiter<true, Op, op::LinkTimeout>(
              l, o, absolute ? op::LinkTimeout(&ts).absolute() : op::LinkTimeout(&ts)) {}
    // The operation's result; -ETIME (not -ECANCELED) when the deadline cancelled it.
    Result await_resume() const noexcept {
        Result r = this->results[0];
        if (r.res == -ECANCELED && this->results[1].res == -ETIME) r.res = -ETIME;
        return r;
    }
};

// submit(op, stop_token): OpAwaiter plus a stop callback that cancels it.
template <class Op>
struct StoppableAwaiter : OpAwaiter<Op> {
    struct Stopper {
        StoppableAwaiter* a;
        void operator()() const noexcept { a->stop(); }
    };
    std::stop_token token;
    std::optional<std::stop_callback<Stopper>> callback;

    StoppableAwaiter(LoopCore* l, const Op& o, std::stop_token t) noexcept
        : OpAwaiter<Op>(l, o), token(std::move(t)) {}
    bool await_suspend(std::coroutine_handle<> h) noexcept {
        if (token.stop_requested()) {  // never reaches the kernel
            this->result = {-ECANCELED, 0};
            return false;
        }
        if (!OpAwaiter<Op>::await_suspend(h)) return false;
        callback.emplace(token, Stopper{this});  // runs at once if a stop came meanwhile
        return true;
    }
    void stop() noexcept {
        if (this->ud) {
            this->loop->cancel(this->ud);
        } else if (this->deferred) {  // still queued: end it here
            this->loop->withdraw(*this);
            this->result = {-ECANCELED, 0};
            this->loop->resume(this->handle);
        }
    }
};

}  // namespace uringkit::async::detail

namespace uringkit::async {

inline detail::OpAwaiter<op::Nop> Loop::nop() noexcept {
    return {this, op::Nop{}};
}
inline detail::OpAwaiter<op::Read> Loop::read(File f, void* buf, std::uint32_t len,
                                              std::uint64_t off) noexcept {
    return {this, op::Read(f, buf, len, off)};
}
inline detail::OpAwaiter<op::Write> Loop::write(File f, const void* buf, std::uint32_t len,
                                                std::uint64_t off) noexcept {
    return {this, op::Write(f, buf, len, off)};
}
inline detail::OpAwaiter<op::Recv> Loop::recv(File f, void* buf, std::uint32_t len,
                                              int flags) noexcept {
    return {this, op::Recv(f, buf, len, flags)};
}
inline detail::OpAwaiter<op::Send> Loop::send(File f, const void* buf, std::uint32_t len,
                                              int flags) noexcept {
    return {this, op::Send(f, buf, len, flags)};
}
inline detail::SendAllAwaiter Loop::send_all(File f, const void* buf, std::size_t len) noexcept {
    return {this, f, buf, len};
}
inline detail::OpAwaiter<op::Accept> Loop::accept(File listener, int flags) noexcept {
    return {this, op::Accept(listener).flags(flags)};
}
inline detail::OpAwaiter<op::Connect> Loop::connect(File f, const sockaddr* addr,
                                                    socklen_t len) noexcept {
    return {this, op::Connect(f, addr, len)};
}
inline detail::OpAwaiter<op::Close> Loop::close(File f) noexcept {
    return {this, op::Close(f)};
}
inline detail::OpAwaiter<op::Fsync> Loop::fsync(File f) noexcept {
    return {this, op::Fsync(f)};
}
inline detail::OpAwaiter<op::AsyncCancel> Loop::cancel_fd(File f) noexcept {
    return {this, op::AsyncCancel::file(f).all()};
}

}  // namespace uringkit::async
