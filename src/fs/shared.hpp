// Pieces the file tools share: page-aligned buffers (O_DIRECT and registered
// buffers want them), the ring they set up, and the blocking read of one
// block (readfiles' blocking engines, cp --verify).  Internal to src/fs.
#pragma once

#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/error.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <string>

namespace uringkit::fs::detail {

struct AlignedFree {
    void operator()(void* p) const noexcept { std::free(p); }
};
using Buffer = std::unique_ptr<char, AlignedFree>;

inline Buffer aligned_buffer(std::size_t size) {
    void* p = std::aligned_alloc(4096, (size + 4095) / 4096 * 4096);
    if (!p) throw std::bad_alloc();
    return Buffer(static_cast<char*>(p));
}

// Reads up to `len` bytes at `offset`, going on after a short read until
// `len` or end of file (a read of 0), since procfs and sysfs files answer in
// pieces; EINTR and EAGAIN are retried.  On an O_DIRECT descriptor
// (`direct`) a read that ends off a 4 KiB boundary is the end of the file:
// a read from there would be refused as unaligned.  Returns the bytes read
// (fewer than `len`: the end of the file), or -errno.
inline ssize_t read_full(int fd, char* buf, std::size_t len, std::uint64_t offset, bool direct,
                         std::uint64_t& syscalls) {
    std::size_t got = 0;
    while (got < len) {
        ++syscalls;
        const ssize_t n = ::pread(fd, buf + got, len - got, static_cast<off_t>(offset + got));
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return -errno;
        }
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
        if (direct && got % 4096) break;
    }
    return static_cast<ssize_t>(got);
}

// The tools' ring: one thread owns it (SINGLE_ISSUER, DEFER_TASKRUN where the
// kernel has them).  nullopt with `why` set when io_uring cannot be used, so
// the caller can fall back to plain system calls and say why.  Usable means
// a NOP went round the ring: a sandbox may allow io_uring_setup and refuse
// io_uring_enter (seccomp, EPERM), and a ring that cannot be entered must
// take the same fallback as one that cannot be set up, before any work is
// given to it.  The NOP's io_uring_enter is the one system call this adds.
inline std::optional<Ring> make_ring(unsigned entries, std::string& why) {
    try {
        std::optional<Ring> ring = Ring::create(entries, single_thread_options(entries * 2));
        ring->prepare(op::Nop{});
        if (const int r = ring->submit_and_wait(1); r < 0) {
            why = RingError("io_uring_enter", -r).what();
            return std::nullopt;
        }
        ring->for_each_completion([](const Completion&) {});
        return ring;
    } catch (const RingError& e) {
        why = e.what();
        return std::nullopt;
    }
}

}  // namespace uringkit::fs::detail
