// `uringkit cp` with several operands and partial failures, as coreutils:
// every operand and every file of a tree that can be copied is, each
// failure is one line, the status is that of the first failure.  FIFO and
// character-device operands have their contents copied; inside a tree they
// are made again or reported, never dropped silently.
#include "files_test_support.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstring>
#include <thread>

namespace {

using namespace files_test;

TEST(CpOperands, MissingOperandIsReportedTheOthersCopied) {
    Scratch s;
    write_file(s / "f1", "one");
    write_file(s / "f2", random_bytes(500000, 2));
    stdfs::create_directory(s.dir / "dir");
    const Child r = run(cp({s / "f1", s / "missing", s / "f2", s / "dir"}));
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.err,
              "uringkit cp: cannot stat '" + s / "missing" + "': No such file or directory\n");
    EXPECT_EQ(read_file(s / "dir/f1"), "one");
    EXPECT_EQ(read_file(s / "dir/f2"), read_file(s / "f2"));
    EXPECT_FALSE(stdfs::exists(s.dir / "dir/missing"));
}

// As nobody: one unreadable directory and one unreadable file; the rest of
// the tree is copied, one line each, status 1 (as coreutils).
TEST(CpOperands, TreeWithUnreadablePartsCopiesEverythingElse) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to drop to nobody";
    Scratch s;
    ASSERT_EQ(::chmod(s.dir.c_str(), 0777), 0);
    stdfs::create_directories(s.dir / "t" / "closed");
    stdfs::create_directories(s.dir / "t" / "open");
    for (int i = 0; i < 30; ++i)
        write_file(s / ("t/open/f" + std::to_string(i)), random_bytes(700u * i, i));
    write_file(s / "t/big", random_bytes(1 << 20, 9));
    write_file(s / "t/closed/hidden", "h");
    write_file(s / "t/secret", "s");
    ASSERT_EQ(::chmod((s / "t/closed").c_str(), 0700), 0);
    ASSERT_EQ(::chmod((s / "t/secret").c_str(), 0600), 0);
    for (const char* ring : {"ring", "fallback"}) {
        const std::string dst = s / (std::string("copy-") + ring);
        std::vector<std::string> a = cp({"-r", s / "t", dst});
        if (std::string(ring) == "fallback") a.insert(a.begin(), NO_URING);
        const Child r = run(a, {}, [] { become_nobody(); });
        EXPECT_EQ(r.status, 1) << r.err;
        EXPECT_EQ(count(r.err, "\n") - count(r.err, "io_uring unavailable"), 2u) << r.err;
        EXPECT_NE(r.err.find("cannot open directory '" + s / "t/closed" + "': Permission denied"),
                  std::string::npos)
            << r.err;
        EXPECT_NE(r.err.find("cannot open '" + s / "t/secret" + "': Permission denied"),
                  std::string::npos)
            << r.err;
        for (int i = 0; i < 30; ++i)
            EXPECT_EQ(read_file(dst + "/open/f" + std::to_string(i)),
                      read_file(s / ("t/open/f" + std::to_string(i))));
        EXPECT_EQ(read_file(dst + "/big"), read_file(s / "t/big"));
        EXPECT_TRUE(stdfs::is_directory(dst + "/closed"));
        EXPECT_FALSE(stdfs::exists(dst + "/secret"));
        EXPECT_TRUE(temporaries(s.dir).empty());
    }
}

TEST(CpOperands, FifoAndCharacterDeviceOperandsHaveTheirContentsCopied) {
    Scratch s;
    // A process substitution: /dev/fd/N, a pipe.
    const Child r =
        run({"bash", "-c", std::string(URINGKIT_CLI) + " cp <(echo hi) '" + (s / "out") + "'"});
    if (r.status == 127) GTEST_SKIP() << "no bash for <(...)";
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(s / "out"), "hi\n");

    // A named FIFO with a writer.
    ASSERT_EQ(::mkfifo((s / "fifo").c_str(), 0600), 0);
    const std::string data = random_bytes(300000, 6);
    std::thread writer([&] {
        const int fd = ::open((s / "fifo").c_str(), O_WRONLY);
        ASSERT_GE(fd, 0);
        EXPECT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
        ::close(fd);
    });
    const Child f = run(cp({s / "fifo", s / "from-fifo"}));
    writer.join();
    ASSERT_EQ(f.status, 0) << f.err;
    EXPECT_EQ(read_file(s / "from-fifo"), data);

    // A symlink to /dev/null: an empty regular file.
    ASSERT_EQ(::symlink("/dev/null", (s / "null").c_str()), 0);
    write_file(s / "was-full", "old bytes");
    for (const char* dst : {"empty", "was-full"}) {
        const Child n = run(cp({s / "null", s / dst}));
        ASSERT_EQ(n.status, 0) << n.err;
        EXPECT_TRUE(stdfs::is_regular_file(s / dst));
        EXPECT_EQ(read_file(s / dst), "");
    }
    // /dev/null as the destination: written in place, never replaced.
    const Child d = run(cp({s / "from-fifo", "/dev/null"}));
    ASSERT_EQ(d.status, 0) << d.err;
    EXPECT_TRUE(stdfs::is_character_file("/dev/null"));
    EXPECT_TRUE(temporaries(s.dir).empty());
}

// Inside a tree: a FIFO is made again; a character device too as root, and
// as nobody (mknod needs CAP_MKNOD) it is reported with status 1.
TEST(CpOperands, SpecialFilesInATreeAreMadeAgainOrReported) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root for mknod and to drop to nobody";
    Scratch s;
    ASSERT_EQ(::chmod(s.dir.c_str(), 0777), 0);
    stdfs::create_directories(s.dir / "t");
    write_file(s / "t/file", "f");
    ASSERT_EQ(::mkfifo((s / "t/fifo").c_str(), 0640), 0);
    if (::mknod((s / "t/null").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
        GTEST_SKIP() << "mknod: " << std::strerror(errno);
    const Child root = run(cp({"-r", s / "t", s / "as-root"}), {}, [] { ::umask(022); });
    ASSERT_EQ(root.status, 0) << root.err;
    struct stat st {};
    ASSERT_EQ(::lstat((s / "as-root/fifo").c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0640u);
    ASSERT_EQ(::lstat((s / "as-root/null").c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
    EXPECT_EQ(st.st_rdev, makedev(1, 3));

    const Child user = run(cp({"-r", s / "t", s / "as-nobody"}), {}, [] { become_nobody(); });
    EXPECT_EQ(user.status, 1) << user.err;
    EXPECT_EQ(user.err, "uringkit cp: cannot create special file '" + s / "as-nobody/null" +
                            "': Operation not permitted\n");
    ASSERT_EQ(::lstat((s / "as-nobody/fifo").c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
    EXPECT_EQ(read_file(s / "as-nobody/file"), "f");
}

TEST(CpOperands, PreserveKeepsSymlinkTimes) {
    Scratch s;
    stdfs::create_directories(s.dir / "t");
    write_file(s / "t/target", "t");
    ASSERT_EQ(::symlink("target", (s / "t/link").c_str()), 0);
    const struct timespec times[2] = {{1100000000, 11}, {1300000000, 13}};
    ASSERT_EQ(::utimensat(AT_FDCWD, (s / "t/link").c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
    const Child r = run(cp({"-r", "-p", s / "t", s / "copy"}));
    ASSERT_EQ(r.status, 0) << r.err;
    struct stat st {};
    ASSERT_EQ(::lstat((s / "copy/link").c_str(), &st), 0);
    ASSERT_TRUE(S_ISLNK(st.st_mode));
    EXPECT_EQ(st.st_mtim.tv_sec, 1300000000);
    EXPECT_EQ(st.st_mtim.tv_nsec, 13);
    EXPECT_EQ(stdfs::read_symlink(s.dir / "copy/link"), "target");
}

}  // namespace
