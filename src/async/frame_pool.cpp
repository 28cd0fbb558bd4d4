#include "uringkit/async/frame_pool.hpp"

#include <new>

namespace uringkit::async::detail {
namespace {

constexpr bool kPooled = kFramesPooled;
constexpr std::size_t kGranule = 64;
constexpr std::size_t kClasses = 32;  // frames up to 2 KiB
constexpr unsigned kMaxPerClass = 256;

struct FreeList {
    void* head = nullptr;
    unsigned count = 0;
};

// A trivially destructible flag outlives the pool's destructor, so a frame
// freed during thread exit after the pool is gone goes to the heap.
thread_local bool t_pool_gone = false;

struct Pool {
    FreeList lists[kClasses];
    ~Pool() {
        t_pool_gone = true;
        for (FreeList& l : lists) {
            while (l.head) {
                void* next = *static_cast<void**>(l.head);
                ::operator delete(l.head);
                l.head = next;
            }
        }
    }
};
thread_local Pool t_pool;

std::size_t size_class(std::size_t bytes) noexcept {
    return (bytes - 1) / kGranule;
}

}  // namespace

void* frame_allocate(std::size_t bytes) {
    if (!kPooled || bytes == 0 || bytes > kGranule * kClasses || t_pool_gone)
        return ::operator new(bytes);
    const std::size_t c = size_class(bytes);
    FreeList& l = t_pool.lists[c];
    if (void* p = l.head) {
        l.head = *static_cast<void**>(p);
        --l.count;
        return p;
    }
    // The whole class size, so any frame of the class can reuse the block.
    return ::operator new((c + 1) * kGranule);
}

void frame_free(void* frame, std::size_t bytes) noexcept {
    if (!kPooled || bytes == 0 || bytes > kGranule * kClasses || t_pool_gone) {
        ::operator delete(frame);
        return;
    }
    FreeList& l = t_pool.lists[size_class(bytes)];
    if (l.count >= kMaxPerClass) {
        ::operator delete(frame);
        return;
    }
    *static_cast<void**>(frame) = l.head;
    l.head = frame;
    ++l.count;
}

}  // namespace uringkit::async::detail
