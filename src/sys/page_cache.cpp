#include "uringkit/sys/page_cache.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <vector>

#ifndef __NR_cachestat
#define __NR_cachestat 451  // 6.5; one number on every architecture (the unified table)
#endif

namespace uringkit::sys {
namespace {

// <linux/mman.h> has these from 6.5 on; Debian 12 ships 6.1.
struct CachestatRange {
    std::uint64_t off, len;
};
struct Cachestat {
    std::uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

std::uint64_t page_size() noexcept {
    static const auto size = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    return size;
}

int by_mincore(int fd, std::uint64_t offset, std::uint64_t length, PageCacheStat& out) noexcept {
    const std::uint64_t ps = page_size();
    const std::uint64_t first = offset / ps * ps;
    const std::uint64_t span = (offset + length + ps - 1) / ps * ps - first;
    out = {span / ps, 0, 0};
    if (span == 0) return 0;
    // A mapping costs no I/O; mincore only looks at the cache.  Files the
    // caller cannot write are reported fully resident since Linux 5.0 (a
    // side-channel fix), which reads as "warm": the conservative answer.
    void* map = ::mmap(nullptr, span, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(first));
    if (map == MAP_FAILED) return -errno;
    constexpr std::uint64_t kChunk = 64 * 1024;  // pages per mincore call: 64 KiB of vector
    std::vector<unsigned char> vec;
    int rc = 0;
    try {
        vec.resize(std::min<std::uint64_t>(out.pages, kChunk));
    } catch (...) {
        rc = -ENOMEM;
    }
    for (std::uint64_t done = 0; rc == 0 && done < out.pages;) {
        const std::uint64_t n = std::min<std::uint64_t>(out.pages - done, kChunk);
        if (::mincore(static_cast<char*>(map) + done * ps, n * ps, vec.data()) != 0) {
            rc = -errno;
            break;
        }
        for (std::uint64_t i = 0; i < n; ++i) out.cached += vec[i] & 1;
        done += n;
    }
    ::munmap(map, span);
    return rc;
}

int by_cachestat(int fd, std::uint64_t offset, std::uint64_t length, PageCacheStat& out) noexcept {
    const CachestatRange range{offset, length};
    Cachestat cs{};
    if (::syscall(__NR_cachestat, fd, &range, &cs, 0) != 0) return -errno;
    const std::uint64_t ps = page_size();
    out = {(offset + length + ps - 1) / ps - offset / ps, cs.nr_cache, cs.nr_dirty};
    return 0;
}

}  // namespace

int page_cache_stat(int fd, std::uint64_t offset, std::uint64_t length, PageCacheStat& out,
                    bool force_mincore) noexcept {
    if (length == 0) {
        out = {};
        return 0;
    }
    const int saved = errno;
    // ENOSYS before 6.5; EOPNOTSUPP on hugetlbfs: ask mincore instead.
    int rc = force_mincore ? -ENOSYS : by_cachestat(fd, offset, length, out);
    if (rc != 0) rc = by_mincore(fd, offset, length, out);
    errno = saved;
    return rc;
}

bool reads_go_to_workers(int fd) noexcept {
    const int saved = errno;
    char byte;
    iovec iov{&byte, 1};
    const bool refused = ::preadv2(fd, &iov, 1, 0, RWF_NOWAIT) < 0 && errno == EOPNOTSUPP;
    errno = saved;
    return refused;
}

}  // namespace uringkit::sys
