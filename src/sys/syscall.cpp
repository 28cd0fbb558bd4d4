#include "uringkit/sys/syscall.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace uringkit::sys {
namespace {
// syscall(2) reports failure through errno; turn it into -errno right here and
// restore the caller's errno so nothing outside observes a change.
inline int result_of(long r) noexcept {
    if (r >= 0) return static_cast<int>(r);
    return -errno;
}
}  // namespace

int io_uring_setup(unsigned entries, io_uring_params* params) noexcept {
    const int saved = errno;
    const int r = result_of(::syscall(__NR_io_uring_setup, entries, params));
    errno = saved;
    return r;
}

#if !defined(__x86_64__)  // inline in the header on x86-64
int io_uring_enter(int fd, unsigned to_submit, unsigned min_complete, unsigned flags,
                   const void* arg, std::size_t argsz) noexcept {
    const int saved = errno;
    const int r =
        result_of(::syscall(__NR_io_uring_enter, fd, to_submit, min_complete, flags, arg, argsz));
    errno = saved;
    return r;
}
#else
static_assert(__NR_io_uring_enter == 426, "the inline io_uring_enter in syscall.hpp uses 426");
#endif

int io_uring_register(int fd, unsigned opcode, const void* arg, unsigned nr_args) noexcept {
    const int saved = errno;
    const int r = result_of(::syscall(__NR_io_uring_register, fd, opcode, arg, nr_args));
    errno = saved;
    return r;
}

}  // namespace uringkit::sys
