// libFuzzer target for the completion handling of a provided buffer ring:
// arbitrary CQE sequences (res, flags with any buffer id) go through
// BufferRing::take(), with recycles in between.  A model of which buffers
// the application holds predicts every answer: a delivery only of a buffer
// the kernel held, its bytes inside that buffer, every forged CQE refused
// with the right error, never one buffer handed out twice.
//
// Input: 9-byte records: res (int32), flags (uint32), then one byte whose
// low bit asks to recycle buffer (byte >> 1) % 8 if held.
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
            std::fprintf(stderr, "buffer_ring_fuzz: no provided buffer ring here (%s): nothing fuzzed\n", e.what());
            std::abort();
        }
        return made;
    }();
    return g;
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
        const auto d = bufs.take(c);

        const bool named = flags & IORING_CQE_F_BUFFER;
        const unsigned id = flags >> IORING_CQE_BUFFER_SHIFT;
        int want = 0;
        if (!named)
            want = res > 0 ? -EPROTO : 0;
        else if (id >= kCount)
            want = -ERANGE;
        else if (res > 0 && static_cast<std::uint32_t>(res) > kSize)
            want = -EOVERFLOW;
        else if (held[id])
            want = -EALREADY;
        if (d.error != want) std::abort();
        if (d.has_buffer != (named && want == 0)) std::abort();
        if (d.has_buffer) {
            if (d.id != id) std::abort();
            const auto whole = bufs.buffer(d.id);
            if (d.bytes.data() != whole.data() || d.bytes.size() != (res > 0 ? static_cast<std::size_t>(res) : 0u))
                std::abort();
            held[id] = true;
        } else if (!d.bytes.empty()) {
            std::abort();
        }
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
