// `uringkit readfiles` as users run it: output byte-identical to
// `xxhsum -H1` for the same files in the same order (odd names included),
// accepted by `xxhsum -c`; `-` reads paths from stdin; per-file errors with
// their errno and exit status 1; io_uring forbidden by seccomp -> the sync
// engine, said once, same output.
#include "files_test_support.hpp"
#include "uringkit/sys/sanitizers.hpp"

#include <sys/resource.h>

namespace {

using namespace files_test;

struct Fixture {
    Scratch s;
    std::vector<std::string> files;  // walk order under s/t
    Fixture(bool odd_names) {
        stdfs::create_directories(s.dir / "t" / "deeper");
        add("t/a", 0);
        add("t/b b", 4097);
        add("t/c", 300000);
        add("t/deeper/d", 1);
        if (odd_names) add("t/e\nnewline\\back", 77);
        add("t/z", 4096);
    }
    void add(const std::string& rel, std::size_t n) {
        write_file(s / rel, random_bytes(n, static_cast<unsigned>(files.size() + 7)));
        files.push_back(s / rel);
    }
};

std::vector<std::string> cmd(std::initializer_list<std::string> a,
                             const std::vector<std::string>& more = {}) {
    std::vector<std::string> v{URINGKIT_CLI, "readfiles"};
    v.insert(v.end(), a);
    v.insert(v.end(), more.begin(), more.end());
    return v;
}

TEST(ReadFilesCli, ByteIdenticalToXxhsumEveryEngine) {
    if (!have_program("xxhsum")) GTEST_SKIP() << "xxhsum (Debian package xxhash) is not installed";
    Fixture f(true);
    std::vector<std::string> x{"xxhsum", "-H1"};
    x.insert(x.end(), f.files.begin(), f.files.end());
    const Child ref = run(x);
    ASSERT_EQ(ref.status, 0) << ref.err;
    for (const char* engine : {"ring", "threadpool", "sync"}) {
        const Child ours = run(cmd({"--engine", engine, f.s / "t"}));
        EXPECT_EQ(ours.status, 0) << ours.err;
        EXPECT_EQ(ours.out, ref.out) << engine;
    }
    // Explicit files in a chosen order keep that order.
    std::vector<std::string> rev(f.files.rbegin(), f.files.rend());
    std::vector<std::string> xr{"xxhsum", "-H1"};
    xr.insert(xr.end(), rev.begin(), rev.end());
    EXPECT_EQ(run(cmd({}, rev)).out, run(xr).out);
}

TEST(ReadFilesCli, XxhsumCheckAcceptsTheOutput) {
    if (!have_program("xxhsum")) GTEST_SKIP() << "xxhsum (Debian package xxhash) is not installed";
    Fixture f(false);  // xxhsum -c cannot read names with a newline
    const Child ours = run(cmd({f.s / "t"}));
    ASSERT_EQ(ours.status, 0) << ours.err;
    write_file(f.s / "sums", ours.out);
    const Child check = run({"xxhsum", "-c", f.s / "sums"});
    EXPECT_EQ(check.status, 0) << check.out << check.err;
    EXPECT_EQ(count(check.out, ": OK"), f.files.size()) << check.out;
    // And it notices a change.
    write_file(f.files[2], "changed");
    EXPECT_NE(run({"xxhsum", "-c", f.s / "sums"}).status, 0);
}

TEST(ReadFilesCli, PathsFromStdinUnorderedHashNoneSummary) {
    Fixture f(false);
    std::string list;
    for (const std::string& p : f.files) list += p + "\n";
    const Child ordered = run(cmd({"-"}), list);
    ASSERT_EQ(ordered.status, 0) << ordered.err;
    const Child direct = run(cmd({}, f.files));
    EXPECT_EQ(ordered.out, direct.out);

    const Child unordered = run(cmd({"--unordered", f.s / "t"}));
    auto sorted_lines = [](const std::string& t) {
        std::vector<std::string> v;
        std::istringstream in(t);
        for (std::string l; std::getline(in, l);) v.push_back(l);
        std::sort(v.begin(), v.end());
        return v;
    };
    EXPECT_EQ(sorted_lines(unordered.out), sorted_lines(direct.out));

    const Child none = run(cmd({"--hash", "none", "--summary", f.s / "t"}));
    EXPECT_EQ(none.status, 0);
    std::uint64_t bytes = 0;
    for (const std::string& p : f.files) bytes += stdfs::file_size(p);
    EXPECT_EQ(none.out,
              std::to_string(f.files.size()) + " files, " + std::to_string(bytes) + " bytes\n");
    EXPECT_NE(none.err.find("files/s"), std::string::npos) << none.err;
    EXPECT_NE(none.err.find("per file"), std::string::npos) << none.err;
}

// `find -print0 | readfiles -0 -`: a NUL-separated list names any file,
// one with a newline in its name included, in the list's order.
TEST(ReadFilesCli, NulSeparatedListFromStdin) {
    Fixture f(true);
    std::string list;
    for (const std::string& p : f.files) list += p + '\0';
    list += '\0';  // an empty entry is skipped
    const Child nul = run(cmd({"-0", "-"}), list);
    ASSERT_EQ(nul.status, 0) << nul.err;
    const Child direct = run(cmd({}, f.files));
    ASSERT_EQ(direct.status, 0) << direct.err;
    EXPECT_EQ(nul.out, direct.out);
    EXPECT_NE(nul.out.find("newline"), std::string::npos) << nul.out;
}

// A missing input is status 4, as in every tool (README "Exit statuses"); the
// other inputs are still read.
TEST(ReadFilesCli, MissingInputIsStatusFourRestContinue) {
    Fixture f(false);
    const Child r = run(cmd({f.files[0], f.s / "nope", f.files[1]}));
    EXPECT_EQ(r.status, 4);
    EXPECT_EQ(count(r.out, "\n"), 2u) << r.out;
    EXPECT_NE(r.err.find("nope: No such file or directory (errno 2)"), std::string::npos) << r.err;
    EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
}

TEST(ReadFilesCli, BadOptionsOneLineExitTwo) {
    const Child r = run(cmd({"--bs", "1000", "/tmp"}));
    EXPECT_EQ(r.status, 2);
    // The one usage-error style: the bad value, then where to look.
    EXPECT_EQ(count(r.err, "\n"), 2u) << r.err;
    EXPECT_EQ(r.err.rfind("uringkit readfiles: --bs 1000: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("Try 'uringkit readfiles --help'"), std::string::npos) << r.err;
}

// Read buffers beyond the machine's memory can never be had: refused before
// anything is read, naming the option and the limit.  (--bs 512m --threads 1
// ended with a bare "uringkit: std::bad_alloc"; with several ring threads
// each fell back on its own.)
TEST(ReadFilesCli, BuffersBeyondMemoryAreRefusedUpFront) {
    Fixture f(false);
    const std::vector<std::vector<std::string>> impossible = {
        {"--bs", "1g", "--inflight", "4096", "--threads", "1"},  // 8 TiB for one ring
        {"--bs", "1g", "--inflight", "4096"},
        {"--engine", "threadpool", "--bs", "1g", "--threads", "1024"}};  // 1 TiB
    for (const auto& opts : impossible) {
        const Child r = run(cmd({f.s / "t"}, opts));
        EXPECT_EQ(r.status, 2) << opts[1] << ": " << r.err;
        EXPECT_NE(r.err.find("--bs 1g: the read buffers would take"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("of memory here"), std::string::npos) << r.err;
        EXPECT_EQ(count(r.err, "\n"), 2u) << r.err;  // and the Try line
        EXPECT_EQ(r.out, "");
    }
    // The case of the report: 32 GiB of buffers, refused where the machine
    // has less, read where it has more; never a bare bad_alloc.
    const Child r = run(cmd({"--bs", "512m", "--threads", "1", f.files[0]}));
    EXPECT_TRUE(r.status == 0 || r.status == 2) << r.err;
    EXPECT_EQ(r.err.find("bad_alloc"), std::string::npos) << r.err;
}

// Buffers that fit in memory but cannot be allocated here (an address space
// limit stands in for memory that is taken): the ring engine says what it
// could not allocate, once, and reads with one block at a time instead.
TEST(ReadFilesCli, BuffersThatCannotBeAllocatedFallBackAndSaySo) {
#if URINGKIT_ASAN
    GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit allows";
#else
    if (static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
            static_cast<double>(::sysconf(_SC_PAGESIZE)) <
        4.5e9)
        GTEST_SKIP()
            << "needs 4 GiB of memory, so that 8 x 2 x 256 MiB of buffers are not refused up front";
    Fixture f(false);
    const Child ref = run(cmd({f.s / "t"}));
    ASSERT_EQ(ref.status, 0) << ref.err;
    // One ring over all the files, and two rings (5 files, 2 in flight each).
    for (const auto& [threads, inflight] : {std::pair{"1", "8"}, std::pair{"2", "2"}}) {
        const Child r = run(
            cmd({"--bs", "256m", "--inflight", inflight, "--threads", threads, f.s / "t"}), {}, [] {
                const rlimit one_gib{1ul << 30, 1ul << 30};
                ::setrlimit(RLIMIT_AS, &one_gib);
            });
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.out, ref.out);
        EXPECT_NE(r.err.find("cannot allocate"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("for the read buffers (2 x 256 MiB for each of"), std::string::npos)
            << r.err;
    }
#endif
}

TEST(ReadFilesCli, WithoutIoUringFallsBackSaysSoOnceSameOutput) {
    Fixture f(true);
    const Child ref = run(cmd({f.s / "t"}));
    ASSERT_EQ(ref.status, 0);
    // EPERM (seccomp, sysctl) and ENOSYS (no io_uring in the kernel) for every
    // io_uring call; and io_uring_setup allowed with io_uring_enter refused
    // (EPERM), as some sandboxes do, with one ring thread and with several.
    const std::vector<std::vector<std::string>> without = {
        {NO_URING, "--errno", "1", URINGKIT_CLI, "readfiles"},
        {NO_URING, "--errno", "38", URINGKIT_CLI, "readfiles"},
        {NO_URING, "--fail-enter-after", "0", "--errno", "1", URINGKIT_CLI, "readfiles",
         "--threads", "1"},
        {NO_URING, "--fail-enter-after", "0", "--errno", "1", URINGKIT_CLI, "readfiles",
         "--threads", "3"}};
    for (std::vector<std::string> a : without) {
        a.insert(a.end(), {"--summary", f.s / "t"});
        const Child r = run(a);
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.out, ref.out);
        EXPECT_EQ(count(r.err, "io_uring unavailable"), 1u) << r.err;
        EXPECT_NE(r.err.find("engine sync"), std::string::npos) << r.err;
    }
}

// io_uring_enter failing from its Nth call on (strace's fault injection,
// per thread): readfiles ends with status 1 and one line naming the error,
// never hangs (a hang is killed and shows as status 137), and every hash it
// printed before is right.  One refused call (-EBUSY once) is waited out.
// Refused from the first call, the ring's NOP round trip fails before any
// work is given to it: readfiles reads with the sync engine, says so once,
// and prints every line.
TEST(ReadFilesCli, EnterFailingFromTheNthCallEndsWithTheError) {
    if (run({"strace", "-qq", "-o", "/dev/null", "true"}).status != 0)
        GTEST_SKIP() << "strace is not installed or cannot trace here (ptrace refused)";
    Fixture f(false);
    stdfs::create_directories(f.s.dir / "t" / "many");
    for (int i = 0; i < 40; ++i)
        f.add("t/many/f" + std::to_string(i), 5000u + static_cast<unsigned>(i) * 811u);
    const std::vector<std::string> opts{"--threads", "1",  "--inflight", "4",
                                        "--bs",      "4k", f.s / "t"};
    const Child ref = run(cmd({}, opts));
    ASSERT_EQ(ref.status, 0) << ref.err;
    auto under_strace = [&](const std::string& inject) {
        std::vector<std::string> a{"timeout",
                                   "-s",
                                   "KILL",
                                   "120",
                                   "strace",
                                   "-f",
                                   "-qq",
                                   "-o",
                                   "/dev/null",
                                   "-e",
                                   "trace=io_uring_enter",
                                   "-e",
                                   "inject=io_uring_enter:" + inject,
                                   URINGKIT_CLI,
                                   "readfiles"};
        a.insert(a.end(), opts.begin(), opts.end());
        // LeakSanitizer cannot run under ptrace: off for the traced child.
        return run(a, {}, [] {
            const char* asan = std::getenv("ASAN_OPTIONS");
            const std::string o =
                std::string(asan ? asan : "") + (asan && *asan ? ":" : "") + "detect_leaks=0";
            ::setenv("ASAN_OPTIONS", o.c_str(), 1);
        });
    };
    for (const char* err : {"EBUSY", "EBADR", "EEXIST", "EIO"}) {
        const Child first = under_strace(std::string("error=") + err + ":when=1+");
        EXPECT_EQ(first.status, 0) << err << ": " << first.err;
        EXPECT_EQ(first.out, ref.out) << err;
        EXPECT_EQ(count(first.err, "io_uring unavailable (io_uring_enter"), 1u) << first.err;
        EXPECT_EQ(count(first.err, "\n"), 1u) << first.err;
    }
    for (const char* err : {"EBUSY", "EBADR", "EEXIST", "EIO"})
        for (const char* when : {"3+", "6+"}) {
            const Child r = under_strace(std::string("error=") + err + ":when=" + when);
            SCOPED_TRACE(std::string(err) + " from call " + when);
            EXPECT_EQ(r.status, 1) << r.err;
            EXPECT_NE(r.err.find("io_uring_enter"), std::string::npos) << r.err;
            EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
            std::istringstream lines(r.out);
            for (std::string line; std::getline(lines, line);)
                EXPECT_NE(ref.out.find(line + "\n"), std::string::npos) << line;
        }
    const Child once = under_strace("error=EBUSY:when=4");
    EXPECT_EQ(once.status, 0) << once.err;
    EXPECT_EQ(once.out, ref.out);
}

}  // namespace

namespace {

// The README's rule, as an ordinary user: a named input that may not be read
// is 4 like a missing one; a file found inside a tree that may not be read is
// 1; the readable files are hashed either way.
TEST(ReadFilesCli, UnreadableNamedInputIsFourInsideATreeIsOne) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to drop to nobody";
    Fixture f(false);
    ::chmod(f.s.dir.c_str(), 0755);
    for (const auto& e : stdfs::recursive_directory_iterator(f.s.dir))
        ::chmod(e.path().c_str(), e.is_directory() ? 0755 : 0644);
    ::chmod(f.files[2].c_str(), 0600);  // t/c: root's only
    const auto as_nobody = [] {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(126);
    };
    for (const char* engine : {"ring", "sync"}) {
        const Child tree = run(cmd({"--engine", engine, f.s / "t"}), {}, as_nobody);
        EXPECT_EQ(tree.status, 1) << engine << ": " << tree.err;
        EXPECT_EQ(count(tree.out, "\n"), f.files.size() - 1) << tree.out;
        EXPECT_NE(tree.err.find("t/c: open: Permission denied"), std::string::npos) << tree.err;
        const Child named = run(cmd({"--engine", engine, f.files[0], f.files[2]}), {}, as_nobody);
        EXPECT_EQ(named.status, 4) << engine << ": " << named.err;
        EXPECT_EQ(count(named.out, "\n"), 1u) << named.out;
    }
}

}  // namespace

// Every hash xxhsum 0.8.1 knows (-H0/-H32 XXH32, -H1/-H64 XXH64, -H2/-H128
// XXH128, -H3 XXH3), in each of its line styles (GNU, --tag, either with
// --little-endian): the same bytes on stdout and the same exit status as
// xxhsum, for names with a space, a backslash, a CR and invalid UTF-8, an
// empty file and a 1 MiB one.
TEST(ReadFilesCli, EveryHashAndStyleByteIdenticalToXxhsum) {
    if (!have_program("xxhsum")) GTEST_SKIP() << "xxhsum (Debian package xxhash) is not installed";
    Scratch s;
    std::vector<std::string> files;
    const std::pair<const char*, std::size_t> made[] = {
        {"plain", 3},     {"with space", 100},     {"back\\slash", 4097},
        {"cr\rname", 17}, {"bad\xff\xfeutf8", 64}, {"empty", 0},
        {"mib", 1 << 20}};
    unsigned seed = 40;
    for (const auto& [name, n] : made) {
        files.push_back(s / name);
        write_file(files.back(), random_bytes(n, seed++));
    }
    for (const char* h : {"-H0", "-H32", "-H1", "-H64", "-H2", "-H128", "-H3"})
        for (const std::vector<std::string>& style : {std::vector<std::string>{},
                                                      {"--tag"},
                                                      {"--little-endian"},
                                                      {"--tag", "--little-endian"}}) {
            std::vector<std::string> x{"xxhsum", h}, ours = cmd({h});
            x.insert(x.end(), style.begin(), style.end());
            ours.insert(ours.end(), style.begin(), style.end());
            x.insert(x.end(), files.begin(), files.end());
            ours.insert(ours.end(), files.begin(), files.end());
            const Child ref = run(x), got = run(ours);
            ASSERT_EQ(ref.status, 0) << ref.err;
            EXPECT_EQ(got.status, ref.status) << h << got.err;
            EXPECT_EQ(got.out, ref.out) << h << " " << (style.empty() ? "" : style[0]);
            EXPECT_EQ(count(got.out, "\n"), files.size());
        }
    // The other engines and --hash give the same lines.
    std::vector<std::string> x{"xxhsum", "-H2"};
    x.insert(x.end(), files.begin(), files.end());
    const Child ref = run(x);
    EXPECT_EQ(run(cmd({"--engine", "threadpool", "-H2"}, files)).out, ref.out);
    EXPECT_EQ(run(cmd({"--engine", "sync", "--hash", "xxh128"}, files)).out, ref.out);
    // A newline in a name: xxhsum 0.8.1 prints it as it is, and so does readfiles.
    const std::string nl = s / "new\nline";
    write_file(nl, "x");
    for (const char* h : {"-H0", "-H3"}) {
        const Child a = run({"xxhsum", h, nl}), b = run(cmd({h, nl}));
        EXPECT_EQ(b.out, a.out) << h;
        EXPECT_EQ(b.status, a.status);
        EXPECT_NE(b.out.find("new\nline"), std::string::npos) << b.out;
    }
    // -H and --hash name one thing: both, or a number xxhsum does not know, is a usage error.
    const Child both = run(cmd({"-H0", "--hash", "xxh64", files[0]}));
    EXPECT_EQ(both.status, 2);
    const Child four = run(cmd({"-H4", files[0]}));
    EXPECT_EQ(four.status, 2);
    EXPECT_NE(four.err.find("-H 4: not a hash"), std::string::npos) << four.err;
    EXPECT_EQ(four.out, "");
}
