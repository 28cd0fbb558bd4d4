// sys::reads_go_to_workers: true exactly where io_uring hands every read to
// an io-wq worker.  Checked against the kernel itself: after one read of a
// cached file through a ring, an io-wq worker thread ("iou-wrk-<tid>") exists
// on tmpfs and none on ext4 (a cache hit there completes inline).  A cold
// file on ext4 (EAGAIN from RWF_NOWAIT) is still not a worker's file.
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/page_cache.hpp"

#include "loop_fs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <vector>

namespace {

using uringkit::sys::reads_go_to_workers;

// A file of `bytes` bytes in `dir`, open for reading; removed by the destructor.
struct File {
    File(const std::string& dir, std::size_t bytes) : path(dir + "/uringkit-handoff-XXXXXX") {
        fd = ::mkstemp(path.data());
        if (fd < 0) return;
        const std::vector<char> data(bytes, 'h');
        if (bytes && ::pwrite(fd, data.data(), bytes, 0) != static_cast<ssize_t>(bytes)) {
            ::close(fd);
            fd = -1;
        }
    }
    ~File() {
        if (fd >= 0) ::close(fd);
        ::unlink(path.c_str());
    }
    std::string path;
    int fd = -1;
};

// statfs magic of `dir`, 0 when it cannot be had.
unsigned long fs_type(const std::string& dir) {
    struct statfs sf {};
    return ::statfs(dir.c_str(), &sf) == 0 ? static_cast<unsigned long>(sf.f_type) : 0;
}

// io-wq worker threads of this process: the kernel names them iou-wrk-<tid>.
int io_wq_workers() {
    int n = 0;
    DIR* d = ::opendir("/proc/self/task");
    if (!d) return -1;
    while (const dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
        std::string name;
        std::getline(comm, name);
        n += name.rfind("iou-wrk-", 0) == 0;
    }
    ::closedir(d);
    return n;
}

// Waits (up to 10 s) for the io-wq workers of rings this process closed to
// exit, so a count after a read sees only the new ring's.
bool no_workers_left() {
    for (int i = 0; i < 1000; ++i) {
        if (io_wq_workers() == 0) return true;
        ::usleep(10'000);
    }
    return false;
}

// Reads 4 KiB of `fd` once through a fresh ring; returns the io-wq workers
// alive while the ring still exists (a worker lingers for seconds after its
// work), or -1 when no ring can be had here.
int workers_after_ring_read(int fd) {
    try {
        uringkit::Ring ring(8);
        char buf[4096];
        ring.prepare(uringkit::op::Read(uringkit::Fd{fd}, buf, sizeof buf, 0)).user_data(1);
        if (ring.submit_and_wait(1) < 0) return -1;
        int res = -1;
        ring.for_each_completion([&](const uringkit::Completion& c) { res = c.res; });
        EXPECT_EQ(res, 4096);
        return io_wq_workers();
    } catch (const std::exception&) {
        return -1;
    }
}

// The probe's answer for a cached file in `dir` is `expected`, and the
// kernel agrees: one read of it on a ring started an io-wq worker exactly
// when the probe said so.
void expect_answer_kernel_agrees(const char* dir, unsigned long magic, bool expected) {
    if (fs_type(dir) != magic) GTEST_SKIP() << dir << " is not the file system this test needs";
    File f(dir, 8192);
    ASSERT_GE(f.fd, 0);
    EXPECT_EQ(reads_go_to_workers(f.fd), expected);
    ASSERT_TRUE(no_workers_left()) << "a worker of an earlier ring still runs";
    const int workers = workers_after_ring_read(f.fd);
    if (workers < 0) GTEST_SKIP() << "no io_uring here to cross-check";
    // Debian's 6.1 refuses RWF_NOWAIT on tmpfs yet reads it on the ring
    // without a worker (6.12 and 6.18 hand it off): the probe answers for
    // the file, so there it is cautious, and auto runs pread where the ring
    // would have read inline.  Said, not failed: the answer is the file's.
    if (expected && workers == 0) {
        utsname u{};
        ::uname(&u);
        GTEST_SKIP() << "Linux " << u.release << " read a cached block of " << dir
                     << " on the ring without an io-wq worker, though the file refuses "
                        "RWF_NOWAIT: the probe is cautious on this kernel";
    }
    EXPECT_EQ(workers > 0, expected)
        << workers << " io-wq workers after one cached read in " << dir;
}

TEST(ReadHandoff, TmpfsReadsGoToWorkers) {
    expect_answer_kernel_agrees("/dev/shm", TMPFS_MAGIC, true);
}

TEST(ReadHandoff, Ext4ReadsDoNot) {
    expect_answer_kernel_agrees("/tmp", EXT4_SUPER_MAGIC, false);
}

TEST(ReadHandoff, EmptyTmpfsFileIsAnsweredToo) {
    if (fs_type("/dev/shm") != TMPFS_MAGIC) GTEST_SKIP() << "/dev/shm is not a tmpfs here";
    File f("/dev/shm", 0);  // a read at end of file: the flags are checked first
    ASSERT_GE(f.fd, 0);
    EXPECT_TRUE(reads_go_to_workers(f.fd));
}

TEST(ReadHandoff, ColdExt4FileIsNotAWorkersFile) {
    if (fs_type("/tmp") != EXT4_SUPER_MAGIC) GTEST_SKIP() << "/tmp is not ext4 here";
    File f("/tmp", 1 << 16);
    ASSERT_GE(f.fd, 0);
    ASSERT_EQ(::fdatasync(f.fd), 0);
    ASSERT_EQ(::posix_fadvise(f.fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    // RWF_NOWAIT on a cache miss says EAGAIN: a miss, not the file system's nature.
    EXPECT_FALSE(reads_go_to_workers(f.fd));
}

TEST(ReadHandoff, DirectDescriptorAndBadFdAreNot) {
    if (fs_type("/tmp") != EXT4_SUPER_MAGIC) GTEST_SKIP() << "/tmp is not ext4 here";
    File f("/tmp", 8192);
    ASSERT_GE(f.fd, 0);
    const int direct = ::open(f.path.c_str(), O_RDONLY | O_DIRECT);
    ASSERT_GE(direct, 0);
    EXPECT_FALSE(reads_go_to_workers(direct));  // EINVAL: a 1-byte O_DIRECT read
    ::close(direct);
    errno = 1234;
    EXPECT_FALSE(reads_go_to_workers(-1));  // EBADF
    EXPECT_EQ(errno, 1234);                 // errno as it was
}

TEST(ReadHandoff, TmpfsDirectDescriptorStillGoesToWorkers) {
    if (fs_type("/dev/shm") != TMPFS_MAGIC) GTEST_SKIP() << "/dev/shm is not a tmpfs here";
    File f("/dev/shm", 8192);
    ASSERT_GE(f.fd, 0);
    const int direct = ::open(f.path.c_str(), O_RDONLY | O_DIRECT);
    if (direct < 0) GTEST_SKIP() << "tmpfs refuses O_DIRECT on this kernel (before 6.6)";
    EXPECT_TRUE(reads_go_to_workers(direct));
    ::close(direct);
}

class ReadHandoffOnLoop : public ::testing::TestWithParam<const char*> {};

TEST_P(ReadHandoffOnLoop, DiskFileSystemReadsDoNot) {
    files_test::LoopFs fs(GetParam(), 320);
    if (!fs.ok()) GTEST_SKIP() << fs.why;
    File f(fs.mnt, 8192);
    ASSERT_GE(f.fd, 0);
    EXPECT_FALSE(reads_go_to_workers(f.fd));
}

INSTANTIATE_TEST_SUITE_P(FileSystems, ReadHandoffOnLoop, ::testing::Values("xfs", "btrfs"));

}  // namespace
