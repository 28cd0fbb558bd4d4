// Pieces the file tools share: page-aligned buffers (O_DIRECT and registered
// buffers want them) and the ring they set up.  Internal to src/fs.
#pragma once

#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/error.hpp"

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <string>

namespace uringkit::fs::detail {

struct AlignedFree {
    void operator()(void* p) const noexcept { std::free(p); }
};
using Buffer = std::unique_ptr<char, AlignedFree>;

inline Buffer aligned_buffer(std::size_t size) {
    void* p = std::aligned_alloc(4096, (size + 4095) / 4096 * 4096);
    if (!p) throw std::bad_alloc();
    return Buffer(static_cast<char*>(p));
}

// The tools' ring: one thread owns it (SINGLE_ISSUER, DEFER_TASKRUN where the
// kernel has them).  nullopt with `why` set when io_uring cannot be set up,
// so the caller can fall back to plain system calls and say why.
inline std::optional<Ring> make_ring(unsigned entries, std::string& why) {
    try {
        return Ring::create(entries, single_thread_options(entries * 2));
    } catch (const RingError& e) {
        why = e.what();
        return std::nullopt;
    }
}

}  // namespace uringkit::fs::detail
