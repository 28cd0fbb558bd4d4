// `uringkit bench` prints a table that fits the terminal it prints on: the
// terminal's width (TIOCGWINSZ) or $COLUMNS where the terminal reports none,
// every column with --wide, and on a pipe every column whatever the
// environment says.  The terminal is a pseudo-terminal from script(1),
// sized with stty.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// A quick run: a 4 MiB temporary file, 2000 reads per run, one round.
const std::string kQuick =
    "bench --size 4m --ios 2000 --ramp 0 --rounds 1 --engines pread,uring --iodepth 1,8";

struct BenchWidth : ::testing::Test {
    fs::path dir;
    void SetUp() override {
        char tmpl[] = "/tmp/uringkit-bench-width-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir = tmpl;
    }
    void TearDown() override { fs::remove_all(dir); }

    // Runs `sh -c command` and returns its standard output, carriage returns
    // (a terminal's line ends) dropped.
    std::string shell(const std::string& command) {
        const std::string full = "TMPDIR=" + dir.string() + " " + command;
        std::FILE* p = ::popen(full.c_str(), "r");
        if (!p) return {};
        std::string out;
        char buf[4096];
        for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
        const int status = ::pclose(p);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << full << "\n" << out;
        std::string clean;
        for (char c : out)
            if (c != '\r') clean += c;
        return clean;
    }
    // bench on a pseudo-terminal `cols` wide (0: one that reports no width),
    // with `env` before the command.
    std::string on_terminal(unsigned cols, const std::string& args, const std::string& env = "") {
        return shell("script -qec 'stty cols " + std::to_string(cols) + " rows 50; " + env + " " +
                     URINGKIT_CLI + " " + kQuick + " " + args + " 2>/dev/null' /dev/null");
    }
};

// The table: from its header line to the blank line after it.
std::vector<std::string> table_of(const std::string& out) {
    std::vector<std::string> lines;
    std::istringstream in(out);
    bool inside = false;
    for (std::string l; std::getline(in, l);) {
        if (l.rfind("engine ", 0) == 0) inside = true;
        if (inside && l.empty()) break;
        if (inside) lines.push_back(l);
    }
    return lines;
}

std::size_t columns(const std::string& line) {
    std::size_t n = 0;
    for (char c : line) n += (c & 0xC0) != 0x80;
    return n;
}

bool has_script() {
    return std::system("command -v script >/dev/null 2>&1") == 0;
}

TEST_F(BenchWidth, ANarrowTerminalGetsATableThatFits) {
    if (!has_script()) GTEST_SKIP() << "script(1) (util-linux) is not installed";
    const std::string out = on_terminal(72, "");
    const std::vector<std::string> table = table_of(out);
    ASSERT_GE(table.size(), 6u) << out;
    for (const std::string& l : table) EXPECT_LE(columns(l), 72u) << l << "\n" << out;
    EXPECT_EQ(table[0].find("ctx/kIO"), std::string::npos) << out;
    EXPECT_NE(out.find("--wide shows every column"), std::string::npos) << out;
}

TEST_F(BenchWidth, ColumnsCountsWhereTheTerminalReportsNoWidth) {
    if (!has_script()) GTEST_SKIP() << "script(1) (util-linux) is not installed";
    const std::string out = on_terminal(0, "", "COLUMNS=64");
    const std::vector<std::string> table = table_of(out);
    ASSERT_GE(table.size(), 6u) << out;
    for (const std::string& l : table) EXPECT_LE(columns(l), 64u) << l << "\n" << out;
    EXPECT_NE(out.find("(left out to fit 64 columns"), std::string::npos) << out;
}

TEST_F(BenchWidth, WidePrintsEveryColumnOnANarrowTerminal) {
    if (!has_script()) GTEST_SKIP() << "script(1) (util-linux) is not installed";
    const std::string out = on_terminal(72, "--wide");
    const std::vector<std::string> table = table_of(out);
    ASSERT_GE(table.size(), 6u) << out;
    for (const char* head : {"ctx/kIO", "p99.9", "max", "MiB/s", "IO/sub"})
        EXPECT_NE(table[0].find(head), std::string::npos) << head << "\n" << out;
    EXPECT_EQ(out.find("--wide shows"), std::string::npos) << out;
}

TEST_F(BenchWidth, APipeGetsEveryColumnWhateverColumnsSays) {
    const std::string out = shell("COLUMNS=40 " + std::string(URINGKIT_CLI) + " " + kQuick);
    const std::vector<std::string> table = table_of(out);
    ASSERT_GE(table.size(), 6u) << out;
    for (const char* head : {"ctx/kIO", "p99.9", "max", "MiB/s", "IO/sub"})
        EXPECT_NE(table[0].find(head), std::string::npos) << head << "\n" << out;
    EXPECT_EQ(out.find("left out"), std::string::npos) << out;
}

TEST_F(BenchWidth, PreadAtDepth8SaysOneAtATime) {
    const std::string out = shell(std::string(URINGKIT_CLI) + " " + kQuick);
    const std::vector<std::string> table = table_of(out);
    std::vector<std::string> pread;
    for (const std::string& l : table)
        if (l.rfind("pread ", 0) == 0) pread.push_back(l.substr(0, 25));
    ASSERT_EQ(pread.size(), 2u) << out;
    EXPECT_EQ(pread[0], "pread             1     1") << out;
    EXPECT_EQ(pread[1], "pread         1 at a time") << out;
}

}  // namespace
