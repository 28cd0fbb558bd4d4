// Raw io_uring system calls.  Like liburing's syscall layer they return the
// kernel's result or -errno and never read or write the global errno, so the
// hot path has one convention: negative means error, and the value says which.
#pragma once

#include <csignal>
#include <cstddef>

struct io_uring_params;

namespace uringkit::sys {

int io_uring_setup(unsigned entries, io_uring_params* params) noexcept;
int io_uring_enter(int fd, unsigned to_submit, unsigned min_complete, unsigned flags,
                   const void* arg, std::size_t argsz) noexcept;
int io_uring_register(int fd, unsigned opcode, const void* arg, unsigned nr_args) noexcept;

}  // namespace uringkit::sys
