// Every subcommand with its standard output or standard error on a file
// that refuses writes (/dev/full, a full tmpfs, a pipe nobody reads):
//  - a diagnostic that cannot be written is dropped; the status stays what
//    it was, or becomes 1 where it would have been 0; never SIGABRT (134);
//  - standard output that cannot be written is one line, "uringkit TOOL:
//    write error on standard output: No space left on device", and status 1,
//    as sha256sum does; a reader that went away ends the tool quietly;
//  - cleanup runs: no temporary file of bench, no half-written copy of cp.
#include "loop_fs.hpp"

#include <signal.h>

namespace {

using namespace files_test;

const char* const kFullLine = "write error on standard output: No space left on device\n";

// Runs in the child: `fd` (1 or 2) goes to /dev/full.
std::function<void()> full(int fd) {
    return [fd] {
        const int f = ::open("/dev/full", O_WRONLY);
        if (f < 0 || ::dup2(f, fd) < 0) ::_exit(99);
        ::close(f);
    };
}

std::vector<std::string> cli(std::initializer_list<std::string> args) {
    std::vector<std::string> v{URINGKIT_CLI};
    v.insert(v.end(), args);
    return v;
}

struct Tree {
    Scratch s;
    std::string dir = s / "t";
    explicit Tree(int files, std::size_t bytes = 100) {
        stdfs::create_directories(dir);
        for (int i = 0; i < files; ++i)
            write_file(dir + "/f" + std::to_string(i),
                       random_bytes(bytes, static_cast<unsigned>(i)));
    }
};

// Each subcommand's bad input or option, with stderr on /dev/full: its own
// status, which no lost message turns into an abort.
TEST(CliOutput, FailedDiagnosticsKeepTheStatusAndNeverAbort) {
    const std::vector<std::pair<std::vector<std::string>, int>> cases = {
        {cli({"probe", "--dir", "/nonexistent-uringkit"}), 4},
        {cli({"readfiles", "/nonexistent-uringkit"}), 4},
        {cli({"cp", "/nonexistent-uringkit", "/tmp/x"}), 1},  // 1 for every failure, as coreutils
        {cli({"bench", "--filename", "/nonexistent-uringkit"}), 4},
        {cli({"bench", "--engines", "bogus"}), 2},
        {cli({"bench", "net", "--engines", "bogus"}), 2},
        {cli({"load", "--timeout", "200ms", "http://127.0.0.1:1/"}), 4},
        {cli({"serve", "--idle-timeout", "bogus"}), 2},
        {cli({"no-such-subcommand"}), 2},
    };
    for (const auto& [args, status] : cases) {
        const Child r = run(args, {}, full(2));
        EXPECT_EQ(r.status, status) << args[1] << " " << args[2];
        EXPECT_EQ(r.signal, 0) << args[1] << ": ended by a signal";
    }
}

// A run that succeeds but cannot say what it was asked to say on stderr
// (--summary) did its work, and says so with status 1, as coreutils does.
TEST(CliOutput, LostSummaryTurnsSuccessIntoOne) {
    Tree t(3);
    const Child ref = run(cli({"readfiles", t.dir}));
    ASSERT_EQ(ref.status, 0) << ref.err;
    const Child r = run(cli({"readfiles", "--summary", t.dir}), {}, full(2));
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, ref.out) << "the output itself is whole";

    const Child c = run(cli({"cp", "--summary", t.dir + "/f0", t.s / "copy"}), {}, full(2));
    EXPECT_EQ(c.status, 1);
    EXPECT_EQ(read_file(t.s / "copy"), read_file(t.dir + "/f0"));

    // bench with --json - prints its table on stderr: the JSON is whole, and
    // the temporary file is gone.
    Scratch tmp;
    const Child b = run(cli({"bench", "--size", "1m", "--ios", "200", "--ramp", "0", "--rounds",
                             "1", "--engines", "pread", "--json", "-"}),
                        {}, [&] {
                            ::setenv("TMPDIR", tmp.dir.c_str(), 1);
                            full(2)();
                        });
    EXPECT_EQ(b.status, 1);
    EXPECT_NE(b.out.find("\"tool\": \"uringkit bench\""), std::string::npos) << b.out;
    EXPECT_EQ(b.out.back(), '\n');
    EXPECT_TRUE(stdfs::is_empty(tmp.dir));
}

// Standard output on /dev/full: one line naming it, status 1.
TEST(CliOutput, FullStandardOutputIsOneLineAndStatusOne) {
    Tree t(3);
    Scratch tmp;
    const std::vector<std::vector<std::string>> cases = {
        cli({"--help"}),
        cli({"probe", "--dir", tmp.dir.string()}),
        cli({"probe", "--json", "--dir", tmp.dir.string()}),
        cli({"readfiles", t.dir}),
        cli({"readfiles", "--hash", "none", t.dir}),
        cli({"bench", "--size", "1m", "--ios", "200", "--ramp", "0", "--rounds", "1", "--engines",
             "pread"}),
        cli({"bench", "--size", "1m", "--ios", "200", "--ramp", "0", "--rounds", "1", "--engines",
             "pread", "--json", "-"}),
        cli({"cp", "--help"}),
        cli({"load", "--help"}),
        cli({"serve", "--help"}),
        // Stops at once: nobody could learn its port (killed if it does not).
        {"timeout", "-s", "KILL", "30", URINGKIT_CLI, "serve", "--port", "0"},
    };
    for (const auto& args : cases) {
        const Child r = run(args, {}, [&] {
            ::setenv("TMPDIR", tmp.dir.c_str(), 1);
            full(1)();
        });
        const std::string name = args.size() > 1 ? args[args[0] == "timeout" ? 5 : 1] : "";
        EXPECT_EQ(r.status, 1) << name << ": " << r.err;
        EXPECT_NE(r.err.find(kFullLine), std::string::npos) << name << ": " << r.err;
        EXPECT_EQ(count(r.err, "write error"), 1u) << name << ": " << r.err;
    }
    EXPECT_TRUE(stdfs::is_empty(tmp.dir))
        << "bench removed its temporary file, probe its trial files";
}

// `readfiles tree | head -1`: the reader goes away.  Under SIGPIPE's default
// action the next write ends readfiles quietly; with SIGPIPE ignored the
// write fails with EPIPE and readfiles stops reading, also without a word.
TEST(CliOutput, ReaderGoneEndsReadfilesQuietly) {
    Tree t(3000);  // ~240 KiB of lines: several buffers' worth
    const auto closed_pipe = [](bool ignore) {
        return [ignore] {
            int p[2];
            if (::pipe(p) != 0 || ::dup2(p[1], 1) < 0) ::_exit(99);
            ::close(p[0]);
            ::close(p[1]);
            ::signal(SIGPIPE, ignore ? SIG_IGN : SIG_DFL);
        };
    };
    const Child dfl = run(cli({"readfiles", t.dir}), {}, closed_pipe(false));
    EXPECT_EQ(dfl.signal, SIGPIPE);
    EXPECT_EQ(dfl.err, "");
    const Child ign = run(cli({"readfiles", t.dir}), {}, closed_pipe(true));
    EXPECT_EQ(ign.status, 1);
    EXPECT_EQ(ign.err, "");
    // It stopped at the first refused write instead of reading every file.
    const Child summary =
        run(cli({"readfiles", "--summary", "--threads", "1", t.dir}), {}, closed_pipe(true));
    EXPECT_EQ(summary.status, 1);
    EXPECT_EQ(count(summary.err, "\n"), 1u) << summary.err;
    EXPECT_EQ(summary.err.find("3000 files"), std::string::npos) << summary.err;
}

// `cp -r tree mnt/bt 2>>mnt/cp.log` where mnt is a full tmpfs: the copy's
// "No space left" lines cannot be written either.  cp ends with status 5,
// as it does with a working stderr, and every file under its final name is
// whole: the files that did not fit are gone, temporaries included.  (The
// ring's chains create the files of a new directory under their final
// names; an abort left them there, empty.)
TEST(CliOutput, FullDiskUnderStderrLeavesOnlyWholeFiles) {
    Tree t(100, 4096);
    for (const char* copy_threads : {"0", "4"}) {
        LoopFs small("tmpfs", 1);
        if (!small.ok()) GTEST_SKIP() << small.why;
        const std::string dst = small / "bt", log = small / "cp.log";
        write_file(log, "");
        {
            std::ofstream filler(small / "filler", std::ios::binary);
            const std::string block(1 << 16, 'x');
            while (filler.write(block.data(), static_cast<std::streamsize>(block.size()))) {
            }
        }
        const Child r = run(cli({"cp", "-r", "--copy-threads", copy_threads, t.dir, dst}), {}, [&] {
            const int f = ::open(log.c_str(), O_WRONLY | O_APPEND);
            if (f < 0 || ::dup2(f, 2) < 0) ::_exit(99);
            ::close(f);
        });
        EXPECT_EQ(r.status, 1) << "--copy-threads " << copy_threads;
        EXPECT_EQ(r.signal, 0) << "--copy-threads " << copy_threads;
        for (const auto& e : stdfs::recursive_directory_iterator(small.mnt)) {
            const std::string name = e.path().filename().string();
            if (name == "filler" || name == "cp.log" || e.is_directory()) continue;
            ASSERT_EQ(name.find(".uringkit-"), std::string::npos)
                << "a temporary was left: " << name;
            ASSERT_EQ(read_file(e.path().string()), read_file(t.dir + "/" + name))
                << name << " is not whole";
        }
    }
}

}  // namespace
