// How much of a file range sits in the page cache.  cachestat(2) (Linux 6.5)
// answers in one call without touching the file; before it, mincore(2) over a
// read-only mapping answers the same question a page at a time.  The file
// tools use it to pick a path: a cold source is read with O_DIRECT (one copy
// of the bytes instead of two, and no eviction of other files), a warm one
// through the cache.
#pragma once

#include <cstdint>
#include "uringkit/cxx20.hpp"

namespace uringkit::sys {

struct PageCacheStat {
    std::uint64_t pages = 0;   // pages the range spans
    std::uint64_t cached = 0;  // of those, in the page cache
    std::uint64_t dirty = 0;   // of those, dirty (cachestat only; 0 from mincore)
};

// Residency of [offset, offset + length) of `fd`.  Returns 0, or -errno when
// neither cachestat nor mincore can answer (a file that cannot be mapped on a
// kernel before 6.5).  `force_mincore` skips cachestat, so tests reach the
// older path on new kernels.
int page_cache_stat(int fd, std::uint64_t offset, std::uint64_t length, PageCacheStat& out,
                    bool force_mincore = false) noexcept;

// Whether every io_uring read of `fd` goes to an io-wq kernel worker: true
// when the file's file system lacks FMODE_NOWAIT (tmpfs up to at least Linux
// 6.18), so io_uring never tries a read inline, even a page-cache hit, and
// pread(2) beats the ring (a worker hand-off per read).  Asked with a 1-byte
// preadv2(RWF_NOWAIT) at offset 0: EOPNOTSUPP is the file system's answer,
// the same for every file on it.  EAGAIN (a cache miss on ext4, XFS, btrfs,
// served inline or by a task-work retry, not a worker) and anything else
// (EBADF, EINVAL for O_DIRECT, end of file) read as false.  A length of 0
// would not do: the kernel answers it before looking at the flags.  Costs one
// system call and reads at most one cached byte; errno is left as it was.
bool reads_go_to_workers(int fd) noexcept;

}  // namespace uringkit::sys
