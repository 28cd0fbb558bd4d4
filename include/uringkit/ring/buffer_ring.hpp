// A provided buffer ring (IORING_REGISTER_PBUF_RING, 5.19): a group of equal
// buffers the kernel picks from when data arrives (recv with buffer_select,
// multishot recv).  The completion names the buffer it used; the application
// hands it back with recycle() once it is done with the data.  When the ring
// runs dry, multishot recv ends with -ENOBUFS and must be re-armed.
//
// Registered incremental (Linux 6.12), the kernel consumes a buffer a piece at
// a time: a completion fills only what arrived, flagged IORING_CQE_F_BUF_MORE
// while the rest of the buffer is still the kernel's, and the next
// completion naming that buffer continues where the last one ended.  Large
// buffers then cost no memory for small messages.
#pragma once

#include "uringkit/cxx20.hpp"
#include "uringkit/ring/ring.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace uringkit {

class BufferRing;

// One provided buffer the program holds, with the bytes that arrived in it:
// move-only, and given back to its ring when destroyed or reset(), so a
// buffer cannot be forgotten nor given back twice (tokio-uring's rule for
// buffers the kernel picks).  Rules:
//  - Destroy it on the thread that owns the ring (BufferRing is not
//    thread-safe; neither is an async::Loop).
//  - It must not outlive its BufferRing, nor the async::Loop whose stream
//    handed it out: the Loop aborts with a message when it is destroyed
//    while one of its streams' buffers is still held (a handle kept in a
//    task's frame never is: the loop destroys frames first).
class ProvidedBuffer {
public:
    // How a buffer goes back when not straight to its ring: an async::Loop
    // also wakes the streams waiting for one.
    using GiveBack = void (*)(void* through, BufferRing& ring, std::uint16_t id) noexcept;

    ProvidedBuffer() noexcept = default;
    ProvidedBuffer(BufferRing& ring, std::uint16_t id, std::span<const std::byte> bytes,
                   GiveBack give_back = nullptr, void* through = nullptr) noexcept
        : ring_(&ring), give_back_(give_back), through_(through), bytes_(bytes), id_(id) {}
    ProvidedBuffer(ProvidedBuffer&& o) noexcept
        : ring_(std::exchange(o.ring_, nullptr)),
          give_back_(o.give_back_),
          through_(o.through_),
          bytes_(std::exchange(o.bytes_, {})),
          id_(o.id_) {}
    ProvidedBuffer& operator=(ProvidedBuffer&& o) noexcept {
        if (this != &o) {
            reset();
            ring_ = std::exchange(o.ring_, nullptr);
            give_back_ = o.give_back_;
            through_ = o.through_;
            bytes_ = std::exchange(o.bytes_, {});
            id_ = o.id_;
        }
        return *this;
    }
    ProvidedBuffer(const ProvidedBuffer&) = delete;
    ProvidedBuffer& operator=(const ProvidedBuffer&) = delete;
    ~ProvidedBuffer() { reset(); }

    // Whether it holds a buffer (not given back, not moved from).
    explicit operator bool() const noexcept { return ring_ != nullptr; }
    std::uint16_t id() const noexcept { return id_; }
    // The bytes that arrived (empty once given back).
    std::span<const std::byte> bytes() const noexcept { return bytes_; }
    std::string_view text() const noexcept {
        return {reinterpret_cast<const char*>(bytes_.data()), bytes_.size()};
    }
    // Gives the buffer back now; the bytes are the kernel's again.
    void reset() noexcept;

private:
    BufferRing* ring_ = nullptr;
    GiveBack give_back_ = nullptr;
    void* through_ = nullptr;
    std::span<const std::byte> bytes_;
    std::uint16_t id_ = 0;
};

class BufferRing {
public:
    // Registers group `group` on `ring` with `count` buffers (a power of two,
    // at most 32768) of `buffer_size` bytes, all handed to the kernel.  Throws
    // RingError.  It keeps a descriptor of its own for the ring (a dup), not
    // the Ring object: the Ring may be moved, or destroyed first (the kernel
    // then keeps the ring until this object unregisters the group).
    // `incremental`: IOU_PBUF_RING_INC (6.12); older kernels refuse it with
    // EINVAL.
    BufferRing(Ring& ring, std::uint16_t group, unsigned count, std::uint32_t buffer_size,
               bool incremental = false);
    BufferRing(BufferRing&& other) noexcept;
    BufferRing& operator=(BufferRing&&) = delete;
    BufferRing(const BufferRing&) = delete;
    ~BufferRing();

    std::uint16_t group() const noexcept { return group_; }
    unsigned count() const noexcept { return count_; }
    std::uint32_t buffer_size() const noexcept { return buffer_size_; }
    bool incremental() const noexcept { return incremental_; }

    // The bytes of buffer `id`.
    std::span<std::byte> buffer(std::uint16_t id) const noexcept {
        return {data_ + static_cast<std::size_t>(id) * buffer_size_, buffer_size_};
    }
    // The first `len` bytes of the buffer a completion names.
    std::span<const std::byte> data(std::uint16_t id, std::size_t len) const noexcept {
        return {data_ + static_cast<std::size_t>(id) * buffer_size_, len};
    }

    // What a completion of a provided-buffer request (buffer_select,
    // multishot recv) delivered, checked against this group.
    struct Delivery {
        // 0, or why the completion cannot be trusted (nothing is taken then):
        //   -EPROTO     data (res > 0) without IORING_CQE_F_BUFFER;
        //   -ERANGE     a buffer id outside the group;
        //   -EOVERFLOW  more bytes than a buffer holds;
        //   -EALREADY   a buffer taken earlier and not recycled since.
        int error = 0;
        bool has_buffer = false;  // the buffer is the caller's now: recycle(id) when done
        // Incremental rings: the bytes are the caller's to read now, but the
        // rest of the buffer is still the kernel's (IORING_CQE_F_BUF_MORE):
        // has_buffer is false and nothing is to be recycled.
        bool more = false;
        std::uint16_t id = 0;
        std::span<const std::byte> bytes;  // what arrived (empty without data)
    };
    // Takes the buffer a completion names.  A completion without a buffer
    // and without data (EOF, -ENOBUFS, an error) gives an empty Delivery.
    // On an incremental ring the bytes start where the buffer's previous
    // completion ended, and the buffer is handed over only with the
    // completion that does not set IORING_CQE_F_BUF_MORE.
    // Rejects what the kernel never sends (a stale or forged CQE, a
    // completion routed to the wrong group) instead of reading outside the
    // group or handing one buffer out twice.
    Delivery take(const Completion& c) noexcept;

    // Takes the buffers of a bundle completion (a recv with .bundle(), Linux
    // 6.10): its `res` bytes fill whole buffers taken from the ring in order,
    // starting with the one the CQE names, the last one partly.  Calls
    // `each(const Delivery&)` per buffer, in order; each is the caller's, as
    // from take(), and may be staged back from inside `each`.  Returns 0, or
    // the error of the first buffer that fails take()'s checks (that buffer
    // and the rest are not taken).  A completion without a buffer is 0 (or
    // -EPROTO with data), as for take().  Not for incremental rings (-EINVAL).
    template <class F>
    int take_bundle(const Completion& c, F&& each) noexcept {
        if (incremental_) return -EINVAL;  // bundles of partly consumed buffers: not supported here
        const auto first = c.buffer_id();
        if (!first) return c.res > 0 ? -EPROTO : 0;
        std::size_t left = c.res > 0 ? static_cast<std::size_t>(c.res) : 0;
        std::uint16_t id = *first;
        for (unsigned n = 0;; ++n) {
            if (n == count_) return -EOVERFLOW;  // more bytes than the whole group holds
            const std::size_t len = left < buffer_size_ ? left : buffer_size_;
            const Delivery d = take_id(id, len);
            if (d.error) return d.error;
            left -= len;
            // Read where the next one sits before `each` may stage this one
            // (which moves it): the kernel took the next entry of the ring.
            const std::uint16_t next = left > 0 ? following(id) : 0;
            each(d);
            if (left == 0) return 0;
            id = next;
        }
    }

    // The buffer a Delivery handed over, as a handle that gives it back when
    // dropped (empty when the delivery carried no whole buffer).
    ProvidedBuffer hold(const Delivery& d) noexcept;

    // Stages buffer `id` to go back to the kernel; publish() makes staged
    // buffers visible with one release store.  recycle() does both.  An id
    // outside the group is ignored.
    void stage(std::uint16_t id) noexcept;
    void publish() noexcept;
    void recycle(std::uint16_t id) noexcept {
        stage(id);
        publish();
    }

private:
    Delivery take_id(std::uint16_t id, std::size_t len) noexcept;
    Delivery take_piece(const Completion& c, std::uint16_t id) noexcept;  // incremental rings
    // The buffer published right after `id` (taken and not staged since).
    std::uint16_t following(std::uint16_t id) const noexcept;

    int ring_fd_ = -1;  // a dup of the ring's fd, for the unregistration
    std::uint16_t group_;
    unsigned count_;
    std::uint32_t buffer_size_;
    io_uring_buf_ring* entries_ = nullptr;  // shared with the kernel
    std::size_t entries_size_ = 0;
    std::byte* data_ = nullptr;
    std::size_t data_size_ = 0;
    std::uint16_t tail_ = 0;               // our tail, ahead of the published one while staging
    std::vector<std::uint64_t> taken_;     // one bit per buffer: take()n and not staged since
    std::vector<std::uint16_t> slot_;      // per buffer: its entry in the ring when last staged
    std::vector<std::uint32_t> consumed_;  // incremental: per buffer, bytes delivered since staged
    bool incremental_ = false;
};

inline ProvidedBuffer BufferRing::hold(const Delivery& d) noexcept {
    return d.has_buffer ? ProvidedBuffer(*this, d.id, d.bytes) : ProvidedBuffer();
}

inline void ProvidedBuffer::reset() noexcept {
    BufferRing* ring = std::exchange(ring_, nullptr);
    bytes_ = {};
    if (!ring) return;
    if (give_back_)
        give_back_(through_, *ring, id_);
    else
        ring->recycle(id_);
}

}  // namespace uringkit
