// `uringkit cp`'s -L, -P, -H, --parents and -i against coreutils' cp on
// the same input (cp_coreutils_oracle.hpp).  Part of cp_operands_test.
#include "cp_coreutils_oracle.hpp"

#include <sys/mount.h>

#include <unistd.h>
#include <cerrno>
#include <cstring>

namespace {

using namespace files_test;
using namespace cp_oracle;

void links(const std::string& d) {
    stdfs::create_directories(d + "/tree/sub");
    write_file(d + "/tree/sub/f", "f");
    write_file(d + "/file", "file");
    stdfs::create_symlink("file", d + "/tree/to-file");
    stdfs::create_symlink("tree", d + "/to-tree");
    stdfs::create_symlink("file", d + "/to-file");
    stdfs::create_directory(d + "/out");
}

TEST(CpOptions, DereferenceOptionsAsCoreutils) {
    expect_same(compare(links, {"-v", "to-file", "copy"}));  // followed without -r
    expect_same(compare(links, {"-L", "to-file", "copy"}));
    expect_same(compare(links, {"-P", "to-file", "copy"}));             // the link itself
    expect_same(compare(links, {"-rv", "to-tree", "copy"}), true);      // -r: the link (-P)
    expect_same(compare(links, {"-rHv", "to-tree", "copy"}), true);     // -H: the operand followed,
    expect_same(compare(links, {"-rH", "to-tree", "to-file", "out"}));  // links inside kept
    // The last of -H, -L, -P and -a's -P decides.
    expect_same(compare(links, {"-H", "-a", "to-tree", "copy"}));
    expect_same(compare(links, {"-a", "-H", "to-tree", "copy"}));
    expect_same(compare(links, {"-L", "-P", "to-file", "copy"}));
    expect_same(compare(links, {"-P", "-L", "to-file", "copy"}));
    // -L with -r would follow links inside the tree: refused, nothing copied.
    const Compared refused = compare(links, {"-rL", "tree", "copy"}, {}, {"-rL", "tree", "copy"});
    EXPECT_EQ(refused.ours.status, 1);
    EXPECT_NE(refused.ours.err.find("-H follows the symbolic links named as sources"),
              std::string::npos)
        << refused.ours.err;
    EXPECT_FALSE(refused.tree_ours.find("/copy") != std::string::npos);
}

void nested(const std::string& d) {
    stdfs::create_directories(d + "/src/a/b");
    write_file(d + "/src/a/b/f", "f");
    write_file(d + "/src/a/g", "g");
    ::chmod((d + "/src/a").c_str(), 0750);
    ::chmod((d + "/src/a/b").c_str(), 0705);
    stdfs::create_directory(d + "/dst");
}

TEST(CpOptions, ParentsAsCoreutils) {
    expect_same(compare(nested, {"-v", "--parents", "src/a/b/f", "src/a/g", "dst"}));
    expect_same(compare(nested, {"--parents", "-v", "./src//a/b/f", "dst"}));
    expect_same(compare(nested, {"-rv", "--parents", "src/a/b", "dst"}), true);
    expect_same(compare(
        [](const std::string& d) {
            nested(d);
            stdfs::create_directories(d + "/dst/src/a");  // already there: entered, no line
        },
        {"-v", "--parents", "src/a/b/f", "dst"}));
    const Compared not_dir = compare(nested, {"--parents", "src/a/g", "src/a/b/f"});
    EXPECT_EQ(not_dir.theirs.status, 1);
    EXPECT_EQ(not_dir.ours.status, 1);
    EXPECT_EQ(not_dir.tree_ours, not_dir.tree_theirs);
}

// Where coreutils follows, --parents does not: a symbolic link on the way in
// the destination (another user's, pointing out of it) and a '..' in the
// source path.  Nothing is written outside the destination.
TEST(CpOptions, ParentsNeverLeavesTheDestination) {
    Scratch s;
    nested(s.dir.string());
    stdfs::create_directory(s / "elsewhere");
    stdfs::create_symlink(s / "elsewhere", s / "dst/src");
    Child r = run({URINGKIT_CLI, "cp", "--parents", "src/a/b/f", "dst"}, {},
                  [&] { ::chdir(s.dir.c_str()); });
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.err, "uringkit cp: 'dst/src' is a symbolic link: --parents does not follow one\n");
    EXPECT_TRUE(stdfs::is_empty(s / "elsewhere"));
    r = run(
        {URINGKIT_CLI, "cp", "--parents", "../" + s.dir.filename().string() + "/src/a/g", "../dst"},
        {}, [&] { ::chdir((s / "src").c_str()); });
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("a '..' is not followed"), std::string::npos) << r.err;
}

TEST(CpOptions, InteractiveAsksAsCoreutils) {
    const auto prepare = [](const std::string& d) {
        for (const char* n : {"a", "b", "c"}) write_file(d + "/" + n, n);
        stdfs::create_directory(d + "/out");
        for (const char* n : {"a", "b"}) write_file(d + "/out/" + n, std::string("old ") + n);
        write_file(d + "/it's", "q");
        write_file(d + "/out/it's", "old q");
        stdfs::create_directories(d + "/tree2/out");
        write_file(d + "/tree2/out/b", "old tree b");
    };
    const std::vector<std::string> files = {"a", "b", "c", "it's", "out"};
    auto with = [&](std::vector<std::string> opts) {
        opts.insert(opts.end(), files.begin(), files.end());
        return opts;
    };
    // Standard input is a pipe, not a terminal: read all the same.
    for (const char* answers : {"y\nn\ny\n", "n\nYes\nno\n", "y\n", ""})
        expect_same(compare(prepare, with({"-iv"}), answers));
    // Of -i and -n the last one decides; cp's -f (unlike mv's) cancels neither.
    expect_same(compare(prepare, with({"-f", "-i"}), "n\ny\nn\n"));
    expect_same(compare(prepare, with({"-i", "-f"}), "n\ny\nn\n"));
    expect_same(compare(prepare, with({"-i", "-n"}), "y\ny\ny\n"));
    expect_same(compare(prepare, with({"-n", "--interactive"}), "y\nn\ny\n"));
    expect_same(compare(prepare, {"-ri", "out", "tree2"}, "y\n"), true);
}

// As nobody, a destination nobody may not write: coreutils names its mode
// in the question ("unwritable ...; try anyway?", with -f "replace ...,
// overriding mode ...?"); the answer decides as for any other.
TEST(CpOptions, InteractiveNamesTheModeOfAnUnwritableDestination) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to drop to nobody";
    const auto prepare = [](const std::string& d) {
        write_file(d + "/a", "alpha");
        ::chown((d + "/a").c_str(), kNobody, kNobody);
        write_file(d + "/ro", "read-only");
        ::chmod((d + "/ro").c_str(), 04444);
        ::chown((d + "/ro").c_str(), kNobody, kNobody);
        ::chmod((d + "/ro").c_str(), 01444);
        write_file(d + "/roots", "root's");
    };
    // The same status, tree and question (the error lines differ in their prefix only).
    const auto same = [](const Compared& r) {
        EXPECT_EQ(r.ours.status, r.theirs.status) << r.ours.err << r.theirs.err;
        EXPECT_EQ(r.tree_ours, r.tree_theirs);
        EXPECT_EQ(r.ours.err.substr(0, r.ours.err.find("? ") + 2),
                  r.theirs.err.substr(0, r.theirs.err.find("? ") + 2));
        EXPECT_NE(r.theirs.err.find("? "), std::string::npos) << r.theirs.err;
    };
    for (const char* answer : {"y\n", "n\n"}) {
        same(compare(prepare, {"-i", "a", "ro"}, answer, {}, true));
        same(compare(prepare, {"-i", "a", "roots"}, answer, {}, true));
        same(compare(prepare, {"-fi", "a", "roots"}, answer, {}, true));
        same(compare(prepare, {"-i", "--remove-destination", "a", "roots"}, answer, {}, true));
    }
}

// A sticky source tree with a set-group-ID directory in it, and a shared
// set-group-ID destination owned by nobody.
void special_dirs(const std::string& d) {
    stdfs::create_directories(d + "/src/sticky/inner");
    write_file(d + "/src/sticky/inner/f", "f");
    ::chmod((d + "/src/sticky").c_str(), 01777);
    ::chmod((d + "/src/sticky/inner").c_str(), 02755);  // its set-group-ID bit is not copied
    stdfs::create_directory(d + "/shared");
    for (const char* name : {"/src", "/src/sticky", "/src/sticky/inner", "/shared"})
        ::chown((d + name).c_str(), kNobody, kNobody);
    ::chmod((d + "/shared").c_str(), 02775);  // what is made in it inherits set-group-ID
}

TEST(CpOptions, NewDirectoriesKeepStickyAndInheritedSetgidAsCoreutils) {
    // mkdir(2) with the source's bits keeps the sticky bit (a copy of /tmp
    // is 1755 under umask 022) and takes set-group-ID from the parent.
    for (const bool as_nobody : {false, true}) {
        SCOPED_TRACE(as_nobody ? "as nobody" : "as root");
        expect_same(compare(special_dirs, {"-r", "src/sticky", "copy"}, {}, {}, as_nobody));
        expect_same(compare(special_dirs, {"-r", "src/sticky", "shared"}, {}, {}, as_nobody));
        expect_same(compare(special_dirs, {"-r", "--no-preserve=mode", "src/sticky", "shared"}, {},
                            {}, as_nobody));
        expect_same(compare(special_dirs, {"-r", "--parents", "src/sticky/inner", "shared"}, {}, {},
                            as_nobody));
    }
}

// -x: a directory on another file system (a tmpfs mounted in the tree) is
// made, empty, and not entered, as coreutils' cp -x.
TEST(CpOptions, OneFileSystemMakesAMountPointEmpty) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a tmpfs";
    const Scratch s;
    stdfs::create_directories(s / "src/mnt");
    stdfs::create_directories(s / "src/sub");
    write_file(s / "src/sub/f", "f");
    if (::mount("none", (s / "src/mnt").c_str(), "tmpfs", 0, "size=1m") != 0)
        GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
    write_file(s / "src/mnt/inside", "other file system");
    std::string trees[2];
    for (int side = 0; side < 2; ++side) {
        const std::string dst = s / (side ? "ours" : "theirs");
        std::vector<std::string> argv =
            side ? std::vector<std::string>{URINGKIT_CLI, "cp"} : std::vector<std::string>{"cp"};
        argv.push_back("-rx");
        argv.push_back(s / "src");
        argv.push_back(dst);
        const Child c = run(argv);
        EXPECT_EQ(c.status, 0) << c.err;
        trees[side] = snapshot(dst);
    }
    ::umount2((s / "src/mnt").c_str(), MNT_DETACH);
    EXPECT_EQ(trees[1], trees[0]);
    EXPECT_TRUE(stdfs::is_directory(s / "ours/mnt"));
    EXPECT_FALSE(stdfs::exists(s / "ours/mnt/inside"));
    EXPECT_EQ(read_file(s / "ours/sub/f"), "f");
}

TEST(CpOptions, StripTrailingSlashesCopiesTheLinkItself) {
    // Into a directory, "to-tree/" is the link; as SRC DST it keeps its slash (coreutils 9.1).
    expect_same(compare(links, {"-rv", "--strip-trailing-slashes", "to-tree/", "out"}), true);
    expect_same(compare(links, {"-rv", "--strip-trailing-slashes", "to-tree/", "copy"}), true);
    expect_same(compare(links, {"-rv", "to-tree/", "out"}), true);  // without: the directory
    // --keep-directory-symlink would follow a destination's link: refused, nothing copied.
    const Compared r = compare(links, {"-r", "--keep-directory-symlink", "tree", "to-tree"}, {},
                               {"-r", "--keep-directory-symlink", "tree", "to-tree"});
    EXPECT_EQ(r.ours.status, 1);
    EXPECT_NE(r.ours.err.find("--keep-directory-symlink is not offered"), std::string::npos)
        << r.ours.err;
    EXPECT_EQ(r.tree_ours.find("/tree/tree"), std::string::npos) << r.tree_ours;
}

}  // namespace
