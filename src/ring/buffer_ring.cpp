#include "uringkit/ring/buffer_ring.hpp"

#include "uringkit/sys/error.hpp"
#include "uringkit/sys/syscall.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <sys/mman.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace uringkit {
namespace {
void* map_anonymous(std::size_t size, const char* what) {
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    // Not an io_uring call: a plain system_error (RingError is for those).
    if (p == MAP_FAILED) throw std::system_error(errno, std::system_category(), what);
    return p;
}
}  // namespace

namespace {
// io_uring_buf_reg as the kernel reads it since 6.4, where the 6.1 header's
// `pad` became `flags`.
struct BufReg {
    std::uint64_t ring_addr;
    std::uint32_t ring_entries;
    std::uint16_t bgid;
    std::uint16_t flags;
    std::uint64_t resv[3];
};
static_assert(sizeof(BufReg) == sizeof(io_uring_buf_reg));
constexpr std::uint16_t kPbufRingInc = 2;  // IOU_PBUF_RING_INC, 6.12
}  // namespace

BufferRing::BufferRing(Ring& ring, std::uint16_t group, unsigned count, std::uint32_t buffer_size,
                       bool incremental)
    : group_(group), count_(count), buffer_size_(buffer_size), incremental_(incremental) {
    if (count == 0 || count > 32768 || (count & (count - 1)) != 0 || buffer_size == 0)
        throw std::invalid_argument(
            "BufferRing: count must be a power of two up to 32768, buffer_size above 0");
    ring_fd_ = ::fcntl(ring.fd(), F_DUPFD_CLOEXEC, 0);
    if (ring_fd_ < 0)
        throw std::system_error(errno, std::system_category(),
                                "fcntl(F_DUPFD_CLOEXEC) of the ring fd");
    // The entry array must be page-aligned: mmap gives that.
    entries_size_ = count * sizeof(io_uring_buf);
    try {
        entries_ =
            static_cast<io_uring_buf_ring*>(map_anonymous(entries_size_, "mmap of a buffer ring"));
    } catch (...) {
        ::close(ring_fd_);
        throw;
    }
    data_size_ = static_cast<std::size_t>(count) * buffer_size;
    try {
        data_ = static_cast<std::byte*>(map_anonymous(data_size_, "mmap of provided buffers"));
        BufReg reg{};
        reg.ring_addr = reinterpret_cast<std::uintptr_t>(entries_);
        reg.ring_entries = count;
        reg.bgid = group;
        reg.flags = incremental ? kPbufRingInc : 0;
        const int r = sys::io_uring_register(ring_fd_, IORING_REGISTER_PBUF_RING, &reg, 1);
        if (r < 0)
            throw RingError(
                incremental
                    ? "io_uring_register(REGISTER_PBUF_RING, IOU_PBUF_RING_INC: an incremental "
                      "provided buffer ring, Linux 6.12)"
                    : "io_uring_register(REGISTER_PBUF_RING: a provided buffer ring, Linux 5.19)",
                -r);
    } catch (...) {
        if (data_) ::munmap(data_, data_size_);
        ::munmap(entries_, entries_size_);
        ::close(ring_fd_);
        throw;
    }
    taken_.assign((count + 63) / 64, 0);
    slot_.assign(count, 0);
    if (incremental) consumed_.assign(count, 0);
    for (unsigned i = 0; i < count; ++i) stage(static_cast<std::uint16_t>(i));
    publish();
}

BufferRing::Delivery BufferRing::take(const Completion& c) noexcept {
    Delivery d;
    const auto id = c.buffer_id();
    if (!id) {
        if (c.res > 0) d.error = -EPROTO;
        return d;
    }
    if (incremental_) return take_piece(c, *id);
    if (c.res > 0 && static_cast<std::uint32_t>(c.res) > buffer_size_) {
        d.error = *id >= count_ ? -ERANGE : -EOVERFLOW;
        return d;
    }
    return take_id(*id, c.res > 0 ? static_cast<std::size_t>(c.res) : 0);
}

BufferRing::Delivery BufferRing::take_piece(const Completion& c, std::uint16_t id) noexcept {
    Delivery d;
    const std::size_t len = c.res > 0 ? static_cast<std::size_t>(c.res) : 0;
    if (id >= count_) {
        d.error = -ERANGE;
    } else if (taken_[id / 64] >> (id % 64) & 1) {
        d.error = -EALREADY;
    } else if (consumed_[id] + len > buffer_size_) {
        d.error = -EOVERFLOW;
    } else {
        d.id = id;
        d.bytes = {data_ + static_cast<std::size_t>(id) * buffer_size_ + consumed_[id], len};
        if (c.buffer_more()) {
            d.more = true;
            consumed_[id] += static_cast<std::uint32_t>(len);
        } else {
            taken_[id / 64] |= std::uint64_t{1} << (id % 64);
            d.has_buffer = true;
        }
    }
    return d;
}

BufferRing::Delivery BufferRing::take_id(std::uint16_t id, std::size_t len) noexcept {
    Delivery d;
    if (id >= count_) {
        d.error = -ERANGE;
    } else if (taken_[id / 64] >> (id % 64) & 1) {
        d.error = -EALREADY;
    } else {
        taken_[id / 64] |= std::uint64_t{1} << (id % 64);
        d.has_buffer = true;
        d.id = id;
        d.bytes = data(id, len);
    }
    return d;
}

std::uint16_t BufferRing::following(std::uint16_t id) const noexcept {
    // The kernel hands out entries in ring order and never rewrites their
    // bid; the next entry stays ours to read until its buffer is staged again,
    // which cannot happen before its own completion is taken.
    const unsigned next = (slot_[id] + 1u) & (count_ - 1);
    return reinterpret_cast<const io_uring_buf*>(entries_)[next].bid;
}

BufferRing::BufferRing(BufferRing&& o) noexcept
    : ring_fd_(std::exchange(o.ring_fd_, -1)),
      group_(o.group_),
      count_(o.count_),
      buffer_size_(o.buffer_size_),
      entries_(std::exchange(o.entries_, nullptr)),
      entries_size_(o.entries_size_),
      data_(std::exchange(o.data_, nullptr)),
      data_size_(o.data_size_),
      tail_(o.tail_),
      taken_(std::move(o.taken_)),
      slot_(std::move(o.slot_)),
      consumed_(std::move(o.consumed_)),
      incremental_(o.incremental_) {}

BufferRing::~BufferRing() {
    if (!entries_) return;
    io_uring_buf_reg reg{};
    reg.bgid = group_;
    // Unregister before unmapping: from then on the kernel picks no buffer here.
    sys::io_uring_register(ring_fd_, IORING_UNREGISTER_PBUF_RING, &reg, 1);
    ::munmap(data_, data_size_);
    ::munmap(entries_, entries_size_);
    ::close(ring_fd_);
}

void BufferRing::stage(std::uint16_t id) noexcept {
    // Index from the start of the ring, not through `entries_->bufs`: the 6.1
    // uapi header declares bufs with __DECLARE_FLEX_ARRAY, whose empty struct
    // has size 1 in C++, which moves `bufs` to offset 8 while the kernel reads
    // entry 0 at offset 0 (every entry would be written 8 bytes off).
    // An id outside the group (a forged or stale CQE's) is never staged:
    // its entry would give the kernel an address past the group's memory.
    if (id >= count_) return;
    taken_[id / 64] &= ~(std::uint64_t{1} << (id % 64));
    slot_[id] = static_cast<std::uint16_t>(tail_ & (count_ - 1));
    if (incremental_) consumed_[id] = 0;
    io_uring_buf& b = reinterpret_cast<io_uring_buf*>(entries_)[tail_ & (count_ - 1)];
    b.addr = reinterpret_cast<std::uintptr_t>(data_ + static_cast<std::size_t>(id) * buffer_size_);
    b.len = buffer_size_;
    b.bid = id;
    ++tail_;
}

void BufferRing::publish() noexcept {
    // The tail shares the first entry's reserved field; the kernel reads it
    // with an acquire load, so the entries written above are complete.
    barrier::store_release(&entries_->tail, tail_);
}

}  // namespace uringkit
