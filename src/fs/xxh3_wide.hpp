// XXH3's streaming update compiled for AVX2, for the CPUs that have it
// (libxxhash.a's own is built for SSE2, and its run-time dispatch lives only
// in the shared library, which uringkit does not load).  Not installed.
#pragma once

#include <cstddef>

// Built where the compiler targets x86-64 (CMakeLists.txt compiles
// xxh3_wide.cpp with -mavx2 there).
#if defined(__x86_64__)
#define URINGKIT_XXH3_WIDE 1
#else
#define URINGKIT_XXH3_WIDE 0
#endif

namespace uringkit::fs::readfiles_detail {

// True when the CPU runs AVX2 and the kernel saves its registers (and the
// build targets x86-64).  Asked of CPUID once per process (readfiles_hash.cpp,
// which is not compiled for AVX2).
bool xxh3_wide_available() noexcept;
// XXH3_64bits_update / XXH3_128bits_update on a state made by libxxhash's
// XXH3_createState (the same 0.8 header lays both out alike), in AVX2.
// Only when xxh3_wide_available().
void xxh3_64_update_wide(void* state, const void* data, std::size_t n) noexcept;
void xxh3_128_update_wide(void* state, const void* data, std::size_t n) noexcept;

}  // namespace uringkit::fs::readfiles_detail
