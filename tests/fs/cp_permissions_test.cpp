// `uringkit cp` and permissions, as an ordinary user (the test drops to
// nobody in the child): a write-protected file is refused and left as it
// was (root may write it, as with coreutils); a writable file in a
// read-only directory is written in place; temporaries are created with
// O_EXCL | O_NOFOLLOW at names that differ every time.
#include "files_test_support.hpp"

#include <sys/stat.h>

#include <regex>
#include <set>

namespace {

using namespace files_test;

// A scratch directory nobody may work in, with files owned by nobody.
struct NobodyScratch {
    Scratch s;
    NobodyScratch() { EXPECT_EQ(::chmod(s.dir.c_str(), 0777), 0); }
    void give(const std::string& path) {
        EXPECT_EQ(::chown(path.c_str(), kNobody, kNobody), 0) << path;
    }
};

TEST(CpPermissions, WriteProtectedFileIsRefusedUnlessRoot) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to drop to nobody";
    NobodyScratch n;
    Scratch& s = n.s;
    write_file(s / "src", "new bytes");
    write_file(s / "protected", "keep me");
    n.give(s / "protected");
    ASSERT_EQ(::chmod((s / "protected").c_str(), 0444), 0);
    for (const char* atomic : {"", "--atomic"}) {
        std::vector<std::string> a = cp({s / "src", s / "protected"});
        if (*atomic) a.insert(a.begin() + 2, atomic);
        const Child r = run(a, {}, [] { become_nobody(); });
        EXPECT_EQ(r.status, 1) << atomic << ": " << r.err;
        EXPECT_EQ(r.err, "uringkit cp: cannot create regular file '" + s / "protected" +
                             "': Permission denied\n");
        EXPECT_EQ(read_file(s / "protected"), "keep me") << atomic;
        struct stat st {};
        ASSERT_EQ(::stat((s / "protected").c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 07777, 0444u);
        EXPECT_EQ(st.st_uid, kNobody);
        EXPECT_TRUE(temporaries(s.dir).empty());
    }
    // Root may, as with coreutils; the file keeps its mode and owner.
    const Child root = run(cp({s / "src", s / "protected"}));
    ASSERT_EQ(root.status, 0) << root.err;
    EXPECT_EQ(read_file(s / "protected"), "new bytes");
    struct stat st {};
    ASSERT_EQ(::stat((s / "protected").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0444u);
    EXPECT_EQ(st.st_uid, kNobody);
}

// A file the user may write, in a directory the user may not: cp writes it
// in place (a rename would need the directory).
TEST(CpPermissions, WritableFileInAReadOnlyDirectoryIsWrittenInPlace) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to drop to nobody";
    NobodyScratch n;
    Scratch& s = n.s;
    write_file(s / "src", random_bytes(300000, 4));
    stdfs::create_directory(s.dir / "ro");
    write_file(s / "ro/mine", "old");
    n.give(s / "ro/mine");
    ASSERT_EQ(::chmod((s / "ro").c_str(), 0555), 0);
    const Child r = run(cp({s / "src", s / "ro/mine"}), {}, [] { become_nobody(); });
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(s / "ro/mine"), read_file(s / "src"));
    // A new file there cannot be created: the user's path in the message.
    const Child fresh = run(cp({s / "src", s / "ro/new"}), {}, [] { become_nobody(); });
    EXPECT_EQ(fresh.status, 1);
    EXPECT_EQ(fresh.err, "uringkit cp: cannot create regular file '" + s / "ro/new" +
                             "': Permission denied\n");
    ::chmod((s / "ro").c_str(), 0755);
}

TEST(CpPermissions, MissingDirectoryIsNamedLikeCoreutils) {
    Scratch s;
    write_file(s / "x.txt", "x");
    for (const char* r_flag : {"", "-r"}) {
        std::vector<std::string> a = cp({s / "x.txt", s / "nodir/x.txt"});
        if (*r_flag) a.insert(a.begin() + 2, r_flag);
        const Child r = run(a);
        EXPECT_EQ(r.status, 1)
            << r.err;  // a destination directory that does not exist: 1, as coreutils
        EXPECT_EQ(r.err, "uringkit cp: cannot create regular file '" + s / "nodir/x.txt" +
                             "': No such file or directory\n");
    }
    // A tree into a missing directory is the same path problem, the same status.
    ::mkdir((s / "tree").c_str(), 0755);
    write_file(s / "tree/f", "f");
    const Child tree = run(cp({"-r", s / "tree", s / "nodir/tree"}));
    EXPECT_EQ(tree.status, 1) << tree.err;
    EXPECT_EQ(tree.err, "uringkit cp: cannot create directory '" + s / "nodir/tree" +
                            "': No such file or directory\n");
}

// Every temporary is created O_EXCL | O_NOFOLLOW (a name planted first, a
// symlink included, is never opened) at a name nobody can predict.
TEST(CpPermissions, TemporariesAreExclusiveAndUnpredictable) {
    if (!have_program("strace")) GTEST_SKIP() << "needs strace to see the open flags";
    no_leak_check_in_traced_children();
    Scratch s;
    write_file(s / "src", random_bytes(100000, 5));
    std::set<std::string> names;
    for (int i = 0; i < 3; ++i) {
        const std::string trace = s / ("trace" + std::to_string(i));
        const Child r =
            run({"strace", "-f", "-qq", "-o", trace, "-e", "trace=openat,mkdirat,symlinkat",
                 URINGKIT_CLI, "cp", s / "src", s / ("new" + std::to_string(i))});
        ASSERT_EQ(r.status, 0) << r.err;
        std::size_t temps = 0;
        for (std::size_t pos = 0; pos < read_file(trace).size();) {
            const std::string text = read_file(trace);
            const std::size_t end = text.find('\n', pos);
            const std::string line = text.substr(pos, end - pos);
            pos = end == std::string::npos ? text.size() : end + 1;
            if (line.find(".uringkit-") == std::string::npos) continue;
            ++temps;
            EXPECT_NE(line.find("O_EXCL"), std::string::npos) << line;
            EXPECT_NE(line.find("O_NOFOLLOW"), std::string::npos) << line;
            std::smatch m;
            ASSERT_TRUE(std::regex_search(line, m, std::regex("\\.uringkit-([A-Za-z0-9]{12})\"")))
                << line;
            names.insert(m[1]);
        }
        EXPECT_EQ(temps, 1u);
    }
    EXPECT_EQ(names.size(), 3u) << "the same temporary name twice";
}

}  // namespace
