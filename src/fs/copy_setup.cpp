// The ring and its buffers, set up when a path first needs them and sized to
// the work.  A copy that never takes the ring path (a clone, copy_file_range)
// sets up neither: before, every copy paid for a ring and 20 MiB of
// registered buffers up front, and a 3-byte copy took 11.7 ms against
// coreutils' 4 ms.
#include "copy_internal.hpp"

#include <sched.h>

#include <algorithm>

namespace uringkit::fs::detail {
namespace {

unsigned pow2_at_least(unsigned v) {
    unsigned p = 1;
    while (p < v) p <<= 1;
    return p;
}

// Registers the buffers there are (0: large files, 1: small files; an empty
// entry is a sparse slot).  Without CAP_IPC_LOCK pinned pages count against
// RLIMIT_MEMLOCK (8 MiB by default on Debian), which the large one may
// exceed: then only the small one is registered, and large files use plain
// reads and writes.  Called with nothing in flight.
void register_buffers(Ctx& c) {
    if (c.buffers_registered) {
        ++c.syscalls();
        try {
            c.ring->unregister_buffers();
        } catch (const RingError&) {
        }
        c.buffers_registered = c.fixed_big = c.fixed_small = false;
    }
    const iovec big{c.big.get(), c.big ? c.big_size : 0};
    const iovec small{c.small.get(), c.small ? c.small_size : 0};
    const iovec both[2] = {big, small};
    const iovec only_small[2] = {{nullptr, 0}, small};
    for (const auto* iov : {both, only_small}) {
        if (!iov[0].iov_base && !iov[1].iov_base) return;
        ++c.syscalls();
        try {
            c.ring->register_buffers(std::span<const iovec>(iov, 2));
            c.fixed_big = iov[0].iov_base != nullptr;
            c.fixed_small = iov[1].iov_base != nullptr;
            c.buffers_registered = true;
            return;
        } catch (const RingError&) {
        }
    }
}

// Opens, creates and buffered writes to ext4 block, so the kernel runs them
// on io-wq worker threads ("bounded" work), by default up to 4 per CPU.
// Creates in one directory serialize on its lock, and the extra workers spin
// on it: with 64 files in flight, a third of the CPU went to
// rwsem_spin_on_owner.  One worker per CPU made cp -r of 10,000 files in one
// directory ~15% faster warm and ~10% cold on a 2-CPU machine; 4 per CPU was
// no better than the default.  Only -r creates many files, so only -r sets
// it.  Kernels before 5.15 lack the call: no limit.
//
// The limit belongs to the calling thread's io-wq, which all of that
// thread's rings share, not to this ring: ~Ctx puts back what the thread
// had, so a library caller's own rings are not capped afterwards.
void limit_kernel_workers(Ctx& c) {
    unsigned n = c.o.kernel_workers;
    if (n == 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        n = ::sched_getaffinity(0, sizeof set, &set) == 0 ? static_cast<unsigned>(CPU_COUNT(&set))
                                                          : 0;
    }
    if (n == 0) return;
    ++c.syscalls();
    try {
        c.previous_workers = c.ring->set_iowq_max_workers(n, 0);
        c.workers_limited = true;
        ++c.syscalls();  // the restore
    } catch (const RingError&) {
        if (c.o.kernel_workers)
            c.note("--kernel-workers: this kernel cannot limit io_uring's workers (needs 5.15)");
    }
}

}  // namespace

Ring* ensure_ring(Ctx& c) {
    if (c.ring) return &*c.ring;
    if (c.ring_tried || c.o.force_fallback) return nullptr;
    c.ring_tried = true;
    // A tree keeps `inflight` chains of up to 8 steps in flight; one file
    // keeps its read -> write pairs.
    const unsigned entries =
        c.o.recursive ? c.o.inflight * 10 : std::max(c.o.qd, c.o.direct_read_qd) * 2;
    std::string why;
    c.ring = make_ring(pow2_at_least(entries), why);
    if (!c.ring) {
        c.note("io_uring unavailable (" + why +
               "); copying with read/write (or copy_file_range) instead");
        c.result.used_ring = false;
        return nullptr;
    }
    if (c.o.recursive) limit_kernel_workers(c);
    return &*c.ring;
}

bool ensure_big_buffer(Ctx& c, std::size_t bytes) {
    bytes = round_up(std::max<std::size_t>(bytes, kDirectAlign), kDirectAlign);
    if (c.big && c.big_size >= bytes) return true;
    if (c.ring_unusable()) return false;
    c.big = aligned_buffer(bytes);
    c.big_size = bytes;
    if (c.ring) register_buffers(c);
    return true;
}

bool ensure_chains(Ctx& c) {
    if (c.files_registered) return true;
    if (!ensure_ring(c) || c.ring_unusable()) return false;
    ++c.syscalls();
    try {
        c.ring->register_files_sparse(2 * c.o.inflight);
    } catch (const RingError& e) {  // no sparse file table (5.19): EINVAL on older kernels
        c.note(std::string("io_uring unusable (") + e.what() +
               "); copying with read/write (or copy_file_range) instead");
        restore_kernel_workers(c);
        c.ring.reset();
        c.buffers_registered = c.fixed_big = c.fixed_small = false;
        c.result.used_ring = false;
        return false;
    }
    c.files_registered = true;
    c.small_size = std::size_t{c.o.inflight} * kSmallBlock;
    c.small = aligned_buffer(c.small_size);
    register_buffers(c);
    return true;
}

void restore_kernel_workers(Ctx& c) noexcept {
    if (!c.workers_limited || !c.ring) return;
    try {
        c.ring->set_iowq_max_workers(c.previous_workers[0],
                                     c.previous_workers[1]);  // 0 (none set): left as it is
    } catch (const RingError&) {
    }
    c.workers_limited = false;
}

}  // namespace uringkit::fs::detail
