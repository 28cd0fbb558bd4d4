// coreutils' everyday options of `uringkit cp` (-t, -T, -v, -u, --update,
// -f, -L, -P, -H, --parents, -i), each against coreutils' own cp on the
// same input: output bytes, resulting tree (modes and owners included) and
// exit status.  Part of cp_operands_test.
#include "cp_coreutils_oracle.hpp"

#include <unistd.h>

namespace {

using namespace files_test;
using namespace cp_oracle;

void files_and_dir(const std::string& d) {
    write_file(d + "/a", "alpha");
    write_file(d + "/b", "beta");
    stdfs::create_directory(d + "/d");
    stdfs::create_directories(d + "/s/t");
    write_file(d + "/s/t/f", "deep");
    stdfs::create_directories(d + "/e/s");
    write_file(d + "/e/s/old", "old");
}

TEST(CpOptions, TargetDirectoryAndNoTargetDirectoryAsCoreutils) {
    expect_same(compare(files_and_dir, {"-t", "d", "a", "b"}));
    expect_same(compare(files_and_dir, {"--target-directory=d", "a"}));
    expect_same(compare(files_and_dir, {"-r", "-T", "s", "e/s"}));  // the contents, merged
    expect_same(compare(files_and_dir, {"-T", "a", "b"}));
    // Refusals: nothing copied either way; status 1 from both, as cp's usage errors.
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"-t", "d", "-T", "a"}, {"-t", "a", "b"}, {"-T", "a", "b", "d"}}) {
        const Compared r = compare(files_and_dir, args);
        EXPECT_EQ(r.theirs.status, 1) << r.theirs.err;
        EXPECT_EQ(r.ours.status, 1) << r.ours.err;
        const auto first_line = [](const std::string& e) {
            return e.substr(e.find(':'), e.find('\n') - e.find(':'));
        };
        EXPECT_EQ(first_line(r.ours.err), first_line(r.theirs.err)) << args[0];
        EXPECT_EQ(r.tree_ours, r.tree_theirs);
    }
    const Compared missing = compare(files_and_dir, {"-t", "nowhere", "a"});
    EXPECT_EQ(missing.theirs.status, 1);
    EXPECT_EQ(missing.ours.status, missing.theirs.status);
    EXPECT_EQ(missing.ours.err, "uringkit " + missing.theirs.err);
    // -T and a file onto a directory: refused by both, the directory untouched.
    const Compared onto = compare(files_and_dir, {"-T", "a", "d"});
    EXPECT_NE(onto.ours.status, 0);
    EXPECT_EQ(onto.ours.err, "uringkit " + onto.theirs.err);
    EXPECT_EQ(onto.tree_ours, onto.tree_theirs);
}

TEST(CpOptions, VerboseLinesAreCoreutilsBytes) {
    // Names that need quoting: a space, a single quote, a newline, control
    // characters, bytes outside ASCII, the shell's specials.
    const std::vector<std::string> names = {
        "plain",       "with space",  "it's",  "n\nl", std::string("\x01\tq"),
        "caf\xc3\xa9", "bad\xff\xc3", "$HOME", "a\\b", "'",
        "#x",          "x#",          "~",     "{",    "a{b",
        "it's $x",     "q?",          "@at"};
    const auto prepare = [&](const std::string& d) {
        stdfs::create_directory(d + "/out");
        for (const std::string& n : names) write_file(d + "/" + n, n);
    };
    std::vector<std::string> args{"-v"};
    args.insert(args.end(), names.begin(), names.end());
    args.push_back("out");
    // In the C locale a byte outside ASCII is escaped; in a UTF-8 one a
    // printable character stays (an invalid sequence is escaped either way).
    const char* const was = std::getenv("LC_ALL");
    const std::string saved = was ? was : "";
    for (const char* locale : {"C", "C.UTF-8"}) {
        ::setenv("LC_ALL", locale, 1);
        const Compared r = compare(prepare, args);
        expect_same(r);
        EXPECT_EQ(r.ours.out.find("caf\xc3\xa9") != std::string::npos, locale[1] == '.') << locale;
    }
    if (was)
        ::setenv("LC_ALL", saved.c_str(), 1);
    else
        ::unsetenv("LC_ALL");
    // A tree: its directories and files, new and then into an existing copy
    // (an existing directory has no line), a link inside it.
    const auto tree = [](const std::string& d) {
        files_and_dir(d);
        stdfs::create_directories(d + "/s/u/v");
        write_file(d + "/s/u/v/w", "w");
        stdfs::create_symlink("../t/f", d + "/s/u/link");
    };
    expect_same(compare(tree, {"-rv", "s", "copy"}), true);
    expect_same(compare(tree, {"-rv", "s", "e"}), true);
    expect_same(compare(tree, {"-av", "s", "e"}), true);
    // --remove-destination says what it removed first.
    expect_same(compare(files_and_dir, {"-v", "--remove-destination", "a", "b"}));
    expect_same(compare(files_and_dir, {"--verbose", "-n", "a", "b"}));
}

TEST(CpOptions, UpdateCopiesOnlyOverOlderDestinations) {
    const auto prepare = [](const std::string& d) {
        stdfs::create_directories(d + "/src");
        stdfs::create_directories(d + "/dst");
        const std::vector<std::pair<const char*, long>> src = {
            {"older", 2000000000}, {"newer", 1000000000}, {"same", 1500000000}, {"missing", 5}};
        for (const auto& [n, t] : src) {
            write_file(d + "/src/" + n, n);
            set_mtime(d + "/src/" + n, t);
        }
        for (const auto& [n, t] : std::vector<std::pair<const char*, long>>{
                 {"older", 1000000000}, {"newer", 2000000000}, {"same", 1500000000}}) {
            for (const char* dir : {"/dst/", "/tree/src/"}) {
                stdfs::create_directories(d + "/tree/src");
                write_file(d + dir + n, std::string("was ") + n);
                set_mtime(d + dir + n, t);
            }
        }
    };
    const std::vector<std::string> files = {"src/older", "src/newer", "src/same", "src/missing",
                                            "dst"};
    auto with = [&](std::vector<std::string> opts) {
        opts.insert(opts.end(), files.begin(), files.end());
        return opts;
    };
    expect_same(compare(prepare, with({"-uv"})));
    expect_same(compare(prepare, with({"--update", "-v"})));
    expect_same(compare(prepare, {"-ruv", "src", "tree"}), true);  // into existing files of a tree
    // 9.3's --update=WHEN against what 9.1 spells for it.
    expect_same(compare(prepare, with({"-v", "-n"}), {}, with({"-v", "--update=none"})));
    expect_same(compare(prepare, with({"-v", "-u"}), {}, with({"-v", "--update=older"})));
    expect_same(compare(prepare, with({"-v"}), {}, with({"-v", "-u", "--update=all"})));
    const Child bad = run(cp({"--update=sometimes", "a", "b"}));
    EXPECT_EQ(bad.status, 1) << bad.err;
}

// As nobody: destinations nobody may not write, in a directory nobody
// owns.  -f removes such a file (or a symbolic link to one: the link, never
// the file it names) and makes it anew; without -f both refuse.
TEST(CpOptions, ForceReplacesWhatCannotBeOpened) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to drop to nobody";
    const auto prepare = [](const std::string& d) {
        write_file(d + "/a", "alpha");
        ::chmod((d + "/a").c_str(), 0640);
        ::chown((d + "/a").c_str(), kNobody, kNobody);
        write_file(d + "/locked", "root's");  // root's, 0644: nobody cannot open it to write
        write_file(d + "/outside", "keep me");
        stdfs::create_symlink("outside", d + "/link");
        stdfs::create_directories(d + "/t/sub");
        write_file(d + "/t/sub/x", "new x");
        ::chown((d + "/t").c_str(), kNobody, kNobody);
        ::chown((d + "/t/sub").c_str(), kNobody, kNobody);
        ::chown((d + "/t/sub/x").c_str(), kNobody, kNobody);
        stdfs::create_directories(d + "/into/sub");
        ::chown((d + "/into").c_str(), kNobody, kNobody);
        ::chown((d + "/into/sub").c_str(), kNobody, kNobody);
        write_file(d + "/into/sub/x", "root's x");
    };
    const Compared refused = compare(prepare, {"a", "locked"}, {}, {}, true);
    EXPECT_EQ(refused.theirs.status, 1);
    EXPECT_EQ(refused.ours.status, 1);
    EXPECT_EQ(refused.ours.err, "uringkit " + refused.theirs.err);
    EXPECT_EQ(refused.tree_ours, refused.tree_theirs);
    expect_same(compare(prepare, {"-f", "a", "locked"}, {}, {}, true));
    expect_same(compare(prepare, {"-fv", "a", "locked"}, {}, {}, true));
    expect_same(compare(prepare, {"--force", "a", "link"}, {}, {}, true));
    expect_same(compare(prepare, {"-rfv", "t/sub", "into"}, {}, {}, true));
    // -f does not cancel -n, given before or after it (coreutils' cp).
    expect_same(compare(prepare, {"-f", "-n", "a", "locked"}, {}, {}, true));
    expect_same(compare(prepare, {"-n", "-f", "a", "locked"}, {}, {}, true));
}

// --no-preserve=mode: a new file gets 0666 and a new directory 0777, less
// the umask (022 here), not the source's bits, as coreutils does; without
// it the source's bits less the umask.  Files, a tree and --parents.
TEST(CpOptions, NoPreserveModeGivesNewFilesTheDefaultMode) {
    const auto prepare = [](const std::string& d) {
        write_file(d + "/private", "600");
        ::chmod((d + "/private").c_str(), 0600);
        stdfs::create_directories(d + "/tree/sub");
        write_file(d + "/tree/sub/x", "700");
        ::chmod((d + "/tree/sub/x").c_str(), 0700);
        ::chmod((d + "/tree/sub").c_str(), 0700);
        stdfs::create_directory(d + "/into");
    };
    expect_same(compare(prepare, {"--no-preserve=mode", "private", "copy"}));
    expect_same(compare(prepare, {"private", "copy"}));
    expect_same(compare(prepare, {"-r", "--no-preserve=mode", "tree", "t2"}));
    expect_same(compare(prepare, {"-a", "--no-preserve=all", "tree", "t3"}));
    expect_same(compare(prepare, {"--parents", "--no-preserve=mode", "tree/sub/x", "into"}));
}

}  // namespace
