// Memory freed under the kernel, seen under ASan: while armed, every block
// of `watch_size` bytes that is freed is filled with a canary just before
// it is freed (the sanitizer's free hook runs while the block is still
// live) and listed, so a later write into it (the kernel finishing a read
// into a buffer its owner let go) is seen.  ASan's quarantine keeps freed
// blocks unused for a while, so the canary survives unless the kernel
// writes.  No allocation in the hooks: they run inside malloc and free.
// Without ASan nothing is watched (`active` is false).
#pragma once

#include <gtest/gtest.h>
#include "uringkit/sys/sanitizers.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <functional>

#if URINGKIT_ASAN
// The sanitizer allocator's interface (sanitizer/allocator_interface.h,
// which GCC does not install; libasan exports both).
extern "C" {
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*,
                                                                  std::size_t),
                                              void (*free_hook)(const volatile void*));
std::size_t __sanitizer_get_allocated_size(const volatile void* p);
}
#endif

namespace freed_watch {
constexpr std::size_t kMax = 16;
inline std::atomic<bool> armed{false};
inline std::atomic<std::size_t> watch_size{0};
inline std::atomic<std::size_t> count{0};

#if URINGKIT_ASAN
constexpr bool active = true;
constexpr unsigned char kCanary = 0xA5;
inline const volatile void* blocks[kMax];

inline void on_free(const volatile void* p) {
    if (!armed.load() || !p) return;
    const std::size_t n = __sanitizer_get_allocated_size(p);
    if (n != watch_size.load()) return;
    std::memset(const_cast<void*>(p), kCanary, n);
    const std::size_t i = count.fetch_add(1);
    if (i < kMax) blocks[i] = p;
}
inline void on_malloc(const volatile void*, std::size_t) {}

// The first byte of `p` the canary no longer holds, or -1.  Reads freed
// memory on purpose, so outside ASan's checks.
__attribute__((no_sanitize("address"))) inline long first_changed(const volatile void* p,
                                                                  std::size_t n) {
    const volatile unsigned char* b = static_cast<const volatile unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i)
        if (b[i] != kCanary) return static_cast<long>(i);
    return -1;
}
#else
constexpr bool active = false;
#endif

// Watch blocks of `size` bytes from now on (armed separately, around the
// call under test, so the test's own frees are not watched).
inline void install(std::size_t size) {
    watch_size = size;
    count = 0;
#if URINGKIT_ASAN
    __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
#endif
}
inline void uninstall() {
#if URINGKIT_ASAN
    __sanitizer_install_malloc_and_free_hooks(nullptr, nullptr);
#endif
}

// After the kernel was let go on: fails the test for each watched block it
// wrote into (waiting with `wait` for the write to land), and touches the
// block as a caller reusing its heap would, so ASan names it and where it
// was freed (heap-use-after-free).
inline void expect_untouched(const std::function<bool(const std::function<bool()>&)>& wait) {
#if URINGKIT_ASAN
    const std::size_t freed = std::min(count.load(), kMax);
    for (std::size_t i = 0; i < freed; ++i) {
        const volatile void* block = blocks[i];
        long at = -1;
        wait([&] { return (at = first_changed(block, watch_size)) >= 0; });
        if (at >= 0) {
            ADD_FAILURE() << "the kernel wrote into memory the library had freed, at byte " << at;
            const volatile unsigned char* b = static_cast<const volatile unsigned char*>(block);
            (void)b[at];
        }
    }
#else
    (void)wait;
#endif
}
}  // namespace freed_watch
