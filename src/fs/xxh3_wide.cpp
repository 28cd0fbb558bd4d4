// XXH3's inner loop in AVX2: this file alone is compiled with -mavx2 (see
// CMakeLists.txt), and nothing here runs unless the CPU has it.  xxhash.h
// inlined whole (XXH_INLINE_ALL renames everything XXH_INLINE_*, so it does
// not meet libxxhash.a's symbols) picks its AVX2 loop from __AVX2__.
// Measured: a cached 1 GiB file, `uringkit xxhsum -H3`, 106 ms of user CPU
// with libxxhash.a's SSE2 loop against xxhsum's 20 ms (perf stat).
#include "xxh3_wide.hpp"

#if URINGKIT_XXH3_WIDE && !defined(__AVX2__)
#error "xxh3_wide.cpp is compiled with -mavx2 on x86-64 (src/fs/CMakeLists.txt)"
#endif

#if URINGKIT_XXH3_WIDE
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace uringkit::fs::readfiles_detail {

void xxh3_64_update_wide(void* state, const void* data, std::size_t n) noexcept {
    XXH3_64bits_update(static_cast<XXH3_state_t*>(state), data, n);
}

void xxh3_128_update_wide(void* state, const void* data, std::size_t n) noexcept {
    XXH3_128bits_update(static_cast<XXH3_state_t*>(state), data, n);
}

}  // namespace uringkit::fs::readfiles_detail
#else
namespace uringkit::fs::readfiles_detail {

void xxh3_64_update_wide(void*, const void*, std::size_t) noexcept {}
void xxh3_128_update_wide(void*, const void*, std::size_t) noexcept {}

}  // namespace uringkit::fs::readfiles_detail
#endif
