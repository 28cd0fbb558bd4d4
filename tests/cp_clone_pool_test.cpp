// cp -r's clone pool (copy_clone_pool.cpp): a tree's small files cloned on
// several threads.  Without a file system that shares extents the pool
// still runs with --reflink=always, where every clone fails: each file is
// one line, nothing is left behind, the status is 1.  On XFS (as root, an
// image on a loop device) every thread count clones every file, shared and
// byte-identical.  Labelled for the TSan build.
#include "loop_fs.hpp"

namespace {

using namespace files_test;

void make_tree(const std::string& root, int files) {
    stdfs::create_directories(root + "/sub");
    for (int i = 0; i < files; ++i)
        write_file(root + (i % 3 ? "/f" : "/sub/f") + std::to_string(i), random_bytes(1000u + 37u * i, static_cast<unsigned>(i)));
}

TEST(CpClonePool, ReflinkAlwaysWhereNothingClonesFailsEachFileAndLeavesNothing) {
    Scratch s;
    make_tree(s / "t", 40);
    struct statfs sf {};
    ASSERT_EQ(::statfs(s.dir.c_str(), &sf), 0);
    if (sf.f_type == 0x58465342 || sf.f_type == 0x9123683E) GTEST_SKIP() << "the scratch directory can clone here";
    for (const char* threads : {"4", "1", "0"}) {
        const std::string dst = s / (std::string("u") + threads);
        const Child r = run(cp({"-r", "--reflink=always", "--clone-threads", threads, s / "t", dst}));
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

}  // namespace
