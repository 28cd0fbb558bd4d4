// sys::page_cache_stat: cachestat(2) and the mincore(2) path give the same,
// exact counts.  FADV_RANDOM turns readahead off, so reading chosen pages
// of an evicted file caches exactly those pages.
#include "uringkit/sys/page_cache.hpp"

#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using uringkit::sys::page_cache_stat;
using uringkit::sys::PageCacheStat;

constexpr std::size_t kPage = 4096;
constexpr std::size_t kPages = 256;  // 1 MiB

class PageCache : public ::testing::TestWithParam<bool> {  // param: force mincore
protected:
    void SetUp() override {
        if (static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) != kPage)
            GTEST_SKIP() << "needs 4 KiB pages";
        char tmpl[] = "/var/tmp/uringkit-pagecache-XXXXXX";
        fd_ = ::mkstemp(tmpl);
        ASSERT_GE(fd_, 0);
        path_ = tmpl;
        const std::vector<char> data(kPages * kPage, 'x');
        ASSERT_EQ(::pwrite(fd_, data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
        ASSERT_EQ(::fdatasync(fd_), 0);
    }
    void TearDown() override {
        if (fd_ >= 0) ::close(fd_);
        if (!path_.empty()) ::unlink(path_.c_str());
    }
    PageCacheStat stat(std::uint64_t off, std::uint64_t len) {
        PageCacheStat pc;
        EXPECT_EQ(page_cache_stat(fd_, off, len, pc, GetParam()), 0);
        return pc;
    }
    // Clean pages go at once; a file system that keeps them anyway
    // (some network or FUSE mounts) cannot run these tests.
    bool evict() {
        ::posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
        return stat(0, kPages * kPage).cached == 0;
    }
    int fd_ = -1;
    std::string path_;
};

TEST_P(PageCache, JustWrittenFileIsAllCached) {
    const PageCacheStat pc = stat(0, kPages * kPage);
    EXPECT_EQ(pc.pages, kPages);
    EXPECT_EQ(pc.cached, kPages);
}

TEST_P(PageCache, EvictedFileIsNotCached) {
    if (!evict()) GTEST_SKIP() << "POSIX_FADV_DONTNEED did not evict clean pages on /var/tmp";
    EXPECT_EQ(stat(0, kPages * kPage).pages, kPages);
}

TEST_P(PageCache, CountsExactlyThePagesRead) {
    if (!evict()) GTEST_SKIP() << "POSIX_FADV_DONTNEED did not evict clean pages on /var/tmp";
    ASSERT_EQ(::posix_fadvise(fd_, 0, 0, POSIX_FADV_RANDOM), 0);
    char buf[kPage];
    for (std::size_t p : {0, 1, 2, 100, 101, 255})
        ASSERT_EQ(::pread(fd_, buf, kPage, p * kPage), ssize_t{kPage});
    EXPECT_EQ(stat(0, kPages * kPage).cached, 6u);
    EXPECT_EQ(stat(100 * kPage, 2 * kPage).cached, 2u);
    // A range that starts and ends inside pages spans both of them.
    const PageCacheStat mid = stat(99 * kPage + 1, kPage);
    EXPECT_EQ(mid.pages, 2u);
    EXPECT_EQ(mid.cached, 1u);
}

TEST_P(PageCache, EmptyRangeAndBadDescriptor) {
    PageCacheStat pc{7, 7, 7};
    EXPECT_EQ(page_cache_stat(fd_, 0, 0, pc, GetParam()), 0);
    EXPECT_EQ(pc.pages, 0u);
    EXPECT_EQ(pc.cached, 0u);
    const int closed = ::dup(fd_);
    ::close(closed);
    errno = 1234;
    EXPECT_EQ(page_cache_stat(closed, 0, kPage, pc, GetParam()), -EBADF);
    EXPECT_EQ(errno, 1234) << "errno is left alone";
}

INSTANTIATE_TEST_SUITE_P(Paths, PageCache, ::testing::Values(false, true),
                         [](const auto& i) { return i.param ? "mincore" : "cachestat"; });

}  // namespace
