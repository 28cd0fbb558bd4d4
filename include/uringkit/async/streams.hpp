// Multishot operations as streams: one SQE, many completions, delivered in
// order to one consumer.  A stream may be destroyed at any time (armed or
// not, with or without stop()): its destructor hands the operation to the
// loop, which cancels it and drops its remaining completions, returning their
// provided buffers and closing the sockets they accepted.
#pragma once

#include "uringkit/async/loop.hpp"

#include <sys/socket.h>

#include <memory>
#include <string>
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
    bool ready() noexcept { return head_ != tail_ || ((ended_ | rearm_) && ready_slow()); }
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
    // Stops receiving without ending the stream, for a consumer that cannot
    // keep up (its output backs up): cancels the recv and resumes after its
    // last completion, so no recv is armed and no further buffer is taken
    // while the consumer waits.  Chunks that arrived before stay queued
    // (queued()); next() yields them first, then arms the recv again.
    Task<void> pause();
    // Chunks queued: next() would yield data without suspending.
    bool queued() const noexcept { return handed_ || head_ != tail_; }
    // Ends the stream early without waiting: the recv is cancelled, and
    // next() yields the chunks already queued, then -ECANCELED.  For another
    // task (a server's stop, a watchdog) to end this stream's consumer.
    void cancel() noexcept;

private:
    void arm() noexcept;
    bool ready_slow() noexcept;
    Chunk pop() noexcept {
        Queued q;
        if (handed_) {
            handed_ = false;
            q = handoff_;
        } else if (head_ != tail_) {
            q = queue_[head_++];
            if (head_ == tail_) head_ = tail_ = 0;
        } else {
            return {final_res_, 0, {}};
        }
        return {q.res, q.id, buffers_->data(q.id, static_cast<std::size_t>(q.res))};
    }
    void return_queued() noexcept;
    static void on_fill(Pending* self, io_uring_sqe* const* sqes) noexcept;
    static void on_cqe(Pending* self, const Completion& c) noexcept;
    // Every completion but the common one; `taken`: what take() gave, if called.
    void on_other(const Completion& c, const BufferRing::Delivery* taken) noexcept;
    // A chunk waiting for the consumer: 8 bytes, so queueing is one store.
    struct Queued {
        std::int32_t res;
        std::uint16_t id;
    };
    void push(std::int32_t res, std::uint16_t id) noexcept {
        if (tail_ == queue_capacity_) grow_queue();
        queue_[tail_++] = {res, id};
    }
    void grow_queue() noexcept;
    static void on_buffer(BufferWaiter* self) noexcept;

    Loop* loop_;
    File file_;
    BufferRing* buffers_;
    // Chunks not taken yet: queue_[head_, tail_), each a whole buffer of the
    // group, checked at its CQE.  The vector only grows (no clear, no size()
    // division on the request path).
    std::vector<Queued> queue_;
    std::uint32_t head_ = 0;
    std::uint32_t tail_ = 0;
    std::uint32_t queue_capacity_ = 0;
    // A chunk that arrived while the consumer waited on an empty queue goes
    // to it directly (resumed at once, it takes it first thing).
    Queued handoff_{0, 0};
    bool handed_ = false;
    std::coroutine_handle<> waiter_;
    std::uint64_t ud_ = 0;    // the armed SQE's user_data, once placed
    std::uint64_t returned_at_arm_ = 0;  // Loop::buffers_returned() when armed
    bool armed_ = false;
    bool ended_ = false;      // EOF or error delivered or queued: no re-arm
    bool rearm_ = false;      // ended early (ENOBUFS, full CQ): re-arm when asked
    bool stopping_ = false;
    Task<void> disarm();
    bool paused_ = false;     // pause() waits for the recv's last completion: no re-arm, no end
    bool cancelled_ = false;  // cancel(): no re-arm; ends at the recv's last completion
    std::int32_t final_res_ = 0;
    std::uint32_t enobufs_ = 0;
};

// A socket's output with at most one send in flight, as the hand-written
// servers keep it: append to buffer() and flush(); the stream sends what has
// gathered each time the previous send completes (a short send goes on from
// where it stopped), so a connection's responses leave in order without its
// coroutine waiting for each send.
//
//     SendStream out(loop, Fd{fd});
//     out.buffer() += response;
//     out.flush();                           // returns at once
//     ...
//     co_await out.drained();                // before closing: flushes; every byte sent, or the error
//
// The bytes are the stream's own (heap memory it allocates once), never the
// caller's.  Destroyed with a send in flight, it hands those bytes to the
// loop, which cancels the send and frees them after its final completion;
// what was buffered and not sent is dropped.
class SendStream : private Pending {
public:
    SendStream(Loop& loop, File f);
    SendStream(const SendStream&) = delete;
    SendStream& operator=(const SendStream&) = delete;
    ~SendStream();

    // Where output gathers until flush().
    std::string& buffer() noexcept { return *gathering_; }
    // Starts a send of what has gathered, unless one is in flight (then what
    // has gathered goes when it completes) or a send failed.
    [[gnu::always_inline]] void flush() noexcept {
        if (busy_) return;
        if (error_ != 0) gathering_->clear();
        else if (!gathering_->empty()) start();
    }
    // Bytes written and not sent yet: gathered, and the rest of the send in flight.
    std::size_t backlog() const noexcept { return gathering_->size() + sending_->size() - offset_; }
    bool busy() const noexcept { return busy_; }
    // 0, or the first failed send's -errno (-EPIPE for a send of 0 bytes):
    // nothing is sent after it, and what gathers is dropped at each flush().
    std::int32_t error() const noexcept { return error_; }
    // Bytes the kernel took since the last call.
    std::uint64_t take_sent() noexcept { return std::exchange(sent_, 0u); }
    // The same, without taking them: for a watchdog that sees whether a
    // writer's output moves.
    std::uint64_t sent() const noexcept { return sent_; }
    // Flushes, then resumes once everything written is sent or a send
    // failed: res 0, or error().
    auto drained() noexcept {
        struct Awaiter {
            SendStream* s;
            bool await_ready() const noexcept {
                s->flush();  // what gathered unflushed would otherwise never go
                return !s->busy_;
            }
            void await_suspend(std::coroutine_handle<> h) noexcept {
                s->waiter_ = h;
                s->wake_below_ = 0;
            }
            Result await_resume() const noexcept { return {s->error_, 0}; }
        };
        return Awaiter{this};
    }
    // Flushes, then resumes once fewer than `n` bytes wait to be sent
    // (backlog() < n) or a send failed: a writer that produces faster than
    // the peer reads waits here, and the send in flight keeps the socket
    // busy meanwhile.
    auto below(std::size_t n) noexcept {
        struct Awaiter {
            SendStream* s;
            std::size_t n;
            bool await_ready() const noexcept {
                s->flush();
                return s->error_ != 0 || s->backlog() < n;
            }
            void await_suspend(std::coroutine_handle<> h) noexcept {
                s->waiter_ = h;
                s->wake_below_ = n;
            }
            Result await_resume() const noexcept { return {s->error_, 0}; }
        };
        return Awaiter{this, n};
    }

private:
    // Heap memory, allocated once: what the kernel reads stays where it is
    // even when the stream is destroyed first (the loop then holds it).
    struct Bytes {
        std::string a, b;
    };
    // The gathering buffer becomes the one being sent (pointers swapped: both
    // keep their capacity, so a steady connection sends without allocating).
    [[gnu::always_inline]] void start() noexcept {
        std::swap(gathering_, sending_);
        offset_ = 0;
        busy_ = true;
        if (io_uring_sqe* sqe = loop_->next_sqe()) fill_send(*sqe);
        else (void)loop_->issue(*this);  // one SQE: always fits
    }
    void fill_send(io_uring_sqe& sqe) noexcept {
        const std::size_t left = sending_->size() - offset_;
        const auto len = static_cast<std::uint32_t>(left > 0x7fffffffu ? 0x7fffffffu : left);
        op::Send(file_, sending_->data() + offset_, len, MSG_NOSIGNAL).prepare(sqe);
        sqe.user_data = loop_->reuse(ud_);
        placed_ = true;
    }
    static void on_fill(Pending* self, io_uring_sqe* const* sqes) noexcept;
    static void on_cqe(Pending* self, const Completion& c) noexcept;
    void on_other(const Completion& c) noexcept;
    static void drop(void* held) noexcept;

    Loop* loop_;
    File file_;
    std::unique_ptr<Bytes> bytes_;
    std::string* gathering_;
    std::string* sending_;  // the kernel's from start() to the send's final completion
    std::coroutine_handle<> waiter_;
    std::size_t offset_ = 0;  // how much of *sending_ the kernel has taken
    std::size_t wake_below_ = 0;  // the waiter's backlog limit (below()); 0: drained()
    std::uint64_t ud_;        // every send's user_data: the stream's own slot
    std::uint64_t sent_ = 0;
    std::int32_t error_ = 0;
    bool busy_ = false;
    bool placed_ = false;     // the send in flight reached the SQ (not queued in the loop)
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
