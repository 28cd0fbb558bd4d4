// `uringkit cp` on real file systems, each made for the test on a loop device
// (XFS with and without reflink, btrfs, ext4) or a tmpfs: which path each
// file takes (--summary), that a clone shares its extents (FIEMAP's shared
// flag) and uses no new blocks (statfs), that --reflink=never shares
// nothing, that sparse files stay sparse on every path, that
// --reflink=always fails clearly where it cannot clone, and that the data is
// byte-identical on every path.  Skipped with the reason where the file
// systems cannot be made (not root, no loop devices, no mkfs.xfs/mkfs.btrfs).
#include "loop_fs.hpp"

#include <regex>

namespace {

using namespace files_test;

#define MAKE_FS(var, ...)    \
    LoopFs var(__VA_ARGS__); \
    if (!var.ok()) GTEST_SKIP() << var.why

// "files by path: 1 reflink, 0 copy_file_range, 0 ring, 0 read/write"
struct Paths {
    int reflink = -1, kernel = -1, ring = -1, read_write = -1;
};
Paths paths_of(const std::string& err) {
    Paths p;
    std::smatch m;
    if (std::regex_search(
            err, m,
            std::regex(R"((\d+) reflink, (\d+) copy_file_range, (\d+) ring, (\d+) read/write)"))) {
        p.reflink = std::stoi(m[1]);
        p.kernel = std::stoi(m[2]);
        p.ring = std::stoi(m[3]);
        p.read_write = std::stoi(m[4]);
    }
    return p;
}

// A file with holes: 1 MiB of data, 7 MiB hole, 1 MiB + 17 bytes of data, a hole to 16 MiB.
void write_sparse(const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0) << path;
    const std::string a = random_bytes(1 << 20, 1), b = random_bytes((1 << 20) + 17, 2);
    ASSERT_EQ(::pwrite(fd, a.data(), a.size(), 0), static_cast<ssize_t>(a.size()));
    ASSERT_EQ(::pwrite(fd, b.data(), b.size(), 8 << 20), static_cast<ssize_t>(b.size()));
    ASSERT_EQ(::ftruncate(fd, 16 << 20), 0);
    ASSERT_EQ(::fsync(fd), 0);
    ::close(fd);
}

// The sparse file's holes stayed holes: no data in [3 MiB, 8 MiB) nor in
// [11 MiB, 16 MiB).  (The edges are left to the file system: XFS rounds
// extents and preallocates past a write, coreutils' copies alike.)
void expect_holes_kept(const std::string& path, const std::string& what) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0) << path;
    for (const auto& [begin, end] :
         {std::pair<off_t, off_t>{3 << 20, 8 << 20}, {11 << 20, 16 << 20}}) {
        const off_t data = ::lseek(fd, begin, SEEK_DATA);
        EXPECT_TRUE(data < 0 || data >= end)
            << what << "data at " << data << " in the hole [" << begin << ", " << end << ")";
    }
    ::close(fd);
}

std::uint64_t allocated(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return static_cast<std::uint64_t>(st.st_blocks) * 512;
}

Child cp_summary(std::vector<std::string> args) {
    std::vector<std::string> v{URINGKIT_CLI, "cp", "--summary"};
    v.insert(v.end(), args.begin(), args.end());
    return run(v);
}

void expect_clone_shares_and_uses_no_blocks(LoopFs& fs) {
    write_file(fs / "src", random_bytes(8 << 20, 7));
    const std::uint64_t before = fs.used_bytes();
    const Child r = cp_summary({fs / "src", fs / "dst"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(fs / "dst"), read_file(fs / "src"));
    const Paths p = paths_of(r.err);
    EXPECT_EQ(p.reflink, 1) << r.err;
    const ExtentMap m = extent_map(fs / "dst");
    EXPECT_GT(m.extents, 0u);
    EXPECT_EQ(m.shared, m.extents) << "every extent of the clone is shared with the source";
    // 8 MiB of data: a clone adds metadata only (well under 1 MiB).
    EXPECT_LT(fs.used_bytes() - before, 1u << 20) << "the clone used new data blocks";
    EXPECT_TRUE(temporaries(fs.mnt).empty());
}

void expect_never_shares(LoopFs& fs) {
    write_file(fs / "src", random_bytes(8 << 20, 8));
    const std::uint64_t before = fs.used_bytes();
    const Child r = cp_summary({"--reflink=never", fs / "src", fs / "dst"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(fs / "dst"), read_file(fs / "src"));
    const Paths p = paths_of(r.err);
    EXPECT_EQ(p.reflink, 0) << r.err;
    EXPECT_EQ(p.kernel, 0) << "copy_file_range would clone here: --reflink=never must not use it\n"
                           << r.err;
    EXPECT_EQ(p.ring, 1) << r.err;
    EXPECT_EQ(extent_map(fs / "dst").shared, 0u);
    EXPECT_EQ(extent_map(fs / "src").shared, 0u);
    EXPECT_GE(fs.used_bytes() - before, 8u << 20) << "a byte copy uses its own blocks";
}

TEST(CpFilesystems, XfsReflinkAutoClonesSharingExtentsWithNoNewBlocks) {
    MAKE_FS(fs, "xfs", 320, {"-m", "reflink=1"});
    expect_clone_shares_and_uses_no_blocks(fs);
}

TEST(CpFilesystems, BtrfsReflinkAutoClonesSharingExtentsWithNoNewBlocks) {
    MAKE_FS(fs, "btrfs", 256);
    expect_clone_shares_and_uses_no_blocks(fs);
}

TEST(CpFilesystems, XfsReflinkNeverCopiesOnTheRingAndSharesNothing) {
    MAKE_FS(fs, "xfs", 320, {"-m", "reflink=1"});
    expect_never_shares(fs);
}

TEST(CpFilesystems, BtrfsReflinkNeverCopiesOnTheRingAndSharesNothing) {
    MAKE_FS(fs, "btrfs", 256);
    expect_never_shares(fs);
}

// XFS made without reflink: FICLONE is refused once, then copy_file_range
// copies (it cannot clone there either), and nothing is shared.
TEST(CpFilesystems, XfsWithoutReflinkFallsBackToCopyFileRange) {
    MAKE_FS(fs, "xfs", 320, {"-m", "reflink=0"});
    write_file(fs / "src", random_bytes(3 << 20, 9));
    write_file(fs / "src2", random_bytes(5000, 10));
    stdfs::create_directory(fs.mnt + "/out");
    const Child r = cp_summary({fs / "src", fs / "src2", fs / "out"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(fs / "out/src"), read_file(fs / "src"));
    EXPECT_EQ(read_file(fs / "out/src2"), read_file(fs / "src2"));
    const Paths p = paths_of(r.err);
    EXPECT_EQ(p.reflink, 0) << r.err;
    EXPECT_EQ(p.kernel, 2) << r.err;
    EXPECT_EQ(extent_map(fs / "out/src").shared, 0u);
}

// --reflink=always where no clone is possible: one clear line per file,
// status 1, no destination and no temporary left.
TEST(CpFilesystems, ReflinkAlwaysFailsClearlyOnExt4AndTmpfs) {
    for (const char* type : {"ext4", "tmpfs"}) {
        MAKE_FS(fs, type, 64);
        write_file(fs / "src", random_bytes(100000, 11));
        const Child r = run(cp({"--reflink=always", fs / "src", fs / "dst"}));
        EXPECT_EQ(r.status, 1) << type << ": " << r.err;
        EXPECT_EQ(r.err, "uringkit cp: cannot clone '" + fs / "src" + "' to '" + fs / "dst" +
                             "' (--reflink=always, " + type +
                             "): Operation not supported (errno 95)\n")
            << type;
        EXPECT_FALSE(stdfs::exists(fs / "dst")) << type;
        EXPECT_TRUE(temporaries(fs.mnt).empty()) << type;
        // --reflink alone means always, as with coreutils.
        EXPECT_EQ(run(cp({"--reflink", fs / "src", fs / "dst"})).status, 1) << type;
        // Between two file systems as well (EXDEV).
        Scratch other;
        const Child x = run(cp({"--reflink=always", fs / "src", other / "dst"}));
        EXPECT_EQ(x.status, 1) << x.err;
        EXPECT_NE(x.err.find("cannot clone"), std::string::npos) << x.err;
    }
}

// A sparse file on every path keeps its holes where they were and its bytes.
TEST(CpFilesystems, SparseFilesStaySparseOnEveryPath) {
    struct Case {
        const char* type;
        std::vector<std::string> mkfs;
        std::vector<std::string> args;
        const char* path;  // expected in --summary
    };
    const std::vector<Case> cases = {
        {"xfs", {"-m", "reflink=1"}, {}, "reflink"},
        {"xfs", {"-m", "reflink=1"}, {"--reflink=never"}, "ring"},
        {"xfs", {"-m", "reflink=0"}, {}, "copy_file_range"},
        {"btrfs", {}, {}, "reflink"},
        {"btrfs", {}, {"--reflink=never"}, "ring"},
        {"ext4", {}, {}, "copy_file_range"},
        {"ext4", {}, {"--engine", "ring"}, "ring"},
        {"tmpfs", {}, {"--engine", "kernel"}, "copy_file_range"},
        {"tmpfs", {}, {"--engine", "ring"}, "ring"},
    };
    for (const Case& k : cases) {
        LoopFs fs(k.type,
                  std::string(k.type) == "xfs"     ? 320
                  : k.type == std::string("btrfs") ? 256
                                                   : 64,
                  k.mkfs);
        if (!fs.ok()) GTEST_SKIP() << fs.why;
        write_sparse(fs / "src");
        std::vector<std::string> a = k.args;
        a.push_back(fs / "src");
        a.push_back(fs / "dst");
        const Child r = cp_summary(a);
        const std::string what =
            std::string(k.type) + " " + (k.args.empty() ? "" : k.args[0]) + ": ";
        ASSERT_EQ(r.status, 0) << what << r.err;
        EXPECT_NE(r.err.find(std::string("1 ") + k.path), std::string::npos) << what << r.err;
        EXPECT_EQ(read_file(fs / "dst"), read_file(fs / "src")) << what;
        expect_holes_kept(fs / "dst", what);
        EXPECT_LT(allocated(fs / "dst"), 6u << 20) << what << "16 MiB with 2 MiB of data";
    }
}

// Every size around the block boundaries, byte-identical on each path.
TEST(CpFilesystems, EveryPathCopiesEverySizeByteIdentical) {
    const std::size_t sizes[] = {0, 1, 4095, 4097, (1 << 20) + 1, (3 << 20) + 17};
    struct Case {
        const char* type;
        std::vector<std::string> args;
    };
    const std::vector<Case> cases = {
        {"xfs", {}},
        {"xfs", {"--reflink=never"}},
        {"btrfs", {}},
        {"ext4", {"--engine", "kernel"}},
        {"ext4", {"--engine", "ring"}},
        {"tmpfs", {}},
        {"tmpfs", {"--engine", "kernel"}},
    };
    for (const Case& k : cases) {
        LoopFs fs(k.type, std::string(k.type) == "xfs"     ? 320
                          : k.type == std::string("btrfs") ? 256
                                                           : 64);
        if (!fs.ok()) GTEST_SKIP() << fs.why;
        for (std::size_t n : sizes) {
            const std::string src = fs / ("s" + std::to_string(n)),
                              dst = fs / ("d" + std::to_string(n));
            write_file(src, random_bytes(n, static_cast<unsigned>(n)));
            std::vector<std::string> a{URINGKIT_CLI, "cp", "--bs", "64k"};
            a.insert(a.end(), k.args.begin(), k.args.end());
            a.push_back(src);
            a.push_back(dst);
            const Child r = run(a);
            ASSERT_EQ(r.status, 0) << k.type << ": " << r.err;
            EXPECT_EQ(read_file(dst), read_file(src)) << k.type << " " << n << " bytes";
        }
    }
}

// The same without mounting anything (any user): wherever the scratch
// directory is, each forced path and auto copy every size byte-identical,
// and a sparse file keeps its holes.
TEST(CpFilesystems, EveryPathInTheScratchDirectory) {
    Scratch s;
    const std::size_t sizes[] = {0, 1, 4095, 4097, (1 << 20) + 1, (3 << 20) + 17};
    write_sparse(s / "sparse");
    for (const char* engine : {"auto", "ring", "kernel"}) {
        for (std::size_t n : sizes) {
            const std::string src = s / ("s" + std::to_string(n)),
                              dst = s / ("d" + std::to_string(n) + engine);
            write_file(src, random_bytes(n, static_cast<unsigned>(n)));
            const Child r = run(cp({"--engine", engine, "--bs", "64k", src, dst}));
            ASSERT_EQ(r.status, 0) << engine << ": " << r.err;
            EXPECT_EQ(read_file(dst), read_file(src)) << engine << " " << n << " bytes";
        }
        const std::string dst = s / (std::string("sparse-") + engine);
        const Child r = run(cp({"--engine", engine, s / "sparse", dst}));
        ASSERT_EQ(r.status, 0) << engine << ": " << r.err;
        EXPECT_EQ(read_file(dst), read_file(s / "sparse")) << engine;
        expect_holes_kept(dst, engine);
    }
    EXPECT_TRUE(temporaries(s.dir).empty());
}

// cp -r on XFS: every file of the tree, small ones included, is a clone.
TEST(CpFilesystems, XfsTreeIsClonedFileByFile) {
    MAKE_FS(fs, "xfs", 320, {"-m", "reflink=1"});
    stdfs::create_directories(fs.mnt + "/t/sub");
    for (int i = 0; i < 100; ++i)
        write_file(fs / ("t/" + std::string(i % 2 ? "sub/" : "") + "f" + std::to_string(i)),
                   random_bytes(4096 + 100u * i, static_cast<unsigned>(i)));
    write_file(fs / "t/big", random_bytes(4 << 20, 200));
    write_sparse(fs / "t/sparse");
    const std::uint64_t before = fs.used_bytes();
    const Child r = cp_summary({"-r", fs / "t", fs / "u"});
    ASSERT_EQ(r.status, 0) << r.err;
    const Paths p = paths_of(r.err);
    EXPECT_EQ(p.reflink, 102) << r.err;
    EXPECT_EQ(p.ring + p.kernel + p.read_write, 0) << r.err;
    for (const auto& e : stdfs::recursive_directory_iterator(fs.mnt + "/t")) {
        if (!e.is_regular_file()) continue;
        const std::string copy = fs.mnt + "/u/" + stdfs::relative(e.path(), fs.mnt + "/t").string();
        EXPECT_EQ(read_file(copy), read_file(e.path().string())) << copy;
        const ExtentMap m = extent_map(copy);
        EXPECT_EQ(m.shared, m.extents) << copy;
    }
    expect_holes_kept(fs / "u/sparse", "tree: ");
    // 100 inodes and directory blocks, no data: well under the 5.6 MiB of data.
    EXPECT_LT(fs.used_bytes() - before, 2u << 20);
}

// Cached (just written), the small files go to the read/write threads; with
// --copy-threads 0 to the ring's chains.  The large one: copy_file_range.
TEST(CpFilesystems, Ext4TreeUsesThreadsOrChainsForSmallFilesAndCopyFileRangeForLarge) {
    MAKE_FS(fs, "ext4", 64);
    stdfs::create_directories(fs.mnt + "/t");
    for (int i = 0; i < 50; ++i)
        write_file(fs / ("t/f" + std::to_string(i)), random_bytes(3000, static_cast<unsigned>(i)));
    write_file(fs / "t/big", random_bytes(3 << 20, 99));
    for (const bool chains : {false, true}) {
        const std::string dst = fs / (chains ? "chains" : "threads");
        const Child r = chains ? cp_summary({"-r", "--copy-threads", "0", fs / "t", dst})
                               : cp_summary({"-r", fs / "t", dst});
        ASSERT_EQ(r.status, 0) << r.err;
        const Paths p = paths_of(r.err);
        EXPECT_EQ(p.ring, chains ? 50 : 0) << r.err;
        EXPECT_EQ(p.read_write, chains ? 0 : 50) << r.err;
        EXPECT_EQ(p.kernel, 1) << r.err;
        EXPECT_EQ(p.reflink, 0) << r.err;
        for (int i = 0; i < 50; ++i)
            EXPECT_EQ(read_file(dst + "/f" + std::to_string(i)),
                      read_file(fs / ("t/f" + std::to_string(i))));
        EXPECT_EQ(read_file(dst + "/big"), read_file(fs / "t/big"));
    }
}

// A lone small file needs no ring: no io_uring_setup at all (a ring and its
// buffers cost more than the copy); --engine ring sets one up.
TEST(CpFilesystems, SmallFileSetsUpNoRing) {
    if (!have_program("strace")) GTEST_SKIP() << "needs strace to count io_uring_setup";
    no_leak_check_in_traced_children();
    MAKE_FS(fs, "ext4", 64);
    write_file(fs / "src", "abc");
    for (const bool ring : {false, true}) {
        const std::string trace = fs.base + "/trace";
        std::vector<std::string> a{
            "strace", "-f", "-qq", "-o", trace, "-e", "trace=io_uring_setup", URINGKIT_CLI, "cp"};
        if (ring) a.insert(a.end(), {"--engine", "ring"});
        a.insert(a.end(), {fs / "src", fs / (ring ? "ring" : "auto")});
        const Child r = run(a);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(read_file(fs / (ring ? "ring" : "auto")), "abc");
        EXPECT_EQ(count(read_file(trace), "io_uring_setup("), ring ? 1u : 0u) << read_file(trace);
    }
}

}  // namespace
