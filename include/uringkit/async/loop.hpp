// An event loop over one Ring, and the awaitables that make ring operations
// look like calls: each co_await prepares one SQE whose user_data points at
// the awaiter (it lives in the suspended coroutine's frame), and the loop
// resumes that coroutine from the CQE with the kernel's own result.
//
//     async::Loop loop(ring);
//     loop.spawn(echo(loop, fd));          // runs concurrently, owned by the loop
//     int n = loop.block_on(copy(loop));   // runs until this task is done
//
//     async::Task<void> echo(async::Loop& loop, int fd) {
//         char buf[4096];
//         for (;;) {
//             int n = co_await loop.recv(Fd{fd}, buf, sizeof buf);
//             if (n <= 0) break;
//             if (co_await loop.send_all(Fd{fd}, buf, n) < 0) break;
//         }
//         co_await loop.close(Fd{fd});
//     }
//
// Results are the kernel's: bytes, a new fd, 0, or -errno; nothing throws on
// the I/O path.  SQEs prepared while the loop handles completions go to the
// kernel together in the next io_uring_enter.
//
// Cancellation: `co_await loop.cancel_fd(fd)` (or a LinkTimeout via
// with_timeout) makes the pending operations on fd complete with -ECANCELED;
// their coroutines resume as usual and unwind normally.  Never destroy a
// suspended coroutine that waits on an operation: the SQE still names its
// frame.  Memory an operation points to (buffers, timespecs) must live until
// it completes, which a local in the awaiting coroutine always does.
#pragma once

#include "uringkit/async/task.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/batch_wait.hpp"
#include "uringkit/ring/buffer_ring.hpp"
#include "uringkit/ring/ring.hpp"

#include <chrono>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace uringkit::async {

class Loop;

// What an SQE's user_data points to: resumed (or fed) from the CQE.
struct Pending {
    void (*complete)(Pending* self, const Completion& c) noexcept = nullptr;
};

// The result of an operation: the CQE's res and flags.
struct Result {
    std::int32_t res = 0;
    std::uint32_t flags = 0;
    std::optional<std::uint16_t> buffer_id() const noexcept {
        return Completion{0, res, flags}.buffer_id();
    }
};

namespace detail {

struct Resume : Pending {
    std::coroutine_handle<> handle;
    Result result;
    Resume() noexcept {
        complete = [](Pending* self, const Completion& c) noexcept {
            auto* r = static_cast<Resume*>(self);
            r->result = {c.res, c.flags};
            r->handle.resume();
        };
    }
};

template <class Op, bool IntResult>
struct OpAwaiter : Resume {
    Loop* loop;
    Op op;
    std::uint8_t sqe_flags;
    OpAwaiter(Loop* l, const Op& o, std::uint8_t f) noexcept : loop(l), op(o), sqe_flags(f) {}
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h);
    auto await_resume() const noexcept {
        if constexpr (IntResult) return result.res;
        else return result;
    }
};

template <class Op>
struct TimedAwaiter : Resume {
    Loop* loop;
    Op op;
    __kernel_timespec ts{};
    TimedAwaiter(Loop* l, const Op& o, std::chrono::nanoseconds t) noexcept : loop(l), op(o) {
        ts.tv_sec = static_cast<long long>(t.count() / 1000000000);
        ts.tv_nsec = static_cast<long long>(t.count() % 1000000000);
    }
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h);
    Result await_resume() const noexcept { return result; }
};

}  // namespace detail

class Loop {
public:
    // The ring must outlive the loop and be used only from this thread.
    explicit Loop(Ring& ring) noexcept : ring_(&ring) {}
    Loop(const Loop&) = delete;
    Loop& operator=(const Loop&) = delete;

    Ring& ring() noexcept { return *ring_; }
    // Waits through `wait` (which must outlive the loop) instead of a plain
    // submit_and_wait(1): the caller reports load to it between turns.
    void set_wait(BatchWait* wait) noexcept { wait_ = wait; }

    // Starts `task` at once (up to its first suspension) and keeps it until it
    // finishes; an exception it lets escape is rethrown by run()/block_on().
    void spawn(Task<void> task);
    // Handles completions until every spawned task has finished, or stop().
    void run();
    // Submits what is prepared, waits for at least one completion and handles
    // the batch: one turn of run(), for callers with their own outer loop.
    void run_once();
    // Asks run() to return after the current batch of completions.
    void stop() noexcept { stopped_ = true; }
    // Runs `task` (and everything spawned meanwhile) until it finishes; returns its value.
    template <class T>
    T block_on(Task<T> task);
    // Tasks spawned and not finished yet.
    std::size_t live_tasks() const noexcept { return live_; }

    // ---- awaitables -------------------------------------------------------
    // Any typed operation from ops.hpp: co_await loop.submit(op) -> Result.
    template <class Op>
    detail::OpAwaiter<Op, false> submit(const Op& op, std::uint8_t sqe_flags = 0) noexcept {
        return {this, op, sqe_flags};
    }
    // The operation, cancelled when `timeout` passes first (res -ECANCELED).
    template <class Op>
    detail::TimedAwaiter<Op> with_timeout(const Op& op, std::chrono::nanoseconds timeout) noexcept {
        return {this, op, timeout};
    }

    detail::OpAwaiter<op::Nop, true> nop() noexcept { return as_int(op::Nop{}); }
    detail::OpAwaiter<op::Read, true> read(File f, void* buf, std::uint32_t len, std::uint64_t off) noexcept { return as_int(op::Read(f, buf, len, off)); }
    detail::OpAwaiter<op::Write, true> write(File f, const void* buf, std::uint32_t len, std::uint64_t off) noexcept {
        return as_int(op::Write(f, buf, len, off));
    }
    detail::OpAwaiter<op::Recv, true> recv(File f, void* buf, std::uint32_t len, int flags = 0) noexcept { return as_int(op::Recv(f, buf, len, flags)); }
    detail::OpAwaiter<op::Send, true> send(File f, const void* buf, std::uint32_t len, int flags = MSG_NOSIGNAL) noexcept {
        return as_int(op::Send(f, buf, len, flags));
    }
    detail::OpAwaiter<op::Accept, true> accept(File listener, int flags = SOCK_CLOEXEC) noexcept { return as_int(op::Accept(listener).flags(flags)); }
    detail::OpAwaiter<op::Connect, true> connect(File f, const sockaddr* addr, socklen_t len) noexcept { return as_int(op::Connect(f, addr, len)); }
    detail::OpAwaiter<op::Close, true> close(File f) noexcept { return as_int(op::Close(f)); }
    detail::OpAwaiter<op::Fsync, true> fsync(File f) noexcept { return as_int(op::Fsync(f)); }
    // Cancels every pending operation on `f`; returns how many (or -errno).
    detail::OpAwaiter<op::AsyncCancel, true> cancel_fd(File f) noexcept { return as_int(op::AsyncCancel::file(f).all()); }
    // Suspends for `d` (0 on time; -ECANCELED if cancelled).
    Task<int> sleep(std::chrono::nanoseconds d);
    // Sends all `len` bytes, continuing after short sends: len, or the first error.
    Task<int> send_all(File f, const void* buf, std::size_t len);

    // Prepares an SQE for `op` with user_data `p`, submitting first when the SQ is full.
    template <class Op>
    Sqe prepare(const Op& op, Pending* p);

private:
    template <class Op>
    detail::OpAwaiter<Op, true> as_int(const Op& op) noexcept {
        return {this, op, 0};
    }
    void reap();
    struct Detached;
    static Detached run_detached(Loop* loop, Task<void> task);

    Ring* ring_;
    BatchWait* wait_ = nullptr;
    std::size_t live_ = 0;
    bool stopped_ = false;
    std::exception_ptr error_;
};

// ---- implementation details of the awaitables --------------------------------


template <class Op>
Sqe Loop::prepare(const Op& op, Pending* p) {
    for (int attempt = 0; attempt < 4; ++attempt) {
        if (Sqe s = ring_->prepare(op)) {
            s.user_data(p);
            return s;
        }
        ring_->submit();
    }
    throw std::runtime_error("io_uring submission queue stays full");
}

template <class Op, bool IntResult>
void detail::OpAwaiter<Op, IntResult>::await_suspend(std::coroutine_handle<> h) {
    handle = h;
    Sqe s = loop->prepare(op, this);
    s.get()->flags |= sqe_flags;
}

template <class Op>
void detail::TimedAwaiter<Op>::await_suspend(std::coroutine_handle<> h) {
    handle = h;
    // The pair must share one submit: make room for both first.
    if (loop->ring().sq_space_left() < 2) loop->ring().submit();
    loop->prepare(op, this).link();
    loop->prepare(op::LinkTimeout(&ts), nullptr);
}

template <class T>
T Loop::block_on(Task<T> task) {
    auto h = task.get();
    // Started like a spawned task, but the Task keeps the frame, so the value can be read.
    h.resume();
    while (!h.done()) {
        reap();
        if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    }
    return h.promise().take();
}

// A multishot recv into a provided buffer ring, as a stream of chunks:
//
//     RecvStream in(loop, Fd{fd}, buffers);
//     for (;;) {
//         auto chunk = co_await in.next();
//         if (chunk.res <= 0) break;              // 0: EOF; <0: -errno
//         use(chunk.bytes());
//         in.recycle(chunk);                      // the buffer goes back to the kernel
//     }
//     co_await in.stop();                         // cancels; waits for the last CQE
//
// One SQE serves the whole connection.  Chunks that arrive while the
// coroutine is busy elsewhere (awaiting a send) queue up in order.  When the
// buffer ring runs dry (-ENOBUFS) the stream re-arms on the next next(), so a
// consumer that holds buffers applies back-pressure instead of spinning.
class RecvStream : public Pending {
public:
    struct Chunk {
        std::int32_t res = 0;  // bytes, 0 at EOF, or -errno
        std::uint16_t id = 0;
        std::span<const std::byte> data;
        std::string_view text() const noexcept {
            return {reinterpret_cast<const char*>(data.data()), data.size()};
        }
    };

    RecvStream(Loop& loop, File f, BufferRing& buffers);
    RecvStream(const RecvStream&) = delete;
    RecvStream& operator=(const RecvStream&) = delete;
    ~RecvStream();  // must be stopped (or have ended with EOF/error)

    auto next() noexcept {
        struct Awaiter {
            RecvStream* s;
            bool await_ready() noexcept { return s->ready(); }
            void await_suspend(std::coroutine_handle<> h) noexcept { s->waiter_ = h; }
            Chunk await_resume() noexcept { return s->pop(); }
        };
        return Awaiter{this};
    }
    // Chunks already queued (next() would not suspend).
    bool ready() noexcept;
    void recycle(const Chunk& c) noexcept {
        if (c.res > 0) buffers_->recycle(c.id);
    }
    // ENOBUFS completions (the buffer ring ran dry; re-armed) since the last call.
    std::uint32_t take_enobufs() noexcept { return std::exchange(enobufs_, 0u); }
    // Cancels the recv and resumes after its last completion; queued chunks'
    // buffers are returned.
    Task<void> stop();

private:
    void arm();
    Chunk pop() noexcept;
    static void on_cqe(Pending* self, const Completion& c) noexcept;

    Loop* loop_;
    File file_;
    BufferRing* buffers_;
    std::vector<Completion> queue_;
    std::size_t head_ = 0;
    std::coroutine_handle<> waiter_;
    bool armed_ = false;
    bool ended_ = false;      // EOF or error delivered or queued: no re-arm
    bool rearm_ = false;      // ended by ENOBUFS: re-arm when the consumer asks
    bool stopping_ = false;
    std::int32_t final_res_ = 0;
    std::uint32_t enobufs_ = 0;
};

}  // namespace uringkit::async
