// Raw io_uring system calls.  Like liburing's syscall layer they return the
// kernel's result or -errno and never read or write the global errno, so the
// hot path has one convention: negative means error, and the value says which.
#pragma once

#include <csignal>
#include <cstddef>
#include "uringkit/cxx20.hpp"

struct io_uring_params;

namespace uringkit::sys {

int io_uring_setup(unsigned entries, io_uring_params* params) noexcept;
int io_uring_register(int fd, unsigned opcode, const void* arg, unsigned nr_args) noexcept;

#if defined(__x86_64__)
// io_uring_enter is the one system call on the hot path (once per batch).  On
// x86-64 it is issued inline, as liburing does: glibc's syscall(3) plus saving
// and restoring errno cost ~50 instructions a call, more than the rest of a
// NOP's user-space path (measured with callgrind, bench/results/ring_nop.md).
inline int io_uring_enter(int fd, unsigned to_submit, unsigned min_complete, unsigned flags,
                          const void* arg, std::size_t argsz) noexcept {
    long r;
    register long r10 __asm__("r10") = static_cast<long>(flags);
    register const void* r8 __asm__("r8") = arg;
    register std::size_t r9 __asm__("r9") = argsz;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "0"(426L /* __NR_io_uring_enter */), "D"(static_cast<long>(fd)),
                       "S"(static_cast<long>(to_submit)), "d"(static_cast<long>(min_complete)),
                       "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return static_cast<int>(r);  // the kernel's result or -errno; errno is never touched
}
#else
int io_uring_enter(int fd, unsigned to_submit, unsigned min_complete, unsigned flags,
                   const void* arg, std::size_t argsz) noexcept;
#endif

}  // namespace uringkit::sys
