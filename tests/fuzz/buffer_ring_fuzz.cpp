// libFuzzer target for the completion handling of a provided buffer ring:
// arbitrary CQE sequences (res, flags with any buffer id) go through
// BufferRing::take(), with recycles in between.  A model of which buffers
// the application holds predicts every answer: a delivery only of a buffer
// the kernel held, its bytes inside that buffer, every forged CQE refused
// with the right error, never one buffer handed out twice.
//
// Input: 9-byte records: res (int32), flags (uint32), then one byte whose
// low bit asks to recycle buffer (byte >> 1) % 8 if held, and whose high bit
// makes the CQE a bundle's (take_bundle: the buffers after the named one are
// the ring's next entries, which the model cannot predict, so it checks what
// must hold whatever they are: no buffer handed out twice, every piece inside
// its buffer and full but the last, the pieces adding up to res).
#include "uringkit/ring/buffer_ring.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace {
constexpr unsigned kCount = 8;
constexpr std::uint32_t kSize = 64;

struct Group {
    std::unique_ptr<uringkit::Ring> ring;
    std::unique_ptr<uringkit::BufferRing> bufs;
};

Group* group() {
    static Group* g = [] {
        auto* made = new Group;
        try {
            made->ring = std::make_unique<uringkit::Ring>(4);
            made->bufs = std::make_unique<uringkit::BufferRing>(*made->ring, 1, kCount, kSize);
        } catch (const std::exception& e) {
            std::fprintf(stderr,
                         "buffer_ring_fuzz: no provided buffer ring here (%s): nothing fuzzed\n",
                         e.what());
            std::abort();
        }
        return made;
    }();
    return g;
}

// take(): the model predicts the answer exactly.
void check_take(uringkit::BufferRing& bufs, bool (&held)[kCount], const uringkit::Completion& c) {
    const bool named = c.flags & IORING_CQE_F_BUFFER;
    const unsigned id = c.flags >> IORING_CQE_BUFFER_SHIFT;
    const auto d = bufs.take(c);
    int want = 0;
    if (!named)
        want = c.res > 0 ? -EPROTO : 0;
    else if (id >= kCount)
        want = -ERANGE;
    else if (c.res > 0 && static_cast<std::uint32_t>(c.res) > kSize)
        want = -EOVERFLOW;
    else if (held[id])
        want = -EALREADY;
    if (d.error != want) std::abort();
    if (d.has_buffer != (named && want == 0)) std::abort();
    if (d.has_buffer) {
        if (d.id != id) std::abort();
        const auto whole = bufs.buffer(d.id);
        if (d.bytes.data() != whole.data() ||
            d.bytes.size() != (c.res > 0 ? static_cast<std::size_t>(c.res) : 0u))
            std::abort();
        held[id] = true;
    } else if (!d.bytes.empty()) {
        std::abort();
    }
}

// take_bundle(): what must hold whatever the ring's next entries are.
void check_bundle(uringkit::BufferRing& bufs, bool (&held)[kCount], const uringkit::Completion& c) {
    const bool named = c.flags & IORING_CQE_F_BUFFER;
    const unsigned id = c.flags >> IORING_CQE_BUFFER_SHIFT;
    const bool named_free = named && id < kCount && !held[id];
    std::size_t left = c.res > 0 ? static_cast<std::size_t>(c.res) : 0, pieces = 0;
    bool short_piece = false;
    const int err = bufs.take_bundle(c, [&](const uringkit::BufferRing::Delivery& d) {
        if (d.error || !d.has_buffer || d.id >= kCount || held[d.id] || short_piece) std::abort();
        if (pieces == 0 && d.id != id) std::abort();
        const auto whole = bufs.buffer(d.id);
        const std::size_t want = left < kSize ? left : kSize;
        if (d.bytes.data() != whole.data() || d.bytes.size() != want) std::abort();
        short_piece = want < kSize;  // only the last piece may be short
        left -= want;
        held[d.id] = true;
        ++pieces;
    });
    if (!named) {
        if (err != (c.res > 0 ? -EPROTO : 0) || pieces != 0) std::abort();
    } else if (err == 0) {
        if (left != 0 || pieces == 0) std::abort();
    } else if (err != -ERANGE && err != -EALREADY && err != -EOVERFLOW) {
        std::abort();
    } else if (named_free && pieces == 0) {
        std::abort();  // a free buffer in range, named first, is always handed out
    }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    uringkit::BufferRing& bufs = *group()->bufs;
    bool held[kCount] = {};
    for (; size >= 9; data += 9, size -= 9) {
        std::int32_t res;
        std::uint32_t flags;
        std::memcpy(&res, data, 4);
        std::memcpy(&flags, data + 4, 4);
        const uringkit::Completion c{0, res, flags};
        if (data[8] & 0x80)
            check_bundle(bufs, held, c);
        else
            check_take(bufs, held, c);
        const unsigned back = (data[8] >> 1) % kCount;
        if ((data[8] & 1) && held[back]) {
            bufs.recycle(static_cast<std::uint16_t>(back));
            held[back] = false;
        }
    }
    for (unsigned i = 0; i < kCount; ++i)
        if (held[i]) bufs.recycle(static_cast<std::uint16_t>(i));
    return 0;
}
