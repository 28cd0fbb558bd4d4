// `uringkit bench --replay` as a user runs it: a real program (xxhsum over a
// tree) recorded with the strace command the help gives and replayed end to
// end with JSON; bad input gets one line and its exit status; a write the
// user did not allow is refused with nothing touched, also for an
// unprivileged user; SIGINT ends a long timed replay with 130 and removes
// the scratch copies.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "diagnostics.hpp"
#include "files_test_support.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

using files_test::Child;

class ReplayCli : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/uringkit-replay-cli-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { fs::remove_all(dir_); }

    // Runs `args` (argv[0] found on PATH or a path); `in_child` after fork,
    // `on_start` with the pid.
    static Child run(std::vector<std::string> args, const std::function<void()>& in_child = {},
                     const std::function<void(pid_t)>& on_start = {}) {
        return files_test::run(std::move(args), {}, in_child, on_start);
    }
    static Child bench(std::vector<std::string> args, const std::function<void()>& in_child = {},
                       const std::function<void(pid_t)>& on_start = {}) {
        args.insert(args.begin(), {URINGKIT_CLI, "bench"});
        return run(std::move(args), in_child, on_start);
    }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    std::string write_text(const std::string& name, const std::string& text) const {
        std::ofstream(path(name)) << text;
        return path(name);
    }
    std::string make_file(const std::string& name, std::size_t bytes) const {
        std::ofstream f(path(name), std::ios::binary);
        f << std::string(bytes, 'q');
        return path(name);
    }
    static std::string read_all(const std::string& p) {
        std::ifstream in(p, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }
    // A one-thread trace reading `file`: `reads` preads of 4 KiB, 1 ms apart.
    std::string read_trace(const std::string& file, int reads, double step_s = 0.001) const {
        std::string t = fmt::format(
            "1700000000.000000 openat(AT_FDCWD, \"{}\", O_RDONLY) = 3 <0.000010>\n", file);
        for (int i = 0; i < reads; ++i)
            t += fmt::format("{:.6f} pread64(3, \"\"..., 4096, {}) = 4096 <0.000005>\n",
                             1700000000.001 + i * step_s, (i % 16) * 4096);
        return write_text("reads.strace", t);
    }
    fs::path dir_;
};

}  // namespace

// The strace command of the help, on a real program, replayed end to end.
TEST_F(ReplayCli, AnXxhsumRunRecordedWithStraceReplaysThroughEveryEngine) {
    if (run({"xxhsum", "--version"}).status == 127)
        GTEST_SKIP() << "xxhsum is not installed (Debian: xxhash)";
    fs::create_directory(dir_ / "tree");
    for (int i = 0; i < 24; ++i) {
        std::ofstream f(dir_ / "tree" / fmt::format("f{}", i), std::ios::binary);
        f << std::string(static_cast<std::size_t>(i) * 37000 + 1, static_cast<char>('a' + i));
    }
    const std::string trace = path("xxhsum.strace");
    std::vector<std::string> cmd = {
        "strace",
        "-f",
        "-ttt",
        "-T",
        "-y",
        "--seccomp-bpf",
        "-o",
        trace,
        "-e",
        "trace=openat,open,creat,close,close_range,dup,dup2,dup3,fcntl,clone,clone3,"
        "fork,vfork,read,write,pread64,pwrite64,readv,writev,preadv,pwritev,preadv2,"
        "pwritev2,lseek,fsync,fdatasync,sync_file_range,fallocate,ftruncate",
        "xxhsum",
        "-H2"};
    for (int i = 0; i < 24; ++i) cmd.push_back((dir_ / "tree" / fmt::format("f{}", i)).string());
    const Child traced = run(cmd);
    if (traced.status == 127) GTEST_SKIP() << "strace is not installed (Debian: strace)";
    if (traced.err.find("ptrace") != std::string::npos ||
        traced.err.find("not permitted") != std::string::npos)
        GTEST_SKIP() << "strace cannot trace here: " << traced.err;
    ASSERT_EQ(traced.status, 0) << traced.err;
    const std::string json = path("out.json");
    const Child r = bench({"--replay", trace, "--engines", "pread,uring,uring-sqpoll", "--iodepth",
                           "1,16", "--rounds", "3", "--loops", "4", "--json", json});
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("As your program issues it (one at a time per thread)"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("With up to 16 in flight per thread"), std::string::npos) << r.out;
    const auto j = nlohmann::json::parse(read_all(json));
    EXPECT_EQ(j["tool"], "uringkit bench --replay");
    EXPECT_GE(j["trace"]["reads"].get<int>(), 24);
    EXPECT_GE(j["trace"]["files"].get<int>(), 24) << "the tree, and xxhsum's own libraries";
    EXPECT_EQ(j["trace"]["writes"], 0);
    // 3 rounds x (as-recorded + batched at 1 and 16) x 3 engines, unless uring-sqpoll is
    // unavailable.
    const std::size_t unavailable = j["unavailable"].size();
    EXPECT_EQ(j["runs"].size(), 3u * 3 * (3 - unavailable));
    std::uint64_t bytes = 0;
    for (const auto& run : j["runs"]) {
        EXPECT_FALSE(run.contains("error")) << run.dump();
        EXPECT_GT(run["ios"].get<std::uint64_t>(), 0u);
        if (bytes == 0) bytes = run["transferred_bytes"];
        EXPECT_EQ(run["transferred_bytes"], bytes)
            << "every engine moves the same bytes: " << run.dump();
    }
    // 4 passes over the 24 files' bytes at least.
    std::uint64_t tree = 0;
    for (int i = 0; i < 24; ++i) tree += static_cast<std::uint64_t>(i) * 37000 + 1;
    EXPECT_GE(bytes, 4 * tree);
    EXPECT_FALSE(j["comparisons"].empty());
}

TEST_F(ReplayCli, BadInputGetsOneLineAndItsStatus) {
    const std::string data = make_file("data.bin", 65536);
    const std::string good = read_trace(data, 10);
    struct Case {
        std::vector<std::string> args;
        int status;
        std::string says;
    };
    const std::string bad =
        write_text("bad.strace", fmt::format("openat(AT_FDCWD, \"{}\", O_RDONLY) = 3\n"
                                             "pread64(3, \"\"..., 10, 0) = 10\n"
                                             "pread64(3, this is not strace\n",
                                             data));
    const std::vector<Case> cases = {
        {{"--replay", path("missing.strace")}, 4, "missing.strace"},
        {{"--replay", bad}, 4, "line 3"},
        {{"--replay", good, "--filename", data}, 2, "--filename does not apply to --replay"},
        {{"--replay", good, "--engines", "uring-fast"}, 2, "'uring-fast' does not replay traces"},
        {{"--replay", good, "--engines", ""}, 2, "--engines '': an empty item"},
        {{"--replay", good, "--mode", "fast"}, 2, "--mode fast"},
        {{"--replay", good, "--iodepth", "0"}, 2, "--iodepth 0"},
        {{"--replay", good, "--loops", "0"}, 2, "--loops 0"},
        {{"--replay", good, "--scratch", path("nowhere")}, 4, "--scratch"},
        // strace's \0: the kernel would read the path up to it, another file.
        {{"--replay",
          write_text("nul.strace", fmt::format("openat(AT_FDCWD, \"{}\\0.old\", O_RDONLY) = 3\n"
                                               "pread64(3, \"\"..., 10, 0) = 10\n",
                                               data))},
         4,
         "line 1: a path with a NUL byte"},
        {{"--replay",
          write_text("untimed.strace", fmt::format("openat(AT_FDCWD, \"{}\", O_RDONLY) = 3\n"
                                                   "pread64(3, \"\"..., 10, 0) = 10\n",
                                                   data)),
          "--mode", "timed"},
         2,
         "no time"},
    };
    for (const Case& c : cases) {
        const Child r = bench(c.args);
        EXPECT_EQ(r.status, c.status) << c.args[1] << " " << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
        EXPECT_EQ(diagnostic_lines(r.err), 1u) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
    // --lenient counts the bad line and replays the rest.
    const Child lenient =
        bench({"--replay", bad, "--lenient", "--rounds", "1", "--engines", "pread"});
    EXPECT_EQ(lenient.status, 0) << lenient.err;
    EXPECT_NE(lenient.out.find("could not be parsed"), std::string::npos) << lenient.out;
}

// A trace that names a FIFO is refused as --filename refuses one (status 4),
// before anything is opened: opening a FIFO waits for a writer that never
// comes.  It blocked in openat, also with --scratch; a regression is killed
// by the timeout and fails.  A file named through a symlink is still read.
TEST_F(ReplayCli, AFifoInATraceIsRefusedWithoutBlocking) {
    ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0644), 0);
    const std::string trace = read_trace(path("fifo"), 4);
    fs::create_directory(dir_ / "scratch");
    for (const bool scratch : {false, true}) {
        std::vector<std::string> args = {"timeout", "-s",       "KILL", "30",       URINGKIT_CLI,
                                         "bench",   "--replay", trace,  "--rounds", "1"};
        if (scratch) args.insert(args.end(), {"--scratch", path("scratch")});
        const Child r = run(args);
        EXPECT_EQ(r.status, 4) << "--scratch " << scratch << ": " << r.err;
        EXPECT_NE(r.err.find(path("fifo") + ": a FIFO, not a regular file or block device"),
                  std::string::npos)
            << r.err;
        EXPECT_EQ(diagnostic_lines(r.err), 1u) << r.err;
    }
    EXPECT_TRUE(fs::is_empty(dir_ / "scratch"));
    fs::create_symlink(make_file("real.bin", 65536), path("link"));
    const Child linked =
        bench({"--replay", read_trace(path("link"), 4), "--rounds", "1", "--engines", "pread"});
    EXPECT_EQ(linked.status, 0) << linked.err;
}

TEST_F(ReplayCli, AWriteNotAllowedIsRefusedAndNothingIsTouched) {
    const std::string data = make_file("w.bin", 8192);
    const std::string trace = write_text(
        "w.strace",
        fmt::format(
            "openat(AT_FDCWD, \"{}\", O_WRONLY|O_TRUNC) = 3\npwrite64(3, \"ab\", 2, 0) = 2\n"
            "fsync(3) = 0\n",
            data));
    const Child r = bench({"--replay", trace, "--rounds", "1"});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find(data), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--allow-write"), std::string::npos) << r.err;
    EXPECT_EQ(read_all(data), std::string(8192, 'q'));
    // Into --scratch: the copies take the writes and go; the file stays.
    fs::create_directory(dir_ / "scratch");
    const Child s = bench({"--replay", trace, "--rounds", "1", "--scratch", path("scratch")});
    EXPECT_EQ(s.status, 0) << s.err;
    EXPECT_EQ(read_all(data), std::string(8192, 'q'));
    EXPECT_TRUE(fs::is_empty(dir_ / "scratch"));
    // An unprivileged user with --allow-write on a file it may not write:
    // refused naming the file (4), the file untouched.
    if (::geteuid() == 0) {
        ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
        ASSERT_EQ(::chmod(trace.c_str(), 0644), 0);
        const Child n = bench({"--replay", trace, "--rounds", "1", "--allow-write"}, [] {
            if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(126);
        });
        EXPECT_EQ(n.status, 4) << n.err;
        EXPECT_NE(n.err.find("Permission denied"), std::string::npos) << n.err;
        EXPECT_EQ(read_all(data), std::string(8192, 'q'));
    }
    // Allowed: the file itself is truncated and written.
    const Child w =
        bench({"--replay", trace, "--rounds", "1", "--allow-write", "--engines", "uring"});
    EXPECT_EQ(w.status, 0) << w.err;
    EXPECT_EQ(read_all(data).size(), 2u);
}

TEST_F(ReplayCli, SigintEndsALongTimedReplayWith130AndRemovesTheCopies) {
    const std::string data = make_file("slow.bin", 65536);
    const std::string trace = read_trace(data, 40, 0.5);  // 20 s at the recorded pace
    fs::create_directory(dir_ / "scratch");
    const auto t0 = std::chrono::steady_clock::now();
    const Child r =
        bench({"--replay", trace, "--mode", "timed", "--rounds", "1", "--scratch", path("scratch")},
              {}, [](pid_t pid) {
                  std::this_thread::sleep_for(std::chrono::milliseconds(800));
                  ::kill(pid, SIGINT);
              });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.status, 130) << r.err;
    EXPECT_LT(s, 5.0) << "the replay stopped soon after SIGINT";
    EXPECT_NE(r.out.find("interrupted"), std::string::npos) << r.out;
    EXPECT_TRUE(fs::is_empty(dir_ / "scratch"));
}
