// Replaces the global operator new and delete of the test binary that
// includes this header (in exactly one source file: replacement functions
// cannot be inline) and counts the allocations made while g_counting is set,
// from any thread.  For tests that check a hot path allocates nothing, and
// (g_failing) for tests that make every allocation fail with std::bad_alloc.
#pragma once

#include "uringkit/sys/sanitizers.hpp"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

inline std::atomic<bool> g_counting{false};
inline std::atomic<std::uint64_t> g_allocations{0};
// While set, operator new throws std::bad_alloc (not under TSan, see below).
inline std::atomic<bool> g_failing{false};

#if URINGKIT_TSAN
// clang's ThreadSanitizer links its own operator new statically: a second
// definition does not link, so under it nothing is counted and the tests
// check kAllocationsCounted before they read g_allocations.
inline constexpr bool kAllocationsCounted = false;
#else
inline constexpr bool kAllocationsCounted = true;

// GCC cannot see that the replaced operator new below allocates with malloc.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(std::size_t n) {
    if (g_counting.load(std::memory_order_relaxed))
        g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (g_failing.load(std::memory_order_relaxed)) throw std::bad_alloc();
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
    return operator new(n);
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}
#endif  // URINGKIT_TSAN
