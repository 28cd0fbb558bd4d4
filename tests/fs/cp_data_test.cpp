// `uringkit cp`: the copy is byte-identical to the source for every size
// around the block boundaries, sparse files stay sparse, trees keep their
// types, modes and link targets, nothing temporary is left, and the refusals
// (onto itself, into itself, a directory without -r) leave everything as it was.
#include "files_test_support.hpp"

#include <sys/stat.h>

namespace {

using namespace files_test;

mode_t mode_of(const std::string& p) {
    struct stat st {};
    EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
    return st.st_mode;
}

TEST(CpData, EverySizeAroundTheBlockIsByteIdentical) {
    Scratch s;
    constexpr std::size_t bs = 64 * 1024;
    const std::size_t sizes[] = {0, 1, 4095, 4096, 4097, bs - 1, bs, bs + 1, 3 * 1024 * 1024 + 17};
    for (const char* reads :
         {"cache", "direct"}) {  // direct: aligned reads O_DIRECT, the tail cached
        for (const char* qd : {"1", "4", "16"}) {
            for (std::size_t n : sizes) {
                const std::string src = s / ("s" + std::to_string(n));
                const std::string dst = s / ("d" + std::to_string(n) + "-" + qd + reads);
                write_file(src, random_bytes(n, static_cast<unsigned>(n)));
                ASSERT_EQ(::chmod(src.c_str(), 0754), 0);
                const Child r = run(cp({"--engine", "ring", "--bs", "64k", "--qd", qd,
                                        "--source-reads", reads, src, dst}));
                ASSERT_EQ(r.status, 0) << r.err;
                EXPECT_EQ(r.err, "");
                EXPECT_EQ(read_file(dst), read_file(src))
                    << n << " bytes, qd " << qd << ", reads " << reads;
                EXPECT_EQ(mode_of(dst) & 07777, 0754u);
            }
        }
    }
    EXPECT_TRUE(temporaries(s.dir).empty());
}

// coreutils' rule for a new file: the source's permission bits less the
// umask, never its set-user/group-ID bits unless -p kept the owner too.
TEST(CpData, NewFileGetsTheSourceModeLessTheUmaskAndNoSetIdBits) {
    Scratch s;
    write_file(s / "g", "group writable");
    ASSERT_EQ(::chmod((s / "g").c_str(), 0775), 0);
    for (const auto& [mask, want] :
         {std::pair{022u, 0755u}, std::pair{077u, 0700u}, std::pair{0u, 0775u}}) {
        const std::string dst = s / ("g-" + std::to_string(mask));
        const Child r = run(cp({s / "g", dst}), {}, [m = mask] { ::umask(m); });
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(mode_of(dst) & 07777, want) << "umask " << mask;
        EXPECT_EQ(read_file(dst), "group writable");
    }
    write_file(s / "suid", "setuid root");
    ASSERT_EQ(::chmod((s / "suid").c_str(), 06755), 0);
    for (const bool preserve : {false, true}) {
        const std::string dst = s / (preserve ? "suid-p" : "suid-plain");
        const Child r = run(preserve ? cp({"-p", s / "suid", dst}) : cp({s / "suid", dst}), {},
                            [] { ::umask(022); });
        ASSERT_EQ(r.status, 0) << r.err;
        struct stat st {};
        ASSERT_EQ(::stat(dst.c_str(), &st), 0);
        if (preserve) {  // the owner was kept (root may chown), so the set-ID bits may stay
            EXPECT_EQ(st.st_mode & 07777, 06755u);
        } else {
            EXPECT_EQ(st.st_mode & 07777, 0755u) << "set-ID bits must go without -p";
        }
    }
}

// -p as an ordinary user copying another user's setuid file: the owner
// cannot be kept, so neither are the set-ID bits.
TEST(CpData, PreserveDropsSetIdBitsWhenTheOwnerCannotBeKept) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs root to make a file of another owner and drop to nobody";
    Scratch s;
    ASSERT_EQ(::chmod(s.dir.c_str(), 0777), 0);
    write_file(s / "suid", "root's setuid program");
    ASSERT_EQ(::chmod((s / "suid").c_str(), 06755), 0);
    const Child r = run(cp({"-p", s / "suid", s / "mine"}), {}, [] { become_nobody(); });
    ASSERT_EQ(r.status, 0) << r.err;
    struct stat st {};
    ASSERT_EQ(::stat((s / "mine").c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, kNobody);
    EXPECT_EQ(st.st_mode & 07777, 0755u);
    EXPECT_EQ(read_file(s / "mine"), "root's setuid program");
}

// An existing destination is written in place, as cp does: the same inode,
// so its other hard links see the new bytes, and its own mode stays.
TEST(CpData, ExistingDestinationIsWrittenInPlace) {
    Scratch s;
    write_file(s / "src", random_bytes(200000, 3));
    ASSERT_EQ(::chmod((s / "src").c_str(), 0644), 0);
    write_file(s / "dst", std::string(300000, 'o'));  // longer than the source: truncated
    ASSERT_EQ(::chmod((s / "dst").c_str(), 0600), 0);
    ASSERT_EQ(::link((s / "dst").c_str(), (s / "other-name").c_str()), 0);
    struct stat before {};
    ASSERT_EQ(::stat((s / "dst").c_str(), &before), 0);
    const Child r = run(cp({s / "src", s / "dst"}));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(s / "dst"), read_file(s / "src"));
    EXPECT_EQ(read_file(s / "other-name"), read_file(s / "src")) << "the hard link was split";
    struct stat after {};
    ASSERT_EQ(::stat((s / "dst").c_str(), &after), 0);
    EXPECT_EQ(before.st_ino, after.st_ino);
    EXPECT_EQ(after.st_nlink, 2u);
    EXPECT_EQ(after.st_mode & 07777, 0600u);
    EXPECT_TRUE(temporaries(s.dir).empty());

    // Through a symlink: the link stays, its target gets the bytes.
    write_file(s / "target", "old target");
    ASSERT_EQ(::symlink("target", (s / "via-link").c_str()), 0);
    ASSERT_EQ(run(cp({s / "src", s / "via-link"})).status, 0);
    EXPECT_TRUE(S_ISLNK(mode_of(s / "via-link")));
    EXPECT_EQ(read_file(s / "target"), read_file(s / "src"));

    // A dangling symlink is not written through (cp says so, status 1).
    ASSERT_EQ(::symlink("nowhere", (s / "dangling").c_str()), 0);
    const Child d = run(cp({s / "src", s / "dangling"}));
    EXPECT_EQ(d.status, 1);
    EXPECT_NE(d.err.find("not writing through dangling symlink '" + s / "dangling" + "'"),
              std::string::npos)
        << d.err;
    EXPECT_FALSE(stdfs::exists(s.dir / "nowhere"));

    // --atomic: a new inode renamed over it, the mode of the old file kept.
    const Child a = run(cp({"--atomic", s / "src", s / "dst"}));
    ASSERT_EQ(a.status, 0) << a.err;
    struct stat atomic {};
    ASSERT_EQ(::stat((s / "dst").c_str(), &atomic), 0);
    EXPECT_NE(atomic.st_ino, before.st_ino);
    EXPECT_EQ(atomic.st_nlink, 1u);
    EXPECT_EQ(atomic.st_mode & 07777, 0600u);
    EXPECT_EQ(read_file(s / "dst"), read_file(s / "src"));
    EXPECT_TRUE(temporaries(s.dir).empty());

    // --atomic through a symlink: the file it names is replaced, the link stays.
    write_file(s / "target", "old target");
    const Child l = run(cp({"--atomic", s / "src", s / "via-link"}));
    ASSERT_EQ(l.status, 0) << l.err;
    EXPECT_TRUE(S_ISLNK(mode_of(s / "via-link")));
    EXPECT_EQ(read_file(s / "target"), read_file(s / "src"));
    EXPECT_TRUE(temporaries(s.dir).empty());
}

// -n leaves an existing file alone; a new one is still copied.
TEST(CpData, NoClobberLeavesExistingFilesAlone) {
    Scratch s;
    write_file(s / "a", "new a");
    write_file(s / "b", "new b");
    stdfs::create_directory(s.dir / "into");
    write_file(s / "into/a", "old a");
    for (const char* flag : {"-n", "--no-clobber"}) {
        const Child r = run(cp({flag, s / "a", s / "b", s / "into"}));
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.err, "");
        EXPECT_EQ(read_file(s / "into/a"), "old a");
        EXPECT_EQ(read_file(s / "into/b"), "new b");
    }
}

TEST(CpData, SparseFilesStaySparse) {
    Scratch s;
    const std::string src = s / "sparse";
    {
        const int fd = ::open(src.c_str(), O_WRONLY | O_CREAT, 0644);
        ASSERT_GE(fd, 0);
        const std::string a = random_bytes(8192, 1), b = random_bytes(100, 2);
        ASSERT_EQ(::pwrite(fd, a.data(), a.size(), 4 << 20), static_cast<ssize_t>(a.size()));
        ASSERT_EQ(::pwrite(fd, b.data(), b.size(), 10 << 20), static_cast<ssize_t>(b.size()));
        ASSERT_EQ(::ftruncate(fd, 16 << 20), 0);  // ends in a hole
        ::close(fd);
    }
    struct stat ss {};
    ASSERT_EQ(::stat(src.c_str(), &ss), 0);
    if (ss.st_blocks * 512 >= ss.st_size) GTEST_SKIP() << "this file system does not keep holes";
    for (const char* extra : {"", "--direct"}) {
        const std::string dst = s / (std::string("copy") + extra);
        std::vector<std::string> a{URINGKIT_CLI, "cp", src, dst};
        if (*extra) a.insert(a.begin() + 2, extra);
        const Child r = run(a);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(read_file(dst), read_file(src));
        struct stat ds {};
        ASSERT_EQ(::stat(dst.c_str(), &ds), 0);
        EXPECT_EQ(ds.st_size, ss.st_size);
        EXPECT_LE(ds.st_blocks, ss.st_blocks + 64) << "holes were filled in: " << extra;
    }
}

TEST(CpData, DirectAndFsyncKeepTheBytes) {
    Scratch s;
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4097}, std::size_t{1 << 20},
                          std::size_t{(1 << 20) + 511}}) {
        const std::string src = s / ("s" + std::to_string(n));
        write_file(src, random_bytes(n, static_cast<unsigned>(n) + 9));
        for (const char* flag : {"--direct", "--fsync"}) {
            const std::string dst = src + flag;
            const Child r = run(cp({flag, "--bs", "256k", src, dst}));
            ASSERT_EQ(r.status, 0) << r.err;
            EXPECT_EQ(read_file(dst), read_file(src)) << n << " " << flag;
        }
    }
}

bool write_cold(const std::string& path, const std::string& data) {
    write_file(path, data);
    return evict_from_page_cache(path);
}

std::string summary_of(const Child& r) {
    return r.err.substr(0, r.err.find('\n'));
}

// On the ring (ext4 would take copy_file_range), a cold large source is read
// with O_DIRECT (16 x 1 MiB by default), a warm one through the cache; the
// copy is the same either way.
TEST(CpData, ColdLargeSourceReadWithODirectWarmThroughTheCache) {
    Scratch s;
    const std::string data =
        random_bytes((9 << 20) + 4097, 41);  // past the 8 MiB floor, unaligned tail
    if (!write_cold(s / "cold", data))
        GTEST_SKIP() << "cannot evict a file from the page cache here";
    const Child cold = run(cp({"--engine", "ring", "--summary", s / "cold", s / "c1"}));
    ASSERT_EQ(cold.status, 0) << cold.err;
    EXPECT_NE(summary_of(cold).find(", 1 read with O_DIRECT"), std::string::npos) << cold.err;
    EXPECT_EQ(read_file(s / "c1"), data);

    // O_DIRECT reads leave it out of the cache: it is still cold.
    const Child again = run(cp({"--engine", "ring", "--summary", s / "cold", s / "c2"}));
    ASSERT_EQ(again.status, 0) << again.err;
    EXPECT_NE(summary_of(again).find(", 1 read with O_DIRECT"), std::string::npos) << again.err;
    // Read through the cache, it is warm.
    ASSERT_EQ(read_file(s / "cold"), data);
    const Child warm = run(cp({"--engine", "ring", "--summary", s / "cold", s / "c2"}));
    ASSERT_EQ(warm.status, 0) << warm.err;
    EXPECT_NE(summary_of(warm).find(", 0 read with O_DIRECT"), std::string::npos) << warm.err;
    EXPECT_EQ(read_file(s / "c2"), data);

    // Asked for, the cache path is taken even when cold; given sizes hold for both.
    ASSERT_TRUE(write_cold(s / "cold", data));
    for (const auto& extra : std::vector<std::vector<std::string>>{{"--source-reads", "cache"},
                                                                   {"--qd", "3", "--bs", "20k"}}) {
        std::vector<std::string> a = cp({"--engine", "ring", "--summary"});
        a.insert(a.end(), extra.begin(), extra.end());
        a.insert(a.end(), {s / "cold", s / "c3"});
        const Child r = run(a);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_NE(summary_of(r).find(extra[0] == "--qd" ? ", 1 read with O_DIRECT"
                                                        : ", 0 read with O_DIRECT"),
                  std::string::npos)
            << r.err;
        EXPECT_EQ(read_file(s / "c3"), data) << extra[0];
        ASSERT_TRUE(write_cold(s / "cold", data));
    }
}

TEST(CpData, ColdSparseSourceStaysSparseThroughODirect) {
    Scratch s;
    const std::string src = s / "sparse";
    const std::string a = random_bytes(3 << 20, 1), b = random_bytes(12345, 2);
    {
        const int fd = ::open(src.c_str(), O_WRONLY | O_CREAT, 0644);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::pwrite(fd, a.data(), a.size(), 4 << 20), static_cast<ssize_t>(a.size()));
        ASSERT_EQ(::pwrite(fd, b.data(), b.size(), 20 << 20), static_cast<ssize_t>(b.size()));
        ASSERT_EQ(::ftruncate(fd, 32 << 20), 0);
        ::close(fd);
    }
    if (!evict_from_page_cache(src)) GTEST_SKIP() << "cannot evict a file from the page cache here";
    struct stat ss {};
    ASSERT_EQ(::stat(src.c_str(), &ss), 0);
    if (ss.st_blocks * 512 >= ss.st_size) GTEST_SKIP() << "this file system does not keep holes";
    const Child r = run(cp({"--engine", "ring", "--summary", src, s / "copy"}));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(summary_of(r).find(", 1 read with O_DIRECT"), std::string::npos) << r.err;
    EXPECT_EQ(read_file(s / "copy"), read_file(src));
    struct stat ds {};
    ASSERT_EQ(::stat((s / "copy").c_str(), &ds), 0);
    EXPECT_LE(ds.st_blocks, ss.st_blocks + 64) << "holes were filled in";
}

struct SourceTree {
    Scratch s;
    std::string root;
    SourceTree() : root(s / "src") {
        stdfs::create_directories(stdfs::path(root) / "a" / "b" / "c");
        stdfs::create_directories(stdfs::path(root) / "ro");
        for (int i = 0; i < 150; ++i)
            write_file(root + "/a/f" + std::to_string(i),
                       random_bytes(static_cast<std::size_t>(i * 97), static_cast<unsigned>(i)));
        write_file(root + "/a/b/c/deep", "deep");
        write_file(root + "/big", random_bytes(3 << 20, 77));  // past the small-file path
        write_file(root + "/exactly64k", random_bytes(65536, 78));
        write_file(root + "/ro/secret", "s");
        ::chmod((root + "/ro/secret").c_str(), 0600);
        ::chmod((root + "/a/f3").c_str(), 0775);
        ::chmod((root + "/ro").c_str(), 0555);  // read-only directory: filled, then made read-only
        const int fd = ::open((root + "/sparse").c_str(), O_WRONLY | O_CREAT, 0644);
        const std::string d = random_bytes(5000, 5);
        (void)!::pwrite(fd, d.data(), d.size(), 1 << 20);
        (void)!::ftruncate(fd, 8 << 20);
        ::close(fd);
        (void)!::symlink("a/b/c/deep", (root + "/link").c_str());
        (void)!::symlink("/nonexistent", (root + "/dangling").c_str());
        (void)!::mkfifo((root + "/fifo").c_str(), 0644);
    }
    ~SourceTree() { ::chmod((root + "/ro").c_str(), 0755); }
};

// Same types, bytes and link targets; modes less `umask` (cp without -p);
// the FIFO made again.
void expect_same_tree(const std::string& a, const std::string& b, mode_t umask = 022) {
    std::size_t n = 0;
    for (const auto& e : stdfs::recursive_directory_iterator(a)) {
        const std::string rel = e.path().lexically_relative(a).string();
        const std::string other = b + "/" + rel;
        mode_t ma = mode_of(e.path().string());
        if (!S_ISLNK(ma)) ma &= ~umask;
        ASSERT_TRUE(stdfs::exists(stdfs::symlink_status(other))) << rel;
        const mode_t mb = mode_of(other);
        EXPECT_EQ(ma, mb) << rel;
        if (S_ISREG(ma)) {
            EXPECT_EQ(read_file(e.path().string()), read_file(other)) << rel;
        }
        if (S_ISLNK(ma)) {
            EXPECT_EQ(stdfs::read_symlink(e.path()), stdfs::read_symlink(other)) << rel;
        }
        ++n;
    }
    std::size_t m = 0;
    for (const auto& e : stdfs::recursive_directory_iterator(b)) {
        (void)e;
        ++m;
    }
    EXPECT_EQ(n, m) << "extra entries in the copy";
}

TEST(CpData, TreeCopiedWithTypesModesLinksAndNoTemporaries) {
    SourceTree t;
    const std::string dst = t.s / "dst";
    const Child r = run(cp({"-r", "--summary", t.root, dst}), {}, [] { ::umask(022); });
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("1 special files"), std::string::npos) << r.err;
    expect_same_tree(t.root, dst);
    EXPECT_TRUE(temporaries(t.s.dir).empty());
    struct stat ss {
    }, ds{};
    ASSERT_EQ(::stat((t.root + "/sparse").c_str(), &ss), 0);
    ASSERT_EQ(::stat((dst + "/sparse").c_str(), &ds), 0);
    EXPECT_LE(ds.st_blocks, ss.st_blocks + 64);

    // Again into the existing directory: lands in dst/src (coreutils' rule),
    // this time with a single kernel worker for every blocking step.
    const Child again =
        run(cp({"-r", "--kernel-workers", "1", t.root, dst}), {}, [] { ::umask(022); });
    ASSERT_EQ(again.status, 0) << again.err;
    expect_same_tree(t.root, dst + "/src");
}

TEST(CpData, MergingIntoAnExistingTreeReplacesFilesWhole) {
    SourceTree t;
    const std::string dst = t.s / "dst";
    ASSERT_EQ(run(cp({"-r", t.root, dst})).status, 0);
    // Change the source, add a file only the destination has, copy over it.
    write_file(t.root + "/a/f1", "new content");
    write_file(dst + "/only-here", "kept");
    const Child r = run(cp({"-r", t.root + "/.", dst}));  // "src/." -> merge into dst/.
    // coreutils puts SRC/. into DST/.; we take the basename "." the same way.
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(dst + "/a/f1"), "new content");
    EXPECT_EQ(read_file(dst + "/only-here"), "kept");
    EXPECT_TRUE(temporaries(t.s.dir).empty());
}

TEST(CpData, PreserveKeepsTimes) {
    SourceTree t;
    const struct timespec times[2] = {{1000000000, 5}, {1200000000, 7}};
    ASSERT_EQ(::utimensat(AT_FDCWD, (t.root + "/a/f10").c_str(), times, 0), 0);
    ASSERT_EQ(::utimensat(AT_FDCWD, (t.root + "/big").c_str(), times, 0), 0);
    const std::string dst = t.s / "dst";
    ASSERT_EQ(run(cp({"-r", "-p", t.root, dst})).status, 0);
    for (const char* f : {"/a/f10", "/big"}) {
        struct stat st {};
        ASSERT_EQ(::stat((dst + f).c_str(), &st), 0);
        EXPECT_EQ(st.st_mtim.tv_sec, 1200000000) << f;
        EXPECT_EQ(st.st_mtim.tv_nsec, 7) << f;
    }
}

TEST(CpData, RefusalsLeaveEverythingAsItWas) {
    Scratch s;
    write_file(s / "f", "content");
    stdfs::create_directories(s.dir / "d" / "sub");
    write_file(s / "d/x", "x");

    Child r = run(cp({s / "f", s / "f"}));
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("are the same file"), std::string::npos) << r.err;
    EXPECT_EQ(read_file(s / "f"), "content");

    r = run(cp({"-r", s / "d", s / "d/sub"}));
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("into itself"), std::string::npos) << r.err;
    EXPECT_FALSE(stdfs::exists(s.dir / "d/sub/d"));

    r = run(cp({s / "d", s / "e"}));
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("-r not specified; omitting directory '" + s / "d" + "'"),
              std::string::npos)
        << r.err;

    r = run(cp({s / "missing", s / "e"}));
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("cannot stat '" + s / "missing" + "': No such file or directory"),
              std::string::npos)
        << r.err;

    // A command line cp cannot run is status 1, as coreutils' cp.
    r = run(cp({s / "f", s / "d/x", s / "f"}));
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("is not a directory"), std::string::npos) << r.err;

    r = run(cp({"--bs", "1000", s / "f", s / "g"}));
    EXPECT_EQ(r.status, 1);
    for (const Child* c : {&r}) EXPECT_EQ(count(c->err, "\n"), 1u) << c->err;
    EXPECT_FALSE(stdfs::exists(s.dir / "e"));
    EXPECT_FALSE(stdfs::exists(s.dir / "g"));
    EXPECT_TRUE(temporaries(s.dir).empty());
}

TEST(CpData, SeveralSourcesIntoADirectory) {
    Scratch s;
    write_file(s / "a", "A");
    write_file(s / "b", random_bytes(100000, 1));
    stdfs::create_directory(s.dir / "into");
    const Child r = run(cp({s / "a", s / "b", s / "into"}));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(s / "into/a"), "A");
    EXPECT_EQ(read_file(s / "into/b"), read_file(s / "b"));
}

}  // namespace
