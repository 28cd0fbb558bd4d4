// `uringkit cp` interrupted by SIGINT or SIGTERM: nothing new is started,
// what is in flight completes, the files being created are removed, what
// was copied is reported, and the process ends by the signal (the parent's
// wait status says so; a shell shows 130 or 143).  The signal is sent to a
// real child process at a point the test knows the copy has reached: a FIFO
// source the test feeds, or (for the ring path) a copy slowed by strace's
// delay injection on io_uring_enter; the library's stop flag is set from
// the progress hook.
#include "files_test_support.hpp"

#include "fs/copy.hpp"

#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace {

using namespace files_test;
using namespace std::chrono_literals;

std::uintmax_t temporary_bytes(const stdfs::path& dir) {
    std::uintmax_t n = 0;
    for (const std::string& t : temporaries(dir)) {
        std::error_code ec;
        const auto size = stdfs::file_size(t, ec);
        if (!ec) n += size;
    }
    return n;
}

TEST(CpSignals, FifoSourceInterruptedEndsByTheSignalAndLeavesNoTemporary) {
    for (const int sig : {SIGINT, SIGTERM}) {
        Scratch s;
        ASSERT_EQ(::mkfifo((s / "fifo").c_str(), 0600), 0);
        Spawned cp = spawn({URINGKIT_CLI, "cp", s / "fifo", s / "out"});
        const int w = ::open((s / "fifo").c_str(), O_WRONLY);
        ASSERT_GE(w, 0);
        const std::string chunk = random_bytes(100000, 1);
        ASSERT_EQ(::write(w, chunk.data(), chunk.size()), static_cast<ssize_t>(chunk.size()));
        // cp has written all of it and waits in read() for more.
        ASSERT_TRUE(wait_until([&] { return temporary_bytes(s.dir) == chunk.size(); }))
            << "cp never wrote the chunk";
        ASSERT_EQ(::kill(cp.pid, sig), 0);
        int status = 0;
        ASSERT_EQ(::waitpid(cp.pid, &status, 0), cp.pid);
        ::close(w);
        const std::string err = drain_fd(cp.err);
        ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status) << ": " << err;
        EXPECT_EQ(WTERMSIG(status), sig);
        EXPECT_NE(err.find(sig == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM"),
                  std::string::npos)
            << err;
        EXPECT_TRUE(temporaries(s.dir).empty()) << temporaries(s.dir).front();
        EXPECT_FALSE(stdfs::exists(s.dir / "out"));
    }
}

// The ring path: a large file, each io_uring_enter delayed by strace so
// the copy is surely in progress when the signal comes.
TEST(CpSignals, LargeFileAndTreeOnTheRingInterrupted) {
    if (!have_program("strace")) GTEST_SKIP() << "needs strace to slow the copy down";
    no_leak_check_in_traced_children();
    Scratch s;
    write_file(s / "big", random_bytes(32 << 20, 2));
    stdfs::create_directories(s.dir / "tree" / "sub");
    for (int i = 0; i < 400; ++i)
        write_file(s / ("tree/sub/f" + std::to_string(i)),
                   random_bytes(5000 + static_cast<std::size_t>(i), static_cast<unsigned>(i)));
    struct Case {
        std::vector<std::string> args;
        int sig;
        std::function<bool()> started;
    };
    const std::vector<Case> cases = {
        {{URINGKIT_CLI, "cp", "--engine", "ring", "--bs", "64k", "--qd", "1", s / "big", s / "out"},
         SIGINT,
         [&] { return temporary_bytes(s.dir) > 0; }},
        {{URINGKIT_CLI, "cp", "-r", "--inflight", "2", s / "tree", s / "copy"},
         SIGTERM,
         [&] { return stdfs::exists(s.dir / "copy/sub/f3"); }},
    };
    for (const Case& c : cases) {
        std::vector<std::string> a{"strace",
                                   "-f",
                                   "-qq",
                                   "-o",
                                   "/dev/null",
                                   "-e",
                                   "trace=io_uring_enter",
                                   "-e",
                                   "inject=io_uring_enter:delay_enter=20000"};
        a.insert(a.end(), c.args.begin(), c.args.end());
        Spawned tracer = spawn(a);
        pid_t cp = -1;
        ASSERT_TRUE(wait_until([&] { return (cp = child_of(tracer.pid)) > 0 && c.started(); }))
            << "the copy never started";
        ASSERT_EQ(::kill(cp, c.sig), 0);
        int status = 0;
        ASSERT_EQ(::waitpid(tracer.pid, &status, 0), tracer.pid);
        const std::string err = drain_fd(tracer.err);
        // strace ends the way its tracee ended.
        ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status) << ": " << err;
        EXPECT_EQ(WTERMSIG(status), c.sig);
        EXPECT_NE(err.find("interrupted by"), std::string::npos) << err;
        EXPECT_TRUE(temporaries(s.dir).empty()) << temporaries(s.dir).front();
    }
    EXPECT_FALSE(stdfs::exists(s.dir / "out"))
        << "an interrupted new file must not be left half-written";
    // The tree stays as far as it got, and every file in it is whole.
    std::size_t copied = 0;
    for (const auto& e : stdfs::directory_iterator(s.dir / "copy/sub")) {
        EXPECT_EQ(read_file(e.path().string()),
                  read_file(s / ("tree/sub/" + e.path().filename().string())))
            << e.path();
        ++copied;
    }
    EXPECT_GT(copied, 0u);
    EXPECT_LT(copied, 400u) << "the copy ended before the signal: nothing was interrupted";
}

// An existing file is written in place: interrupted, its old content is
// gone and the new one incomplete, and the message says so, naming it.
TEST(CpSignals, InPlaceOverwriteInterruptedIsNamedAsIncomplete) {
    if (!have_program("strace")) GTEST_SKIP() << "needs strace to slow the copy down";
    no_leak_check_in_traced_children();
    Scratch s;
    write_file(s / "big", random_bytes(32 << 20, 3));
    write_file(s / "existing", "old");
    Spawned tracer =
        spawn({"strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=io_uring_enter", "-e",
               "inject=io_uring_enter:delay_enter=20000", URINGKIT_CLI, "cp", "--engine", "ring",
               "--bs", "64k", "--qd", "1", s / "big", s / "existing"});
    pid_t cp = -1;
    ASSERT_TRUE(wait_until([&] {
        std::error_code ec;
        return (cp = child_of(tracer.pid)) > 0 && stdfs::file_size(s.dir / "existing", ec) > 3 &&
               !ec;
    })) << "the copy never started";
    ASSERT_EQ(::kill(cp, SIGTERM), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(tracer.pid, &status, 0), tracer.pid);
    const std::string err = drain_fd(tracer.err);
    ASSERT_TRUE(WIFSIGNALED(status)) << err;
    EXPECT_NE(err.find("the new files being written were removed"), std::string::npos) << err;
    EXPECT_NE(err.find("'" + s / "existing" + "' was being written in place and is incomplete"),
              std::string::npos)
        << err;
}

// The library: the stop flag set after the first block of a large file,
// on the ring and on read/write.  The copy stops, nothing is left in the
// kernel, the new file is removed, the result says interrupted.
TEST(CpSignals, StopFlagEndsTheLibraryCopyCleanly) {
    for (const bool fallback : {false, true}) {
        for (const bool tree : {false, true}) {
            Scratch s;
            stdfs::create_directories(s.dir / "t");
            write_file(s / "t/big", random_bytes(8 << 20, 3));
            for (int i = 0; i < 20; ++i)
                write_file(s / ("t/zsmall" + std::to_string(i)), "small " + std::to_string(i));
            std::atomic<bool> stop{false};
            uringkit::fs::CopyOptions o;
            o.block_size = 256 * 1024;
            o.qd = 4;
            o.recursive = tree;
            o.force_fallback = fallback;
            o.stop = &stop;
            std::uint64_t progress_calls = 0;
            o.on_progress = [&](std::uint64_t) {
                ++progress_calls;
                stop = true;
            };
            const std::string src = tree ? s / "t" : s / "t/big";
            const auto r = uringkit::fs::copy(std::vector<std::string>{src}, s / "out", o);
            EXPECT_EQ(r.status, uringkit::fs::CopyStatus::interrupted) << r.message;
            // Small files of a tree go first on the ring, the large one last;
            // on read/write "big" comes first.  Nothing starts after the stop.
            EXPECT_EQ(r.files, tree && !fallback ? 20u : 0u);
            EXPECT_LE(progress_calls, 4u) << "blocks started after the stop";
            EXPECT_TRUE(temporaries(s.dir).empty()) << temporaries(s.dir).front();
            EXPECT_FALSE(stdfs::exists(s.dir / (tree ? "out/big" : "out")));
        }
    }
}

}  // namespace
