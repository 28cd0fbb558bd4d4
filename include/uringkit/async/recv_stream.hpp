// RecvStream: a multishot recv into a provided buffer ring, delivered in
// order to one consumer (streams.hpp says what every stream promises when
// it is destroyed).
#pragma once

#include "uringkit/async/loop.hpp"
#include "uringkit/cxx20.hpp"

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace uringkit::async {

// A multishot recv into a provided buffer ring, as a stream of chunks:
//
//     RecvStream in(loop, Fd{fd}, buffers);
//     for (;;) {
//         auto chunk = co_await in.next();
//         if (chunk.res <= 0) break;              // 0: EOF; <0: -errno
//         use(chunk.bytes());
//     }                                           // the chunk's buffer goes back to the kernel
//     co_await in.stop();                         // optional: waits for the last CQE
//
// Chunks that arrive while the coroutine is busy elsewhere queue up in order.
// When the buffer ring runs dry (-ENOBUFS) the stream does not re-arm at
// once, which would fail again and spin: it waits until a buffer of the ring
// comes back (a Chunk of the same ring destroyed or reset()).
class RecvStream : private detail::Pending, private detail::BufferWaiter {
public:
    // One completion: res (bytes, 0 at EOF, or -errno) and, with data, the
    // provided buffer it arrived in (bytes(), text(), id()), given back to
    // the kernel when the Chunk is destroyed or reset() (the rules in
    // ring/buffer_ring.hpp, ProvidedBuffer).
    struct Chunk : ProvidedBuffer {
        std::int32_t res = 0;
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
            return {{}, final_res_};
        }
        return {loop_->lend(*buffers_, q.id, buffers_->data(q.id, static_cast<std::size_t>(q.res))),
                q.res};
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
        if (tail_ == queue_capacity_ && !grow_queue()) [[unlikely]]
            return out_of_memory(id);
        queue_[tail_++] = {res, id};
    }
    // False when the queue could not grow (std::bad_alloc).
    bool grow_queue() noexcept;
    // A chunk that found no room in the queue: its buffer goes back and the
    // stream ends with -ENOMEM after what is queued (the recv is cancelled).
    void out_of_memory(std::uint16_t id) noexcept;
    static void on_buffer(BufferWaiter* self) noexcept;

    detail::LoopCore* loop_;
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
    std::uint64_t ud_ = 0;               // the armed SQE's user_data, once placed
    std::uint64_t returned_at_arm_ = 0;  // Loop::buffers_returned() when armed
    bool armed_ = false;
    bool ended_ = false;  // EOF or error delivered or queued: no re-arm
    bool rearm_ = false;  // ended early (ENOBUFS, full CQ): re-arm when asked
    bool stopping_ = false;
    Task<void> disarm();
    struct UntilDisarmed;
    bool paused_ = false;     // pause() waits for the recv's last completion: no re-arm, no end
    bool cancelled_ = false;  // cancel(): no re-arm; ends at the recv's last completion
    std::int32_t final_res_ = 0;
    std::uint32_t enobufs_ = 0;
};

}  // namespace uringkit::async
