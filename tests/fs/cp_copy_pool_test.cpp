// cp -r's read -> write pool (copy_pool.cpp): a new tree whose files are in
// the page cache has its small files copied on threads with plain read and
// write instead of the ring's chains.  Every thread count copies every kind
// of entry as it is (sizes, modes, holes, links, FIFOs); the same tree out of
// the cache, or --copy-threads 0, stays on the chains; entries replaced after
// the walk are copied as what they have become; progress is counted as files
// finish; a failed read, write or fsync (injected with strace) and a
// destination that fills up fail each file concerned with one line and leave
// no partial copy; as nobody, a file only root may read is one line.
// Labelled for the TSan build.
#include "loop_fs.hpp"

#include "fs/copy.hpp"
#include "uringkit/sys/page_cache.hpp"

namespace {

using namespace files_test;
using uringkit::fs::CopyOptions;
using uringkit::fs::CopyResult;
using uringkit::fs::CopySink;
using uringkit::fs::CopyStatus;

// Whether the copier can tell that files under `dir` are cached (cachestat,
// or mincore on a file system that can map files).
std::string cannot_tell_cached(const std::string& dir) {
    const std::string probe = dir + "/.probe";
    write_file(probe, "x");
    const int fd = ::open(probe.c_str(), O_RDONLY);
    uringkit::sys::PageCacheStat pc;
    const bool ok = fd >= 0 && uringkit::sys::page_cache_stat(fd, 0, 1, pc) == 0 && pc.cached == 1;
    if (fd >= 0) ::close(fd);
    ::unlink(probe.c_str());
    return ok ? std::string{}
              : "neither cachestat nor mincore says what is cached on " + dir + "'s file system";
}

struct Copied {
    CopyResult r;
    std::vector<std::string> errors;
};

Copied copy_tree(const std::string& src, const std::string& dst, unsigned threads,
                 std::function<void()> after_walk = {}) {
    CopyOptions o;
    o.recursive = true;
    o.copy_threads = threads;
    o.after_walk = std::move(after_walk);
    Copied out;
    CopySink sink;
    sink.error = [&](std::string_view m) { out.errors.emplace_back(m); };
    const std::vector<std::string> srcs{src};
    out.r = uringkit::fs::copy(srcs, dst, o, sink);
    return out;
}

// 30 small files over three directories, and one of each other kind.
void make_tree(const std::string& t) {
    stdfs::create_directories(t + "/sub/deeper");
    for (int i = 0; i < 30; ++i)
        write_file(t +
                       (i % 3 == 0   ? "/f"
                        : i % 3 == 1 ? "/sub/f"
                                     : "/sub/deeper/f") +
                       std::to_string(i),
                   random_bytes(1u + 2111u * static_cast<unsigned>(i), static_cast<unsigned>(i)));
    write_file(t + "/empty", "");
    write_file(t + "/largest-small", random_bytes(64 << 10, 40));
    write_file(t + "/large",
               random_bytes((64 << 10) + 1, 41));  // one byte past the small-file limit
    write_file(t + "/private", random_bytes(4096, 42));
    ASSERT_EQ(::chmod((t + "/private").c_str(), 0600), 0);
    write_file(t + "/tool", random_bytes(4096, 43));
    ASSERT_EQ(::chmod((t + "/tool").c_str(), 04755), 0);  // set-ID bits are not copied
    {  // 1 MiB hole, then 4 KiB of data: sparse, so not for the pool
        const int fd = ::open((t + "/sparse").c_str(), O_WRONLY | O_CREAT, 0644);
        ASSERT_GE(fd, 0);
        const std::string data = random_bytes(4096, 44);
        ASSERT_EQ(::pwrite(fd, data.data(), data.size(), 1 << 20),
                  static_cast<ssize_t>(data.size()));
        ::close(fd);
    }
    ASSERT_EQ(::symlink("../outside", (t + "/link").c_str()), 0);
    ASSERT_EQ(::mkfifo((t + "/fifo").c_str(), 0640), 0);
}

constexpr std::uint64_t kSmallFiles = 30 + 4;  // the 30, empty, largest-small, private, tool

void expect_same_tree(const std::string& t, const std::string& dst) {
    std::size_t files = 0;
    for (const auto& e : stdfs::recursive_directory_iterator(t)) {
        const std::string rel = stdfs::relative(e.path(), t).string();
        const std::string a = e.path().string(), b = dst + "/" + rel;
        struct stat sa {
        }, sb{};
        ASSERT_EQ(::lstat(a.c_str(), &sa), 0) << rel;
        ASSERT_EQ(::lstat(b.c_str(), &sb), 0) << rel;
        EXPECT_EQ(sa.st_mode & S_IFMT, sb.st_mode & S_IFMT) << rel;
        if (!S_ISREG(sa.st_mode)) continue;
        ++files;
        ASSERT_EQ(read_file(b), read_file(a)) << rel;
        EXPECT_EQ(sb.st_mode & 07777, sa.st_mode & 0777 & ~0022u) << rel;
        EXPECT_LE(sb.st_blocks, sa.st_blocks + 8) << rel << ": holes filled";
    }
    EXPECT_EQ(files, kSmallFiles + 2);
    EXPECT_EQ(stdfs::read_symlink(dst + "/link"), "../outside");
    EXPECT_TRUE(stdfs::is_fifo(stdfs::symlink_status(dst + "/fifo")));
}

TEST(CpCopyPool, CachedTreeIsCopiedByEveryThreadCount) {
    Scratch s;
    if (const std::string why = cannot_tell_cached(s.dir); !why.empty()) GTEST_SKIP() << why;
    make_tree(s / "t");
    for (unsigned threads : {4u, 2u, 1u}) {
        const std::string dst = s / ("u" + std::to_string(threads));
        const Copied c = copy_tree(s / "t", dst, threads);
        ASSERT_EQ(c.r.status, CopyStatus::ok) << c.r.message;
        EXPECT_TRUE(c.errors.empty()) << c.errors.front();
        EXPECT_EQ(c.r.read_write_files, kSmallFiles) << "threads " << threads;
        EXPECT_EQ(c.r.files, kSmallFiles + 2);
        EXPECT_EQ(c.r.symlinks, 1u);
        EXPECT_EQ(c.r.specials, 1u);
        expect_same_tree(s / "t", dst);
    }
    EXPECT_TRUE(temporaries(s.dir).empty());
}

TEST(CpCopyPool, NoThreadsOrAColdTreeStayOnTheChains) {
    Scratch s;
    if (const std::string why = cannot_tell_cached(s.dir); !why.empty()) GTEST_SKIP() << why;
    make_tree(s / "t");
    const Copied none = copy_tree(s / "t", s / "none", 0);
    ASSERT_EQ(none.r.status, CopyStatus::ok) << none.r.message;
    EXPECT_EQ(none.r.read_write_files, 0u);
    EXPECT_GE(none.r.ring_files, kSmallFiles) << "the small files on the chains";
    expect_same_tree(s / "t", s / "none");

    for (const auto& e : stdfs::recursive_directory_iterator(s / "t"))
        if (e.symlink_status().type() == stdfs::file_type::regular && e.file_size() > 0 &&
            !evict_from_page_cache(e.path().string()))
            GTEST_SKIP() << "cannot drop " << e.path() << " from the page cache here";
    const Copied cold = copy_tree(s / "t", s / "cold", 4);
    ASSERT_EQ(cold.r.status, CopyStatus::ok) << cold.r.message;
    EXPECT_EQ(cold.r.read_write_files, 0u)
        << "a cold tree is read with many reads queued on the ring";
    EXPECT_GE(cold.r.ring_files, kSmallFiles);
    expect_same_tree(s / "t", s / "cold");
}

// Between the walk and the copy each of these entries becomes something
// else, as another process could make it.  A symlink is copied as the link
// (its target is not read), a FIFO is made again (never opened for reading),
// a directory is skipped with its own line, a removed file is one line, a
// file grown past the pool's limit or turned sparse is copied whole by the
// paths for such files.
TEST(CpCopyPool, EntriesReplacedAfterTheWalkAreCopiedAsWhatTheyAreNow) {
    Scratch s;
    if (const std::string why = cannot_tell_cached(s.dir); !why.empty()) GTEST_SKIP() << why;
    const std::string t = s / "t";
    stdfs::create_directories(t);
    for (const char* name : {"a-link", "b-fifo", "c-gone", "d-dir", "e-kept", "f-grown", "g-holes"})
        write_file(t + "/" + name, name);
    write_file(s / "secret", "not to be copied");
    const std::string grown = random_bytes(300 << 10, 7);
    const Copied c = copy_tree(t, s / "u", 4, [&] {
        ASSERT_EQ(::unlink((t + "/a-link").c_str()), 0);
        ASSERT_EQ(::symlink((s / "secret").c_str(), (t + "/a-link").c_str()), 0);
        ASSERT_EQ(::unlink((t + "/b-fifo").c_str()), 0);
        ASSERT_EQ(::mkfifo((t + "/b-fifo").c_str(), 0600), 0);
        ASSERT_EQ(::unlink((t + "/c-gone").c_str()), 0);
        ASSERT_EQ(::unlink((t + "/d-dir").c_str()), 0);
        ASSERT_EQ(::mkdir((t + "/d-dir").c_str(), 0700), 0);
        write_file(t + "/f-grown", grown);
        ASSERT_EQ(::truncate((t + "/g-holes").c_str(), 8 << 20), 0);
    });
    ASSERT_EQ(c.errors.size(), 2u) << c.r.message;
    EXPECT_NE(c.errors[0].find("c-gone"), std::string::npos) << c.errors[0];
    EXPECT_NE(c.errors[0].find("No such file"), std::string::npos) << c.errors[0];
    EXPECT_NE(c.errors[1].find("d-dir"), std::string::npos) << c.errors[1];
    EXPECT_NE(c.errors[1].find("replaced by a directory"), std::string::npos) << c.errors[1];
    const std::string dst = s / "u";
    EXPECT_EQ(stdfs::read_symlink(dst + "/a-link"), s / "secret");
    EXPECT_TRUE(stdfs::is_fifo(stdfs::symlink_status(dst + "/b-fifo")));
    EXPECT_FALSE(stdfs::exists(stdfs::symlink_status(dst + "/c-gone")));
    EXPECT_FALSE(stdfs::exists(stdfs::symlink_status(dst + "/d-dir")));
    EXPECT_EQ(read_file(dst + "/e-kept"), "e-kept");
    EXPECT_EQ(read_file(dst + "/f-grown"), grown);
    EXPECT_EQ(read_file(dst + "/g-holes"), read_file(t + "/g-holes"));
    struct stat st {};
    ASSERT_EQ(::stat((dst + "/g-holes").c_str(), &st), 0);
    EXPECT_LT(st.st_blocks * 512, st.st_size) << "the holes were filled";
    EXPECT_EQ(c.r.read_write_files, 1u) << "only e-kept was still a small file";
    EXPECT_EQ(c.r.files, 3u);
    EXPECT_EQ(c.r.symlinks, 1u);
    EXPECT_EQ(c.r.specials, 1u);
    EXPECT_TRUE(temporaries(s.dir).empty());
}

// The progress callback hears of each file as the pool finishes it, not
// all at once at the end: with one thread (the caller's) the first file is
// counted before the second is copied.  Each file is counted once, with its size.
TEST(CpCopyPool, ProgressIsCountedWhileThePoolRuns) {
    Scratch s;
    if (const std::string why = cannot_tell_cached(s.dir); !why.empty()) GTEST_SKIP() << why;
    const std::string t = s / "t";
    stdfs::create_directories(t);
    std::uint64_t total = 0;
    for (int i = 0; i < 30; ++i) {
        write_file(t + "/f" + std::to_string(i),
                   random_bytes(100u + 10u * static_cast<unsigned>(i), 1));
        total += 100u + 10u * static_cast<unsigned>(i);
    }
    for (const unsigned threads : {1u, 4u}) {
        const std::string dst = s / ("u" + std::to_string(threads));
        CopyOptions o;
        o.recursive = true;
        o.copy_threads = threads;
        std::uint64_t planned = 0, files = 0, bytes = 0;
        std::vector<std::size_t> present_at_call;
        o.on_planned = [&](std::uint64_t f, std::uint64_t) { planned += f; };
        o.on_file = [&](std::uint64_t b) {
            ++files;
            bytes += b;
            std::size_t n = 0;
            for (const auto& e : stdfs::directory_iterator(dst)) n += e.is_regular_file();
            present_at_call.push_back(n);
        };
        const std::vector<std::string> srcs{t};
        const CopyResult r = uringkit::fs::copy(srcs, dst, o, CopySink{});
        ASSERT_EQ(r.status, CopyStatus::ok) << r.message;
        EXPECT_EQ(r.read_write_files, 30u) << "threads " << threads;
        EXPECT_EQ(planned, 30u);
        EXPECT_EQ(files, 30u) << "threads " << threads;
        EXPECT_EQ(bytes, total) << "threads " << threads;
        if (threads == 1) {
            ASSERT_FALSE(present_at_call.empty());
            EXPECT_EQ(present_at_call.front(), 1u) << "counted only once the pool had finished";
        }
    }
}

// A read of one source, a write or an fsync of one copy fails (strace -P
// injects the error into that file's system calls only): one line naming
// the file, the step and the errno, that copy removed, the others whole.
TEST(CpCopyPool, FailedReadWriteOrFsyncIsOneLineAndLeavesNoCopy) {
    if (!have_program("strace")) GTEST_SKIP() << "needs strace to inject the failures";
    no_leak_check_in_traced_children();
    Scratch s;
    if (const std::string why = cannot_tell_cached(s.dir); !why.empty()) GTEST_SKIP() << why;
    const std::string t = s / "t";
    stdfs::create_directories(t);
    for (int i = 0; i < 10; ++i)
        write_file(t + "/f" + std::to_string(i), random_bytes(3000, static_cast<unsigned>(i)));
    struct Case {
        const char* name;
        std::string path, call, expect;
        std::vector<std::string> extra;
        int status;
    };
    const Case cases[] = {
        {"read",
         t + "/f3",
         "read",
         t + "/f3: read at offset 0: Input/output error (errno 5)",
         {},
         1},
        {"write",
         s / "write/f3",
         "write",
         s / "write/f3" + ": write at offset 0: No space left on device (errno 28)",
         {},
         1},
        {"fsync",
         s / "fsync/f3",
         "fsync",
         s / "fsync/f3" + ": fsync: Input/output error (errno 5)",
         {"--sync"},
         1},
    };
    for (const Case& c : cases) {
        const std::string dst = s / c.name;
        const char* err = c.call == "write" ? "ENOSPC" : "EIO";
        std::vector<std::string> a{"strace",
                                   "-f",
                                   "-qq",
                                   "-o",
                                   "/dev/null",
                                   "-P",
                                   c.path,
                                   "-e",
                                   "trace=" + c.call,
                                   "-e",
                                   "inject=" + c.call + ":error=" + err,
                                   URINGKIT_CLI,
                                   "cp",
                                   "-r",
                                   "--summary"};
        a.insert(a.end(), c.extra.begin(), c.extra.end());
        a.insert(a.end(), {t, dst});
        const Child r = run(a);
        EXPECT_EQ(r.status, c.status) << c.name << ": " << r.err;
        EXPECT_NE(r.err.find("uringkit cp: " + c.expect + "\n"), std::string::npos)
            << c.name << ": " << r.err;
        EXPECT_EQ(count(r.err, "uringkit cp: "), 1u) << c.name << ": " << r.err;
        EXPECT_NE(r.err.find("9 read/write"), std::string::npos)
            << c.name << ": the pool copied the others: " << r.err;
        EXPECT_FALSE(stdfs::exists(dst + "/f3")) << c.name;
        for (int i = 0; i < 10; ++i) {
            if (i == 3) continue;
            EXPECT_EQ(read_file(dst + "/f" + std::to_string(i)),
                      read_file(t + "/f" + std::to_string(i)));
        }
    }
}

// As an ordinary user: a source file only root may read is one "Permission
// denied" line (status 1) and no copy; the rest are copied, owned by the
// user, with the source's permission bits less the umask.
TEST(CpCopyPool, UnreadableFileAsNobodyIsOneLineTheRestCopied) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to drop to nobody";
    Scratch s;
    if (const std::string why = cannot_tell_cached(s.dir); !why.empty()) GTEST_SKIP() << why;
    ASSERT_EQ(::chmod(s.dir.c_str(), 0755), 0);
    const std::string t = s / "t", out = s / "out";
    stdfs::create_directories(t);
    stdfs::create_directories(out);
    ASSERT_EQ(::chown(out.c_str(), kNobody, kNobody), 0);
    for (int i = 0; i < 10; ++i)
        write_file(t + "/f" + std::to_string(i), random_bytes(2000, static_cast<unsigned>(i)));
    write_file(t + "/secret", "root's");
    ASSERT_EQ(::chmod((t + "/secret").c_str(), 0600), 0);
    ASSERT_EQ(::chmod((t + "/f1").c_str(), 0604), 0);
    const Child r =
        run({URINGKIT_CLI, "cp", "-r", "--summary", t, out + "/u"}, {}, [] { become_nobody(); });
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("uringkit cp: cannot open '" + t + "/secret': Permission denied\n"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(count(r.err, "uringkit cp: "), 1u) << r.err;
    EXPECT_NE(r.err.find("10 read/write"), std::string::npos) << r.err;
    EXPECT_FALSE(stdfs::exists(out + "/u/secret"));
    for (int i = 0; i < 10; ++i) {
        const std::string b = out + "/u/f" + std::to_string(i);
        ASSERT_TRUE(read_file(b) == read_file(t + "/f" + std::to_string(i)))
            << b << " differs or is missing";
        struct stat st {};
        ASSERT_EQ(::stat(b.c_str(), &st), 0);
        EXPECT_EQ(st.st_uid, kNobody) << b;
        EXPECT_EQ(st.st_mode & 07777, (i == 1 ? 0604u : 0644u) & ~0022u) << b;
    }
}

// 1 MiB of room for 1.6 MiB of files: those that fit are whole, each of the
// others is one "No space left" line and is not there at all.
TEST(CpCopyPool, FullDestinationLeavesOnlyWholeFiles) {
    Scratch s;
    if (const std::string why = cannot_tell_cached(s.dir); !why.empty()) GTEST_SKIP() << why;
    LoopFs small("tmpfs", 1);
    if (!small.ok()) GTEST_SKIP() << small.why;
    const std::string t = s / "t";
    stdfs::create_directories(t);
    for (int i = 0; i < 100; ++i)
        write_file(t + "/f" + std::to_string(i), random_bytes(16 << 10, static_cast<unsigned>(i)));
    const std::string dst = small / "u";
    const Copied c = copy_tree(t, dst, 4);
    EXPECT_EQ(c.r.status, CopyStatus::no_space) << c.r.message;
    ASSERT_FALSE(c.errors.empty());
    for (const std::string& e : c.errors)
        EXPECT_NE(e.find("No space left"), std::string::npos) << e;
    std::size_t whole = 0;
    for (int i = 0; i < 100; ++i) {
        const std::string b = dst + "/f" + std::to_string(i);
        if (!stdfs::exists(b)) continue;
        ASSERT_EQ(read_file(b), read_file(t + "/f" + std::to_string(i))) << b << " is partial";
        ++whole;
    }
    EXPECT_EQ(whole + c.errors.size(), 100u);
    EXPECT_EQ(c.r.files, whole);
    EXPECT_GT(c.r.read_write_files, 0u) << "the pool copied them";
}

}  // namespace
