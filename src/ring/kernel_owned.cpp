#include "uringkit/ring/kernel_owned.hpp"

#include <mutex>
#include <new>
#include <vector>

namespace uringkit {
namespace {
std::mutex kept_mutex;
std::vector<void*>& kept() {
    static auto* list = new std::vector<void*>;  // never destroyed: it outlives every ring
    return *list;
}
}  // namespace

void keep_for_kernel(void* memory) noexcept {
    if (!memory) return;
    const std::lock_guard lock(kept_mutex);
    try {
        kept().push_back(memory);
    } catch (const std::bad_alloc&) {
        // Not listed, still not freed: only a leak checker would notice.
    }
}

std::size_t kept_for_kernel() noexcept {
    const std::lock_guard lock(kept_mutex);
    return kept().size();
}

}  // namespace uringkit
