// Every memory-ordering rule of the ring, in one place (liburing's barrier.h,
// written with std::atomic_ref).  The rest of the library touches shared ring
// memory only through these helpers, so this file is the whole audit.
//
//  - The application writes SQEs, then publishes the SQ tail with a release
//    store: the kernel's acquire load of the tail then sees complete SQEs.
//  - The application reads the CQ tail with an acquire load before reading the
//    CQEs the kernel wrote; it hands CQEs back with a release store of the CQ
//    head, so the kernel does not overwrite a CQE still being read.
//  - With SQPOLL, the tail store and the load of IORING_SQ_NEED_WAKEUP need a
//    full fence between them: otherwise the load can pass the store, the poll
//    thread goes to sleep without seeing the new tail, and the application sees
//    the old flags and never wakes it (a hang).
#pragma once

#include <atomic>
#include "uringkit/cxx20.hpp"
#include "uringkit/sys/sanitizers.hpp"

namespace uringkit::barrier {

template <class T>
inline T load_acquire(const T* p) noexcept {
    return std::atomic_ref<T>(*const_cast<T*>(p)).load(std::memory_order_acquire);
}

template <class T>
inline void store_release(T* p, T v) noexcept {
    std::atomic_ref<T>(*p).store(v, std::memory_order_release);
}

// A value the kernel may change at any time, read without ordering other
// accesses (flags words, the other side's head when only a hint is needed).
template <class T>
inline T load_relaxed(const T* p) noexcept {
    return std::atomic_ref<T>(*const_cast<T*>(p)).load(std::memory_order_relaxed);
}

template <class T>
inline void store_relaxed(T* p, T v) noexcept {
    std::atomic_ref<T>(*p).store(v, std::memory_order_relaxed);
}

inline void full_fence() noexcept {
#if URINGKIT_TSAN
    // g++ 12 refuses atomic_thread_fence under -fsanitize=thread (-Wtsan, an
    // error with -Werror).  This fence orders our stores against the kernel's
    // SQPOLL thread, which TSan cannot observe anyway, so the TSan build
    // issues the same full barrier directly.
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("mfence" ::: "memory");
#else
    __sync_synchronize();
#endif
#else
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace uringkit::barrier
