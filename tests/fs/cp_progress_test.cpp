// cp's live line: with stderr a pipe, --progress prints a plain line once a
// second and a last line with the total in bytes; on a terminal (script(1)
// gives one) the line is redrawn in place and cleared before anything else,
// appears by default only once the copy has run a second, and
// --no-progress keeps it away.  Copies are made slow from outside, with a
// FIFO fed a little at a time or with strace delaying copy_file_range, so
// the copier runs as it always does.
#include "files_test_support.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <regex>
#include <thread>

namespace {

using namespace files_test;

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

// Feeds `fifo` `pieces` x 1 MiB, one every `gap`, from a thread; returns the bytes.
std::thread feed_slowly(const std::string& fifo, int pieces, std::chrono::milliseconds gap,
                        std::string& sent) {
    sent = random_bytes(static_cast<std::size_t>(pieces) << 20, 9);
    return std::thread([fifo, pieces, gap, &sent] {
        const int fd = ::open(fifo.c_str(), O_WRONLY);  // waits for cp to open it
        if (fd < 0) return;
        for (int i = 0; i < pieces; ++i) {
            std::this_thread::sleep_for(gap);
            const char* p = sent.data() + (static_cast<std::size_t>(i) << 20);
            for (std::size_t left = 1 << 20; left > 0;) {
                const ssize_t n = ::write(fd, p, left);
                if (n <= 0) break;
                p += n;
                left -= static_cast<std::size_t>(n);
            }
        }
        ::close(fd);
    });
}

TEST(CpProgress, PlainLinesWhenStderrIsAPipe) {
    Scratch s;
    ASSERT_EQ(::mkfifo((s / "fifo").c_str(), 0600), 0);
    std::string sent;
    std::thread feeder =
        feed_slowly(s / "fifo", 8, std::chrono::milliseconds(300), sent);  // ~2.4 s
    const Child r = run({URINGKIT_CLI, "cp", "--progress", s / "fifo", s / "dst"});
    feeder.join();
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(s / "dst"), sent);
    EXPECT_EQ(r.err.find('\r'), std::string::npos) << "no redraws on a pipe:\n" << r.err;
    const std::vector<std::string> lines = lines_of(r.err);
    ASSERT_GE(lines.size(), 3u) << "a line a second for ~2.4 s, then the last one:\n" << r.err;
    // A FIFO has no size to go by: bytes so far and the rate, no total or ETA.
    const std::regex live(R"(cp: \d+\.\d MiB, \d+\.\d MiB/s)");
    for (std::size_t i = 0; i + 1 < lines.size(); ++i)
        EXPECT_TRUE(std::regex_match(lines[i], live)) << lines[i];
    EXPECT_EQ(lines.back().rfind("cp: finished: 8.0 MiB (8388608 bytes) in ", 0), 0u)
        << lines.back();
}

// A regular file, slowed by strace: each copy_file_range call (2 MiB) held
// 250 ms, so the lines show the total and an ETA.
TEST(CpProgress, SizedLinesShowTotalAndEta) {
    if (std::system("strace -qq -o /dev/null true > /dev/null 2>&1") != 0)
        GTEST_SKIP() << "strace is not installed or cannot trace here";
    Scratch s;
    write_file(s / "src", random_bytes(16 << 20, 10));
    // LeakSanitizer cannot run under ptrace: an ASan build of the CLI would
    // end with its fatal error instead of the copy's status.
    const char* asan = std::getenv("ASAN_OPTIONS");
    const std::string asan_options = std::string("ASAN_OPTIONS=") +
                                     (asan && *asan ? std::string(asan) + ":" : "") +
                                     "detect_leaks=0";
    const Child r = run({"env", asan_options, "strace", "-f", "-qq", "-o", "/dev/null", "-e",
                         "trace=copy_file_range", "-e", "inject=copy_file_range:delay_exit=250000",
                         URINGKIT_CLI, "cp", "--engine", "kernel", "--reflink=never", "--progress",
                         s / "src", s / "dst"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(s / "dst"), read_file(s / "src"));
    const std::vector<std::string> lines = lines_of(r.err);
    ASSERT_GE(lines.size(), 2u) << r.err;
    const std::regex live(R"(cp: \d+\.\d/16\.0 MiB, \d+\.\d MiB/s(, ETA \d+ s)?)");
    bool eta = false;
    for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
        EXPECT_TRUE(std::regex_match(lines[i], live)) << lines[i];
        eta = eta || lines[i].find(", ETA ") != std::string::npos;
    }
    EXPECT_TRUE(eta) << "a line part-way says how long is left:\n" << r.err;
    EXPECT_EQ(lines.back().rfind("cp: finished: 16.0/16.0 MiB (16777216 bytes) in ", 0), 0u)
        << lines.back();
}

TEST(CpProgress, TreeLinesCountFiles) {
    Scratch s;
    stdfs::create_directories(s.dir / "t/sub");
    for (int i = 0; i < 5; ++i)
        write_file(s / ("t/sub/f" + std::to_string(i)), random_bytes(1000, 30 + i));
    const Child r = run({URINGKIT_CLI, "cp", "-r", "--progress", s / "t", s / "copy"});
    ASSERT_EQ(r.status, 0) << r.err;
    const std::vector<std::string> lines = lines_of(r.err);
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(lines.back().rfind("cp: finished: 5/5 files, 0.0/0.0 MiB (5000 bytes) in ", 0), 0u)
        << r.err;
}

TEST(CpProgress, ProgressAndNoProgressTogetherAreAUsageError) {
    Scratch s;
    write_file(s / "src", "x");
    const Child r = run({URINGKIT_CLI, "cp", "--progress", "--no-progress", s / "src", s / "dst"});
    EXPECT_EQ(r.status, 1) << r.err;  // cp's usage status, as coreutils
    EXPECT_FALSE(stdfs::exists(s / "dst"));
}

// Under script(1) stderr is a terminal; everything written comes back on the pipe.
std::string on_terminal(const std::string& command, int& status) {
    const std::string cmd = "script -qec '" + command + "' /dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return {};
    std::string all;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) all.append(buf, n);
    status = ::pclose(p);
    return all;
}

TEST(CpProgressTerminal, RedrawnInPlaceAndClearedBeforeTheSummary) {
    if (std::system("command -v script > /dev/null 2>&1") != 0)
        GTEST_SKIP() << "script(1) is not installed";
    Scratch s;
    // Under a second (3 x 0.3 s), where the default line would not appear.
    ASSERT_EQ(::mkfifo((s / "fifo").c_str(), 0600), 0);
    std::string sent;
    std::thread feeder = feed_slowly(s / "fifo", 3, std::chrono::milliseconds(300), sent);
    int status = -1;
    const std::string forced = on_terminal(
        std::string(URINGKIT_CLI) + " cp --progress --summary " + (s / "fifo") + " " + (s / "dst"),
        status);
    feeder.join();
    ASSERT_EQ(status, 0) << forced;
    EXPECT_EQ(read_file(s / "dst"), sent);
    EXPECT_NE(forced.find("\r\033[Kcp: "), std::string::npos)
        << "--progress draws from the start:\n"
        << forced;
    // Cleared before the summary, which starts on a clean line.
    EXPECT_NE(forced.find("\r\033[Kcp: 1 files, "), std::string::npos) << forced;
    EXPECT_EQ(forced.find("finished"), std::string::npos) << "no plain last line on a terminal:\n"
                                                          << forced;

    // A copy under a second draws nothing by default.
    write_file(s / "src", random_bytes(4 << 20, 11));
    const std::string quick =
        on_terminal(std::string(URINGKIT_CLI) + " cp " + (s / "src") + " " + (s / "dst2"), status);
    ASSERT_EQ(status, 0) << quick;
    EXPECT_EQ(quick.find("\033[K"), std::string::npos) << quick;
}

TEST(CpProgressTerminal, AppearsAfterASecondByDefaultAndNotWithNoProgress) {
    if (std::system("command -v script > /dev/null 2>&1") != 0)
        GTEST_SKIP() << "script(1) is not installed";
    Scratch s;
    ASSERT_EQ(::mkfifo((s / "fifo").c_str(), 0600), 0);
    for (const bool off : {false, true}) {
        SCOPED_TRACE(off ? "--no-progress" : "by default");
        std::string sent;
        std::thread feeder =
            feed_slowly(s / "fifo", 6, std::chrono::milliseconds(300), sent);  // ~1.8 s
        int status = -1;
        const std::string out =
            on_terminal(std::string(URINGKIT_CLI) + " cp " + (off ? "--no-progress " : "") +
                            (s / "fifo") + " " + (s / "dst"),
                        status);
        feeder.join();
        ASSERT_EQ(status, 0) << out;
        EXPECT_EQ(read_file(s / "dst"), sent);
        if (off) {
            EXPECT_EQ(out.find("\033[K"), std::string::npos) << out;
        } else {
            EXPECT_NE(out.find("\r\033[Kcp: "), std::string::npos) << out;
            EXPECT_EQ(out.size() >= 4 ? out.substr(out.size() - 4) : out, "\r\033[K")
                << "cleared at the end";
        }
    }
}

}  // namespace
