// Where Task frames come from.  A coroutine frame is a heap allocation, and a
// Task made and finished for every request (a nested co_await, send_all)
// would put malloc and free on the hot path.  Frames up to 2 KiB instead come
// from per-thread free lists, one per 64-byte size class: after the first
// request of a kind, making a frame is a pointer pop.  No lock: each thread
// has its own lists, and a frame freed on another thread simply joins that
// thread's.  Each list keeps at most 256 frames; the rest go back to the heap.
//
// Built with AddressSanitizer or ThreadSanitizer, frames come straight from
// the heap, so a use of a finished frame is still caught.
#pragma once

#include <cstddef>
#include "uringkit/cxx20.hpp"
#include "uringkit/sys/sanitizers.hpp"

namespace uringkit::async::detail {

// Whether this translation unit's build pools frames (the library and its
// tests are built with the same flags).
#if URINGKIT_ASAN || URINGKIT_TSAN
inline constexpr bool kFramesPooled = false;
#else
inline constexpr bool kFramesPooled = true;
#endif

void* frame_allocate(std::size_t bytes);
void frame_free(void* frame, std::size_t bytes) noexcept;

}  // namespace uringkit::async::detail
