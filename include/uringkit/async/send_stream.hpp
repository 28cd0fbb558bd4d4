// SendStream: a socket's output, one send in flight at a time, from bytes
// the stream owns.
#pragma once

#include "uringkit/async/loop.hpp"
#include "uringkit/cxx20.hpp"

#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <string>

namespace uringkit::async {

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
//     co_await out.drained();                // before closing: flushes; every byte sent, or the
//     error
//
// The bytes are the stream's own (heap memory it allocates once), never the
// caller's.  Destroyed with a send in flight, it hands those bytes to the
// loop, which cancels the send and frees them after its final completion;
// what was buffered and not sent is dropped.
class SendStream : private detail::Pending {
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
        if (error_ != 0)
            gathering_->clear();
        else if (!gathering_->empty())
            start();
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
        if (io_uring_sqe* sqe = loop_->next_sqe())
            fill_send(*sqe);
        else
            (void)loop_->issue(*this);  // one SQE: always fits
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

    detail::LoopCore* loop_;
    File file_;
    std::unique_ptr<Bytes> bytes_;
    std::string* gathering_;
    std::string* sending_;  // the kernel's from start() to the send's final completion
    std::coroutine_handle<> waiter_;
    std::size_t offset_ = 0;      // how much of *sending_ the kernel has taken
    std::size_t wake_below_ = 0;  // the waiter's backlog limit (below()); 0: drained()
    std::uint64_t ud_;            // every send's user_data: the stream's own slot
    std::uint64_t sent_ = 0;
    std::int32_t error_ = 0;
    bool busy_ = false;
    bool placed_ = false;  // the send in flight reached the SQ (not queued in the loop)
};

}  // namespace uringkit::async
