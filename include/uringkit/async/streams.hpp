// Multishot operations as streams: one SQE, many completions, delivered in
// order to one consumer.  A stream may be destroyed at any time (armed or
// not, with or without stop()): its destructor hands the operation to the
// loop, which cancels it and drops its remaining completions, returning their
// provided buffers and closing the sockets they accepted.
#pragma once

#include "uringkit/async/loop.hpp"

#include <sys/socket.h>

#include <string_view>

namespace uringkit::async {

// A multishot recv into a provided buffer ring, as a stream of chunks:
//
//     RecvStream in(loop, Fd{fd}, buffers);
//     for (;;) {
//         auto chunk = co_await in.next();
//         if (chunk.res <= 0) break;              // 0: EOF; <0: -errno
//         use(chunk.bytes());
//         in.recycle(chunk);                      // the buffer goes back to the kernel
//     }
//     co_await in.stop();                         // optional: waits for the last CQE
//
// Chunks that arrive while the coroutine is busy elsewhere queue up in order.
// When the buffer ring runs dry (-ENOBUFS) the stream does not re-arm at
// once, which would fail again and spin: it waits until a buffer of the ring
// comes back through Loop::recycle() (or this stream's recycle()).
class RecvStream : private Pending, private BufferWaiter {
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
    ~RecvStream();

    auto next() noexcept {
        struct Awaiter {
            RecvStream* s;
            bool await_ready() noexcept { return s->ready(); }
            void await_suspend(std::coroutine_handle<> h) noexcept { s->waiter_ = h; }
            Chunk await_resume() noexcept { return s->pop(); }
        };
        return Awaiter{this};
    }
    // Chunks already queued, or the end (next() would not suspend).  The
    // first test inline: it is on every request's path.
    bool ready() noexcept { return head_ < queue_.size() || ended_ || ready_slow(); }
    // Hands the chunk's buffer back (and wakes streams waiting for one).
    void recycle(const Chunk& c) noexcept {
        if (c.res > 0) loop_->recycle(*buffers_, c.id);
    }
    // ENOBUFS completions (the buffer ring ran dry) since the last call.
    std::uint32_t take_enobufs() noexcept { return std::exchange(enobufs_, 0u); }
    // Whether the multishot recv is armed (or queued to be).
    bool armed() const noexcept { return armed_; }
    // Cancels the recv and resumes after its last completion; queued chunks'
    // buffers are returned.
    Task<void> stop();

private:
    void arm() noexcept;
    bool ready_slow() noexcept;
    Chunk pop() noexcept;
    void return_queued() noexcept;
    static void on_fill(Pending* self, io_uring_sqe* const* sqes) noexcept;
    static void on_cqe(Pending* self, const Completion& c) noexcept;
    static void on_buffer(BufferWaiter* self) noexcept;

    Loop* loop_;
    File file_;
    BufferRing* buffers_;
    std::vector<Completion> queue_;
    std::size_t head_ = 0;
    std::coroutine_handle<> waiter_;
    std::uint64_t ud_ = 0;    // the armed SQE's user_data, once placed
    std::uint64_t returned_at_arm_ = 0;  // Loop::buffers_returned() when armed
    bool armed_ = false;
    bool ended_ = false;      // EOF or error delivered or queued: no re-arm
    bool rearm_ = false;      // ended early (ENOBUFS, full CQ): re-arm when asked
    bool stopping_ = false;
    std::int32_t final_res_ = 0;
    std::uint32_t enobufs_ = 0;
};

// A multishot accept (5.19) as a stream of new sockets:
//
//     AcceptStream accepts(loop, Fd{listener});
//     for (;;) {
//         Result r = co_await accepts.next();   // res: the new fd, or -errno
//         if (r.ok()) loop.spawn(serve(r.res));
//         if (!r.more()) break;                 // the kernel ended the multishot
//     }
class AcceptStream : private Pending {
public:
    AcceptStream(Loop& loop, File listener, int flags = SOCK_CLOEXEC);
    AcceptStream(const AcceptStream&) = delete;
    AcceptStream& operator=(const AcceptStream&) = delete;
    // Sockets accepted and not taken are closed; an armed accept is cancelled
    // and what it still accepts is closed by the loop.
    ~AcceptStream();

    // Arms the multishot accept (again after it ended).
    void arm() noexcept;
    bool armed() const noexcept { return armed_; }
    // Asks the kernel to end the accept; next() then yields -ECANCELED without more().
    void cancel() noexcept;

    // The peer address of an accepted socket.  A multishot accept has one
    // address buffer for all its completions (the next accept could overwrite
    // it before the coroutine reads it), so the stream asks the socket.
    struct Peer {
        sockaddr_storage address{};
        socklen_t length = 0;  // 0 when getpeername failed
    };
    static Peer peer(int fd) noexcept;

    auto next() noexcept {
        struct Awaiter {
            AcceptStream* s;
            bool await_ready() const noexcept { return s->head_ < s->queue_.size(); }
            void await_suspend(std::coroutine_handle<> h) noexcept { s->waiter_ = h; }
            Result await_resume() noexcept { return s->pop(); }
        };
        return Awaiter{this};
    }

private:
    Result pop() noexcept;
    static void on_fill(Pending* self, io_uring_sqe* const* sqes) noexcept;
    static void on_cqe(Pending* self, const Completion& c) noexcept;

    Loop* loop_;
    File listener_;
    int flags_;
    std::vector<Result> queue_;
    std::size_t head_ = 0;
    std::coroutine_handle<> waiter_;
    std::uint64_t ud_ = 0;
    bool armed_ = false;
};

}  // namespace uringkit::async
