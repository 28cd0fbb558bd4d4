// `readfiles -`: a path list read with large reads and each path stat'd
// from its directory, held open while the next paths share it
// (fs::ListedStat).  Whatever the list, the answer is the one the whole
// path gives: the same lines as naming the paths on the command line, the
// same errno for a path that fails, newline and NUL lists alike.
#include "fs/path_list.hpp"
#include "fs/walk.hpp"

#include "files_test_support.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

namespace {

using namespace files_test;

// Two directories, files listed interleaved between them, odd names, a
// symbolic link to a file and one to a directory, ".." in a path.
struct Tree {
    Scratch s;
    std::vector<std::string> listed;
    Tree() {
        stdfs::create_directories(s.dir / "a" / "sub");
        stdfs::create_directories(s.dir / "b");
        write_file(s / "a/1", random_bytes(4096, 1));
        write_file(s / "a/2 two", random_bytes(100, 2));
        write_file(s / "b/3", random_bytes(70000, 3));
        write_file(s / "a/sub/4", random_bytes(0, 4));
        write_file(s / "b/back\\slash", random_bytes(9, 5));
        stdfs::create_symlink(s / "b/3", s / "a/link-to-3");
        stdfs::create_directory_symlink(s / "b", s / "a/link-to-b");
        listed = {s / "a/1",         s / "b/3",           s / "a/2 two",
                  s / "a/sub/4",     s / "a/sub/../1",    s / "b/back\\slash",
                  s / "a/link-to-3", s / "a/link-to-b/3", s / "a/1"};
    }
};

std::string join(const std::vector<std::string>& v, char sep) {
    std::string out;
    for (const std::string& p : v) out += p + sep;
    return out;
}

TEST(ReadFilesList, SameLinesAsTheCommandLineNewlineAndNul) {
    Tree t;
    const Child direct = run(readfiles({}, t.listed));
    ASSERT_EQ(direct.status, 0) << direct.err;
    ASSERT_EQ(count(direct.out, "\n"), t.listed.size()) << direct.out;
    for (const char* engine : {"ring", "sync"}) {
        const Child nl = run(readfiles({"--engine", engine, "-"}), join(t.listed, '\n'));
        EXPECT_EQ(nl.status, 0) << nl.err;
        EXPECT_EQ(nl.out, direct.out) << engine;
        const Child nul = run(readfiles({"--engine", engine, "-0", "-"}), join(t.listed, '\0'));
        EXPECT_EQ(nul.status, 0) << nul.err;
        EXPECT_EQ(nul.out, direct.out) << engine;
    }
}

// A directory in the list is walked, a list without a final newline keeps
// its last path, relative paths resolve from the working directory.
TEST(ReadFilesList, DirectoriesRelativePathsAndNoFinalNewline) {
    Tree t;
    const Child direct = run(readfiles({t.s / "a/sub", t.s / "b/3"}));
    ASSERT_EQ(direct.status, 0) << direct.err;
    const Child listed = run(readfiles({"-"}), t.s / "a/sub/\n" + t.s / "b/3");
    EXPECT_EQ(listed.status, 0) << listed.err;
    EXPECT_EQ(listed.out, direct.out);
    const Child rel =
        run({"sh", "-c", "cd '" + t.s.dir.string() + "' && exec \"$0\" readfiles -", URINGKIT_CLI},
            "a/1\nb/3\n");
    const Child rel_direct =
        run({"sh", "-c", "cd '" + t.s.dir.string() + "' && exec \"$0\" readfiles a/1 b/3",
             URINGKIT_CLI});
    EXPECT_EQ(rel.status, 0) << rel.err;
    EXPECT_EQ(rel.out, rel_direct.out);
    EXPECT_EQ(count(rel.out, "\n"), 2u) << rel.out;
}

// Paths that fail say the errno the whole path gives, and are status 4;
// the rest of the list is read.
TEST(ReadFilesList, FailuresGiveTheWholePathsErrno) {
    Tree t;
    const std::vector<std::string> bad = {t.s / "a/missing", t.s / "nodir/x",
                                          t.s / "a/1/under-a-file"};
    std::vector<std::string> list = {t.s / "a/1"};
    list.insert(list.end(), bad.begin(), bad.end());
    list.push_back(t.s / "b/3");
    const Child r = run(readfiles({"-"}), join(list, '\n'));
    EXPECT_EQ(r.status, 4) << r.err;
    EXPECT_EQ(count(r.out, "\n"), 2u) << r.out;
    for (const std::string& p : bad) {
        struct stat st {};
        ASSERT_NE(::stat(p.c_str(), &st), 0);
        const int e = errno;
        EXPECT_NE(r.err.find(p + ": " + std::strerror(e) + " (errno " + std::to_string(e) + ")"),
                  std::string::npos)
            << p << "\n"
            << r.err;
    }
}

// ListedStat against stat(2) of the whole path, path by path (each
// directory's first path is stat'd, the next ones come from its listing),
// with the directory changing under it: a directory replaced by a symbolic
// link before its first path is followed as the whole path follows it; one
// replaced after it was opened answers as the whole path did then (the
// walk's own race: it opens what it listed earlier), never from anywhere
// the whole path never led.
TEST(ReadFilesList, ListedStatAnswersAsTheWholePath) {
    Tree t;
    uringkit::fs::ListedStat lister;
    std::uint64_t calls = 0;
    const auto same = [&](const std::string& p) {
        uringkit::fs::ListedStat::Answer a;
        struct stat whole {};
        const int r = lister.lookup(p.c_str(), a, calls);
        const int w = ::stat(p.c_str(), &whole) == 0 ? 0 : -errno;
        EXPECT_EQ(r, w) << p;
        if (r == 0 && w == 0) {
            EXPECT_EQ(a.type, whole.st_mode & S_IFMT) << p;
        }
    };
    for (const std::string& p : t.listed) same(p);
    for (const char* p : {"a/missing", "nodir/x", "a/1/under-a-file", "a/", "a/sub/..", "a/.",
                          "a/sub", "a/link-to-b", "a/2 two", "a/link-to-3"})
        same(t.s / p);
    same("/");
    same("/dev/null");
    // Swapped before its first path: followed like the whole path.
    stdfs::rename(t.s / "a/sub", t.s / "a/sub-old");
    stdfs::create_directory_symlink(t.s / "b", t.s / "a/sub");
    same(t.s / "a/sub/3");
    same(t.s / "a/sub/4");  // ENOENT: b has no 4
    same(t.s / "a/sub/back\\slash");
    // Swapped after: the directory opened by the first path is where the
    // next ones are found, as the whole path found them then.
    uringkit::fs::ListedStat::Answer a;
    ASSERT_EQ(lister.lookup((t.s / "b/3").c_str(), a, calls), 0);
    stdfs::rename(t.s / "b", t.s / "b-old");
    stdfs::create_directory_symlink(t.s / "a", t.s / "b");
    ASSERT_EQ(lister.lookup((t.s / "b/back\\slash").c_str(), a, calls), 0);
    EXPECT_EQ(a.type, S_IFREG);
    struct stat st {};
    EXPECT_EQ(::stat((t.s / "b-old/back\\slash").c_str(), &st), 0) << "where it was found";
    EXPECT_NE(::stat((t.s / "b/back\\slash").c_str(), &st), 0) << "the swap took";
    EXPECT_GT(calls, 0u);
}

// A list from a file (not a pipe) and one larger than a single read.
TEST(ReadFilesList, LongListFromAFile) {
    Scratch s;
    const std::string dir = s / std::string(200, 'd');  // ~430-byte paths: 1.3 MB of list
    stdfs::create_directories(dir);
    std::vector<std::string> files;
    for (int i = 0; i < 3000; ++i) {
        const std::string p = dir + "/" + std::string(200, 'n') + std::to_string(i);
        write_file(p, std::to_string(i));
        files.push_back(p);
    }
    std::sort(files.begin(), files.end());      // the walk's order: names in byte order
    write_file(s / "list", join(files, '\n'));  // more than one 1 MiB read
    ASSERT_GT(stdfs::file_size(s / "list"), 1u << 20);
    const Child listed =
        run({"sh", "-c", "exec \"$0\" readfiles - < \"$1\"", URINGKIT_CLI, s / "list"});
    ASSERT_EQ(listed.status, 0) << listed.err;
    const Child direct = run(readfiles({dir}));
    ASSERT_EQ(direct.status, 0) << direct.err;
    EXPECT_EQ(count(listed.out, "\n"), files.size());
    EXPECT_EQ(listed.out, direct.out);
}

// read_path_list parses 64 KiB at a time: entries cut by a read's end, one
// entry longer than the buffer, and a last entry without its separator come
// out as the whole text gives them, from a pipe written in odd pieces and
// from a regular file.
TEST(ReadFilesList, PathListReadInPiecesIsTheWholeText) {
    for (const char sep : {'\n', '\0'}) {
        std::string text;
        for (int i = 0; i < 20000; ++i)
            text += "/dir" + std::to_string(i % 97) + "/f" + std::to_string(i) + sep;
        text += std::string(150000, 'L') + sep + sep + "/last-without-separator";
        uringkit::fs::PathList want;
        uringkit::fs::append_path_list(text, sep, want);

        int fds[2];
        ASSERT_EQ(::pipe(fds), 0);
        std::thread writer([&] {
            std::size_t at = 0, piece = 1;
            while (at < text.size()) {
                const std::size_t n = std::min(piece, text.size() - at);
                if (::write(fds[1], text.data() + at, n) != static_cast<ssize_t>(n)) break;
                at += n;
                piece = piece * 7 % 100003 + 1;  // 1 byte to ~100 KB
            }
            ::close(fds[1]);
        });
        uringkit::fs::PathList got;
        EXPECT_EQ(uringkit::fs::read_path_list(fds[0], sep, got), 0);
        writer.join();
        ::close(fds[0]);

        Scratch s;
        write_file(s / "list", text);
        const int fd = ::open((s / "list").c_str(), O_RDONLY);
        ASSERT_GE(fd, 0);
        uringkit::fs::PathList from_file;
        EXPECT_EQ(uringkit::fs::read_path_list(fd, sep, from_file), 0);
        ::close(fd);

        for (const uringkit::fs::PathList* list : {&got, &from_file}) {
            ASSERT_EQ(list->size(), want.size());
            for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ((*list)[i], want[i]) << i;
        }
        EXPECT_EQ(want[want.size() - 2], std::string(150000, 'L'));
        EXPECT_EQ(want[want.size() - 1], "/last-without-separator");
    }
}

// ---- readfiles --check: xxhsum -c's lists, verified on the ring -------------

// Files with odd names, and lists of them made by xxhsum 0.8.1 itself, of
// every hash and style.
struct CheckTree {
    Scratch s;
    std::vector<std::string> files;
    CheckTree() {
        const std::pair<const char*, std::size_t> made[] = {
            {"a", 3}, {"sp ace", 100}, {"back\\slash", 5000}, {"empty", 0}, {"mib", 1 << 20}};
        unsigned seed = 60;
        for (const auto& [name, n] : made) {
            files.push_back(s / name);
            write_file(files.back(), random_bytes(n, seed++));
        }
    }
    std::string xxhsum(std::vector<std::string> args) const {
        args.insert(args.begin(), "xxhsum");
        args.insert(args.end(), files.begin(), files.end());
        const Child c = run(args);
        EXPECT_EQ(c.status, 0) << c.err;
        return c.out;
    }
    // Every algorithm, GNU and BSD style, and BSD lines in little-endian.
    std::string good() const {
        std::string all;
        for (const char* h : {"-H0", "-H1", "-H2", "-H3"}) {
            all += xxhsum({h});
            all += xxhsum({h, "--tag"});
            all += xxhsum({h, "--tag", "--little-endian"});
        }
        return all;
    }
};

// `readfiles -c ARGS LIST` and `xxhsum -c ARGS LIST`: the same stdout and
// status; returns readfiles' run.
Child check_as_xxhsum(const std::vector<std::string>& args, const std::string& list,
                      const std::string& stdin_text = {}) {
    std::vector<std::string> x{"xxhsum", "-c"}, ours{URINGKIT_CLI, "readfiles", "-c"};
    x.insert(x.end(), args.begin(), args.end());
    ours.insert(ours.end(), args.begin(), args.end());
    x.push_back(list);
    ours.push_back(list);
    const Child ref = run(x, stdin_text), got = run(ours, stdin_text);
    EXPECT_EQ(got.out, ref.out) << list << " " << (args.empty() ? "" : args[0]) << "\n" << got.err;
    EXPECT_EQ(got.status, ref.status) << list << " " << (args.empty() ? "" : args[0]);
    return got;
}

const std::vector<std::vector<std::string>> kCheckOptions = {
    {}, {"--quiet"}, {"--status"}, {"--strict"}, {"--warn"}, {"--quiet", "--strict", "--warn"}};

// A list of every hash and style, all good: every line OK (--quiet: none),
// status 0, whatever the options; from stdin too.
TEST(ReadFilesCheck, GoodListAsXxhsum) {
    if (!have_program("xxhsum")) GTEST_SKIP() << "xxhsum (Debian package xxhash) is not installed";
    CheckTree t;
    write_file(t.s / "good", t.good());
    for (const auto& opts : kCheckOptions) {
        const Child c = check_as_xxhsum(opts, t.s / "good");
        EXPECT_EQ(c.status, 0) << c.err;
        EXPECT_EQ(c.err, "");
    }
    const Child plain = check_as_xxhsum({}, t.s / "good");
    EXPECT_EQ(count(plain.out, ": OK\n"), 12 * t.files.size()) << plain.out;
    const Child in = check_as_xxhsum({}, "-", t.good());
    EXPECT_EQ(in.out, plain.out);
}

// A corrupted hash, a missing file, a malformed line and a GNU line of
// little-endian digits (read as big-endian, as xxhsum does): FAILED, "Could
// not open or read", the counts, status 1; --strict, --warn, --quiet and
// --status as xxhsum; --warn's line on stderr.
TEST(ReadFilesCheck, BadLinesAsXxhsum) {
    if (!have_program("xxhsum")) GTEST_SKIP() << "xxhsum (Debian package xxhash) is not installed";
    CheckTree t;
    std::string list = t.good();
    list[0] = list[0] == '0' ? '1' : '0';  // the first XXH32 no longer matches
    list += "ffffffffffffffff  " + t.files[1] + "\n";
    list += "0123456789abcdef  " + (t.s / "missing") + "\n";
    list += "XXH64 (" + (t.s / "gone too") + ") = 0123456789abcdef\n";
    list += "this line is no checksum\n\n";
    list += t.xxhsum({"-H2", "--little-endian"});
    write_file(t.s / "bad", list);
    for (const auto& opts : kCheckOptions) {
        const Child c = check_as_xxhsum(opts, t.s / "bad");
        EXPECT_EQ(c.status, 1);
        const bool warn = std::find(opts.begin(), opts.end(), "--warn") != opts.end();
        EXPECT_EQ(count(c.err, "Improperly formatted checksum line"), warn ? 2u : 0u) << c.err;
    }
    const Child c = check_as_xxhsum({}, t.s / "bad");
    EXPECT_NE(c.out.find(t.files[1] + ": FAILED\n"), std::string::npos) << c.out;
    EXPECT_NE(c.out.find("Could not open or read '" + (t.s / "missing") + "': No such file"),
              std::string::npos)
        << c.out;
    EXPECT_NE(c.out.find("2 lines are improperly formatted\n2 listed files could not be read\n"),
              std::string::npos)
        << c.out;
    // Only badly formatted lines besides good ones: status 0, unless --strict.
    write_file(t.s / "some", t.xxhsum({"-H1"}) + "junk\n");
    EXPECT_EQ(check_as_xxhsum({}, t.s / "some").status, 0);
    EXPECT_EQ(check_as_xxhsum({"--strict"}, t.s / "some").status, 1);
    // No properly formatted line at all: status 1.
    write_file(t.s / "none", "junk\n");
    EXPECT_EQ(check_as_xxhsum({}, t.s / "none").status, 1);
}

// Beyond 0.8.1, as xxhsum 0.8.2 writes and reads: "XXH3_" GNU lines, names
// escaped behind a leading backslash, --ignore-missing.  A list that cannot
// be read is status 1; -0 does not go with --check (status 2).
TEST(ReadFilesCheck, NewerFormsAndRefusals) {
    CheckTree t;
    const std::string nl = t.s / "new\nline\\x";
    write_file(nl, "abc");
    const Child h3 = run({URINGKIT_CLI, "readfiles", "-H3", t.files[0]});
    ASSERT_EQ(h3.status, 0) << h3.err;
    const std::string hex = h3.out.substr(h3.out.rfind(' ') + 1, 16);
    const std::string escaped = (t.s / "new\\nline\\\\x");
    write_file(t.s / "newer", "XXH3_" + hex + "  " + t.files[0] + "\n" + "\\44bc2cf5ad770999  " +
                                  escaped + "\n" + "0123456789abcdef  " + (t.s / "missing") + "\n");
    const Child c = run({URINGKIT_CLI, "readfiles", "-c", "--ignore-missing", t.s / "newer"});
    EXPECT_EQ(c.status, 0) << c.out << c.err;
    EXPECT_EQ(c.out, t.files[0] + ": OK\n" + nl + ": OK\n");
    const Child strict = run({URINGKIT_CLI, "readfiles", "-c", t.s / "newer"});
    EXPECT_EQ(strict.status, 1);
    EXPECT_NE(strict.out.find("1 listed file could not be read"), std::string::npos) << strict.out;
    const Child nolist = run({URINGKIT_CLI, "readfiles", "-c", t.s / "no-such-list"});
    EXPECT_EQ(nolist.status, 1);
    EXPECT_EQ(nolist.out, "");
    EXPECT_NE(nolist.err.find("no-such-list"), std::string::npos) << nolist.err;
    const Child nul = run({URINGKIT_CLI, "readfiles", "-c", "-0", "-"});
    EXPECT_EQ(nul.status, 2);
    EXPECT_NE(nul.err.find("-0 does not go with -c:"), std::string::npos)
        << "the token typed, -c: " << nul.err;
    const Child quiet = run({URINGKIT_CLI, "readfiles", "--quiet", t.files[0]});
    EXPECT_EQ(quiet.status, 2);
    EXPECT_NE(quiet.err.find("--quiet is for --check"), std::string::npos) << quiet.err;
}

// ---- uringkit xxhsum: xxhsum 0.8.1's command line ---------------------------

// `uringkit xxhsum ARGS` and `xxhsum ARGS`: the same stdout and exit status
// (stderr is uringkit's wording); returns uringkit's run.
Child as_xxhsum(const std::vector<std::string>& args, const std::string& stdin_text = {},
                const std::string& binary = URINGKIT_CLI) {
    std::vector<std::string> x{"xxhsum"}, ours{binary};
    if (binary == URINGKIT_CLI) ours.push_back("xxhsum");
    x.insert(x.end(), args.begin(), args.end());
    ours.insert(ours.end(), args.begin(), args.end());
    const Child ref = run(x, stdin_text), got = run(ours, stdin_text);
    std::string said;
    for (const std::string& a : args) said += a + " ";
    EXPECT_EQ(got.out, ref.out) << said << "\n" << got.err;
    EXPECT_EQ(got.status, ref.status) << said << "\n" << got.err;
    return got;
}

// Every hash, in each line style, over names with a newline, a backslash,
// a CR, spaces and invalid UTF-8.
TEST(XxhsumMode, EveryHashAsXxhsum) {
    if (!have_program("xxhsum")) GTEST_SKIP() << "xxhsum (Debian package xxhash) is not installed";
    CheckTree t;
    std::vector<std::string> files = t.files;
    for (const char* odd : {"new\nline", "cr\rname", "bad\xff\xfeutf8", "two  spaces "}) {
        files.push_back(t.s / odd);
        write_file(files.back(), odd);
    }
    // Each spelling of each hash, the styles spread over them (readfiles'
    // tests run every style with every hash through the same printing).
    const std::pair<const char*, std::vector<std::string>> runs[] = {
        {"-H0", {}}, {"-H32", {"--tag"}},
        {"-H1", {}}, {"-H64", {"--little-endian"}},
        {"-H2", {}}, {"-H128", {"--tag", "--little-endian"}},
        {"-H3", {}}, {"-H03", {"--little-endian"}}};
    for (const auto& [h, style] : runs) {
        std::vector<std::string> args{h};
        args.insert(args.end(), style.begin(), style.end());
        args.insert(args.end(), files.begin(), files.end());
        const Child c = as_xxhsum(args);
        EXPECT_EQ(c.status, 0) << h << c.err;
        EXPECT_EQ(count(c.out, "\n"), files.size() + 1) << h;  // one name holds a newline
    }
}

// Standard input (no name, '-', '-' twice); a directory, a missing file, a
// pipe and a device among good files, in order; a file named '-' after the
// first name; `--`; options xxhsum refuses.
TEST(XxhsumMode, ArgumentRulesAsXxhsum) {
    if (!have_program("xxhsum")) GTEST_SKIP() << "xxhsum (Debian package xxhash) is not installed";
    CheckTree t;
    const std::string in = random_bytes(100000, 5);
    // No name is -H1 of stdin, printed "  stdin"; '-' before the names is
    // stdin, once; -H alone is -H0.
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{}, {"-", "-"}, {"-H2", "--tag", "-"}, {"-H"}})
        EXPECT_NE(as_xxhsum(args, in).out.find(args.empty() ? "  stdin\n" : "stdin"),
                  std::string::npos);
    EXPECT_EQ(as_xxhsum({"-cqH0", "-"}).status, 1);  // an empty list from stdin

    // A directory and a missing file among good files: the others in order.
    stdfs::create_directories(t.s / "dir");
    const Child mixed = as_xxhsum({"-H2", t.files[0], t.s / "dir", t.s / "missing", t.files[0]});
    EXPECT_EQ(mixed.status, 1);
    EXPECT_EQ(count(mixed.out, "\n"), 2u);
    EXPECT_NE(mixed.err.find("dir: Is a directory"), std::string::npos) << mixed.err;
    EXPECT_NE(mixed.err.find("missing"), std::string::npos) << mixed.err;
    // Files the engines skip (a pipe, a device) are read as they come, in their place.
    const Child pipe = as_xxhsum({"-H1", t.files[1], "/dev/stdin", "/dev/null", t.files[2]}, in);
    EXPECT_EQ(count(pipe.out, "\n"), 4u) << pipe.out << pipe.err;
    // Options end at the first name: a later '-' or '--tag' is a file name.
    write_file(t.s / "-", "a file named dash");
    const Child dash =
        run({"sh", "-c", "cd \"$1\" && xxhsum a - --tag; echo $?; \"$2\" xxhsum a - --tag; echo $?",
             "sh", t.s.dir, URINGKIT_CLI});
    const std::string half = dash.out.substr(0, dash.out.size() / 2);
    EXPECT_EQ(dash.out, half + half) << dash.out;
    EXPECT_NE(half.find("  -\n1\n"), std::string::npos) << dash.out;
    as_xxhsum({"-H0", "--", t.files[0]});
    // Parameters xxhsum 0.8.1 refuses: nothing on stdout, status 1.
    for (const char* bad : {"-H5", "-H64x", "--check=x"})
        EXPECT_EQ(as_xxhsum({bad, t.files[0]}).status, 1) << bad;
    // The benchmark mode is refused in one line (xxhsum would run it).
    const Child bench = run({URINGKIT_CLI, "xxhsum", "-b"});
    EXPECT_EQ(bench.status, 1);
    EXPECT_EQ(bench.out, "");
    EXPECT_NE(bench.err.find("does not benchmark"), std::string::npos) << bench.err;
}

// -c of lists of every hash and style, good and bad (a corrupted hash, a
// missing file, malformed lines), with --quiet, --status, --strict and
// --warn, from a file and from standard input; a list that is missing or
// a directory; the same through a link named xxhsum.
TEST(XxhsumMode, CheckingAsXxhsum) {
    if (!have_program("xxhsum")) GTEST_SKIP() << "xxhsum (Debian package xxhash) is not installed";
    CheckTree t;
    const std::string good = t.good();
    std::string bad = good;
    bad[0] = bad[0] == '0' ? '1' : '0';
    bad += "0123456789abcdef  " + (t.s / "missing") + "\nnot a checksum line\n\n";
    write_file(t.s / "good", good);
    write_file(t.s / "bad", bad);
    // readfiles' own tests run every option on these lists; these check that
    // the options arrive, in both spellings.
    EXPECT_EQ(as_xxhsum({"-c", t.s / "good", t.s / "bad"}).status, 1);
    EXPECT_EQ(as_xxhsum({"-cq", "--strict", "-w", t.s / "good"}).status, 0);
    EXPECT_EQ(as_xxhsum({"--check", "--quiet", "--warn", "--strict", t.s / "bad"}).status, 1);
    EXPECT_EQ(as_xxhsum({"-c", "--status", t.s / "bad"}).status, 1);
    EXPECT_NE(as_xxhsum({"--check"}, bad).out.find("stdin:"), std::string::npos);
    EXPECT_EQ(as_xxhsum({"-c", t.s / "no-such-list"}).status, 1);
    EXPECT_EQ(as_xxhsum({"-c", t.s.dir}).status, 1);
    // Called as xxhsum.
    const std::string link = t.s / "xxhsum";
    stdfs::create_symlink(URINGKIT_CLI, link);
    as_xxhsum({"-H2", "--tag", t.files[0], t.files[1]}, {}, link);
    as_xxhsum({"-c", t.s / "bad"}, {}, link);
    as_xxhsum({"-H3"}, "stdin through the link", link);
}

}  // namespace
