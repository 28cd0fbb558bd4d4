// cp -r's clone pool (copy_pool.cpp): a tree's small files cloned on
// several threads.  Without a file system that shares extents the pool
// still runs with --reflink=always, where every clone fails: each file is
// one line, nothing is left behind, the status is 1.  On XFS (as root, an
// image on a loop device) every thread count clones every file, shared and
// byte-identical.  A new tree's files are stat'd by the workers from the
// descriptors they open (the walk's d_type said they were files): every kind
// of entry still comes out as it is, and one replaced after the walk is
// copied as what it has become, never followed or waited on.  Labelled for
// the TSan build.
#include "loop_fs.hpp"

#include "fs/copy.hpp"

#include <sys/sysmacros.h>

namespace {

using namespace files_test;

void make_tree(const std::string& root, int files) {
    stdfs::create_directories(root + "/sub");
    for (int i = 0; i < files; ++i)
        write_file(root + (i % 3 ? "/f" : "/sub/f") + std::to_string(i),
                   random_bytes(1000u + 37u * i, static_cast<unsigned>(i)));
}

TEST(CpClonePool, ReflinkAlwaysWhereNothingClonesFailsEachFileAndLeavesNothing) {
    Scratch s;
    make_tree(s / "t", 40);
    struct statfs sf {};
    ASSERT_EQ(::statfs(s.dir.c_str(), &sf), 0);
    if (sf.f_type == 0x58465342 || sf.f_type == 0x9123683E)
        GTEST_SKIP() << "the scratch directory can clone here";
    for (const char* threads : {"4", "1", "0"}) {
        const std::string dst = s / (std::string("u") + threads);
        const Child r =
            run(cp({"-r", "--reflink=always", "--clone-threads", threads, s / "t", dst}));
        EXPECT_EQ(r.status, 1) << r.err;
        EXPECT_EQ(count(r.err, "\n"), 40u) << r.err;
        EXPECT_EQ(count(r.err, "cannot clone '"), 40u) << r.err;
        EXPECT_EQ(count(r.err, "(--reflink=always, "), 40u) << r.err;
        std::size_t left = 0;
        for (const auto& e : stdfs::recursive_directory_iterator(dst)) left += e.is_regular_file();
        EXPECT_EQ(left, 0u) << "threads " << threads;
        EXPECT_TRUE(stdfs::is_directory(dst + "/sub"));
    }
    EXPECT_TRUE(temporaries(s.dir).empty());
}

TEST(CpClonePool, XfsTreeClonedByEveryThreadCount) {
    LoopFs fs("xfs", 320, {"-m", "reflink=1"});
    if (!fs.ok()) GTEST_SKIP() << fs.why;
    make_tree(fs / "t", 300);
    for (const char* threads : {"4", "2", "1", "0"}) {
        const std::string dst = fs / (std::string("u") + threads);
        const Child r = run(cp({"-r", "--summary", "--clone-threads", threads, fs / "t", dst}));
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_NE(r.err.find("300 reflink, 0 copy_file_range, 0 ring"), std::string::npos) << r.err;
        for (const auto& e : stdfs::recursive_directory_iterator(fs.mnt + "/t")) {
            if (!e.is_regular_file()) continue;
            const std::string copy = dst + "/" + stdfs::relative(e.path(), fs.mnt + "/t").string();
            ASSERT_EQ(read_file(copy), read_file(e.path().string())) << copy;
            const ExtentMap m = extent_map(copy);
            EXPECT_EQ(m.shared, m.extents) << copy;
            struct stat st {};
            ASSERT_EQ(::stat(copy.c_str(), &st), 0);
            EXPECT_EQ(st.st_mode & 0777, 0644u & ~0022u) << copy;
        }
    }
    EXPECT_TRUE(temporaries(fs.mnt).empty());
}

TEST(CpClonePool, XfsTreeOfEveryKindKeepsSizesModesHolesAndTypes) {
    LoopFs fs("xfs", 320, {"-m", "reflink=1"});
    if (!fs.ok()) GTEST_SKIP() << fs.why;
    const std::string t = fs / "t";
    stdfs::create_directories(t + "/sub/deeper");
    write_file(t + "/small", random_bytes(5000, 1));
    write_file(t + "/empty", "");
    write_file(t + "/large", random_bytes(300 << 10, 2));  // past the small-file limit
    write_file(t + "/sub/deeper/f", random_bytes(123, 3));
    write_file(t + "/private", random_bytes(4096, 4));
    ASSERT_EQ(::chmod((t + "/private").c_str(), 0600), 0);
    write_file(t + "/tool", random_bytes(4096, 5));
    ASSERT_EQ(::chmod((t + "/tool").c_str(), 0755), 0);
    {  // 1 MiB hole, then 64 KiB of data
        const int fd = ::open((t + "/sparse").c_str(), O_WRONLY | O_CREAT, 0644);
        ASSERT_GE(fd, 0);
        const std::string data = random_bytes(64 << 10, 6);
        ASSERT_EQ(::pwrite(fd, data.data(), data.size(), 1 << 20),
                  static_cast<ssize_t>(data.size()));
        ::close(fd);
    }
    ASSERT_EQ(::symlink("../outside", (t + "/link").c_str()), 0);
    ASSERT_EQ(::mkfifo((t + "/fifo").c_str(), 0640), 0);
    const std::string dst = fs / "u";
    const Child r = run(cp({"-r", "--summary", t, dst}));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("7 reflink, 0 copy_file_range, 0 ring, 0 read/write"), std::string::npos)
        << r.err;
    for (const char* name :
         {"small", "empty", "large", "sub/deeper/f", "private", "tool", "sparse"}) {
        const std::string a = t + "/" + name, b = dst + "/" + name;
        ASSERT_EQ(read_file(b), read_file(a)) << name;
        struct stat sa {
        }, sb{};
        ASSERT_EQ(::lstat(a.c_str(), &sa), 0);
        ASSERT_EQ(::lstat(b.c_str(), &sb), 0);
        EXPECT_TRUE(S_ISREG(sb.st_mode)) << name;
        EXPECT_EQ(sb.st_mode & 07777, sa.st_mode & 0777 & ~0022u) << name;
        EXPECT_EQ(sb.st_size, sa.st_size) << name;
        EXPECT_LE(sb.st_blocks, sa.st_blocks) << name << ": holes filled";
        const ExtentMap m = extent_map(b);
        EXPECT_EQ(m.shared, m.extents) << name;
    }
    EXPECT_EQ(stdfs::read_symlink(dst + "/link"), "../outside");
    EXPECT_TRUE(stdfs::is_fifo(stdfs::symlink_status(dst + "/fifo")));
    EXPECT_TRUE(temporaries(fs.mnt).empty());
}

// Between the walk and the clone each of these entries becomes something
// else, as another process could make it.  A file that is now a symlink is
// copied as the symlink (the secret it points to is not read), a FIFO is made
// again (the copy neither opens it for reading nor waits on it), a directory
// is skipped with its own line, a removed file is one line; the rest copy.
TEST(CpClonePool, EntriesReplacedAfterTheWalkAreCopiedAsWhatTheyAreNow) {
    LoopFs fs("xfs", 320, {"-m", "reflink=1"});
    if (!fs.ok()) GTEST_SKIP() << fs.why;
    const std::string t = fs / "t";
    stdfs::create_directories(t);
    for (const char* name : {"a-link", "b-fifo", "c-gone", "d-dir", "e-kept"})
        write_file(t + "/" + name, name);
    write_file(fs / "secret", "not to be copied");
    uringkit::fs::CopyOptions o;
    o.recursive = true;
    o.after_walk = [&] {
        ASSERT_EQ(::unlink((t + "/a-link").c_str()), 0);
        ASSERT_EQ(::symlink((fs / "secret").c_str(), (t + "/a-link").c_str()), 0);
        ASSERT_EQ(::unlink((t + "/b-fifo").c_str()), 0);
        ASSERT_EQ(::mkfifo((t + "/b-fifo").c_str(), 0600), 0);
        ASSERT_EQ(::unlink((t + "/c-gone").c_str()), 0);
        ASSERT_EQ(::unlink((t + "/d-dir").c_str()), 0);
        ASSERT_EQ(::mkdir((t + "/d-dir").c_str(), 0700), 0);
    };
    std::vector<std::string> errors;
    uringkit::fs::CopySink sink;
    sink.error = [&](std::string_view m) { errors.emplace_back(m); };
    const std::string dst = fs / "u";
    const std::vector<std::string> srcs{t};
    const uringkit::fs::CopyResult r = uringkit::fs::copy(srcs, dst, o, sink);
    ASSERT_EQ(errors.size(), 2u) << r.message;
    EXPECT_NE(errors[0].find("c-gone"), std::string::npos) << errors[0];
    EXPECT_NE(errors[0].find("No such file"), std::string::npos) << errors[0];
    EXPECT_NE(errors[1].find("d-dir"), std::string::npos) << errors[1];
    EXPECT_NE(errors[1].find("replaced by a directory"), std::string::npos) << errors[1];
    EXPECT_EQ(stdfs::read_symlink(dst + "/a-link"), fs / "secret");
    EXPECT_TRUE(stdfs::is_fifo(stdfs::symlink_status(dst + "/b-fifo")));
    EXPECT_FALSE(stdfs::exists(stdfs::symlink_status(dst + "/c-gone")));
    EXPECT_FALSE(stdfs::exists(stdfs::symlink_status(dst + "/d-dir")));
    EXPECT_EQ(read_file(dst + "/e-kept"), "e-kept");
    EXPECT_EQ(r.files, 1u);
    EXPECT_EQ(r.symlinks, 1u);
    EXPECT_EQ(r.specials, 1u);
    EXPECT_TRUE(temporaries(fs.mnt).empty());
}

}  // namespace
