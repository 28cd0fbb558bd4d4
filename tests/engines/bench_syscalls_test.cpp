// The system calls each engine says it made are the ones the kernel saw:
// `strace -c -f` counts them from outside, for every engine, and the figures
// in the JSON must agree: exactly for pread and uring, and within 2% for
// each engine's total over a long run (strace also sees the few calls of
// the process around the timed loop: thread start and join, the runner's
// meeting points and its progress sampler).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// strace -c's summary: "% time seconds usecs/call calls [errors] syscall".
std::map<std::string, long> parse_strace_summary(const std::string& path) {
    std::map<std::string, long> calls;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::vector<std::string> t;
        for (std::string w; f >> w;) t.push_back(w);
        if (t.size() < 5 || t[0] == "%" || t[0].rfind("---", 0) == 0 || t.back() == "total")
            continue;
        try {
            calls[t.back()] = std::stol(t[3]);
        } catch (...) {
        }
    }
    return calls;
}

struct Traced {
    std::map<std::string, long> calls;
    nlohmann::json row;
};

// Runs one engine under strace; skips the test where strace cannot trace.
Traced traced_run(const std::string& engine, const std::string& depth, const fs::path& dir,
                  const std::string& ios = "3000") {
    const std::string trace = (dir / "trace.txt").string(), json = (dir / "out.json").string();
    // --cache cold: no warm-up reads, so every pread64 in the trace is the engine's.
    // LeakSanitizer cannot run under ptrace, so it is off for the traced run.
    const std::string cmd = "TMPDIR=" + dir.string() +
                            " ASAN_OPTIONS=detect_leaks=0 strace -c -f -o " + trace + " " +
                            URINGKIT_CLI + " bench --size 4m --ios " + ios +
                            " --ramp 0 --rounds 1 --cache cold --engines " + engine +
                            " --iodepth " + depth + " --json " + json + " > /dev/null 2>&1";
    const int st = std::system(cmd.c_str());
    Traced t;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return t;
    t.calls = parse_strace_summary(trace);
    t.row = nlohmann::json::parse(std::ifstream(json))["rows"][0];
    return t;
}

class BenchSyscalls : public ::testing::Test {
protected:
    void SetUp() override {
        if (std::system("strace -o /dev/null true > /dev/null 2>&1") != 0)
            GTEST_SKIP() << "strace is missing or cannot trace here (ptrace not permitted)";
        char tmpl[] = "/tmp/uringkit-bench-strace-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override {
        if (!dir_.empty()) fs::remove_all(dir_);
    }
    fs::path dir_;
};

TEST_F(BenchSyscalls, PreadCountMatchesStrace) {
    const Traced t = traced_run("pread", "1", dir_);
    ASSERT_FALSE(t.row.is_null()) << "the traced run failed";
    ASSERT_EQ(t.row["status"], "ok") << t.row.dump();
    EXPECT_EQ(t.row["syscalls"], 3000) << "one pread per I/O";
    EXPECT_DOUBLE_EQ(t.row["syscalls_per_io"].get<double>(), 1.0);
    // The dynamic loader may pread an ELF header or two; nothing else does.
    const long seen = t.calls.count("pread64") ? t.calls.at("pread64") : 0;
    EXPECT_GE(seen, 3000);
    EXPECT_LE(seen, 3000 + 8) << "strace saw more preads than the engine counted";
}

TEST_F(BenchSyscalls, UringEnterCountMatchesStrace) {
    const Traced t = traced_run("uring", "32", dir_);
    ASSERT_FALSE(t.row.is_null()) << "the traced run failed";
    if (t.row["status"] != "ok") GTEST_SKIP() << "uring unavailable: " << t.row["reason"];
    const long seen = t.calls.count("io_uring_enter") ? t.calls.at("io_uring_enter") : 0;
    EXPECT_EQ(t.row["syscalls"].get<long>(), seen)
        << "every io_uring_enter is counted, and only those";
    // Batch 32: one enter per 32 I/Os (3000 = 93 full batches + a partial one).
    EXPECT_LE(seen, 3000 / 32 + 2);
    EXPECT_LE(t.row["syscalls_per_io"].get<double>(), 0.04);
    EXPECT_GE(t.row["ios_per_submit"].get<double>(), 31.0);
}

struct EngineCase {
    const char* engine;
    const char* depth;
    std::vector<std::string> calls;  // the system calls its timed loop makes
};
void PrintTo(const EngineCase& c, std::ostream* os) {
    *os << c.engine << " at depth " << c.depth;
}

class BenchSyscallsEvery : public BenchSyscalls,
                           public ::testing::WithParamInterface<EngineCase> {};

TEST_P(BenchSyscallsEvery, TotalMatchesStraceWithinTwoPercent) {
    const EngineCase& c = GetParam();
    const Traced t = traced_run(c.engine, c.depth, dir_, "20000");
    ASSERT_FALSE(t.row.is_null()) << "the traced run failed";
    if (t.row["status"] != "ok") GTEST_SKIP() << c.engine << " unavailable: " << t.row["reason"];
    ASSERT_EQ(t.row["ios"], 20000);
    long seen = 0;
    std::string detail;
    for (const std::string& name : c.calls) {
        const long n = t.calls.count(name) ? t.calls.at(name) : 0;
        seen += n;
        detail += " " + name + "=" + std::to_string(n);
    }
    const long counted = t.row["syscalls"].get<long>();
    ASSERT_GT(seen, 0) << "strace saw none of" << detail;
    EXPECT_LE(std::labs(counted - seen), seen / 50)
        << c.engine << " counted " << counted << ", strace saw" << detail;
}

INSTANTIATE_TEST_SUITE_P(
    AllEngines, BenchSyscallsEvery,
    ::testing::Values(EngineCase{"pread", "1", {"pread64"}},
                      EngineCase{"threadpool", "1", {"pread64", "futex", "sched_yield"}},
                      EngineCase{"threadpool", "32", {"pread64", "futex", "sched_yield"}},
                      EngineCase{"libaio", "32", {"io_submit", "io_getevents"}},
                      EngineCase{"uring", "32", {"io_uring_enter"}},
                      EngineCase{"uring-reg", "32", {"io_uring_enter"}},
                      EngineCase{"uring-sqpoll", "32", {"io_uring_enter"}},
                      EngineCase{"liburing", "32", {"io_uring_enter"}},
                      EngineCase{"auto", "1", {"pread64"}},
                      EngineCase{"auto", "32", {"io_uring_enter"}}),
    [](const ::testing::TestParamInfo<EngineCase>& i) {
        std::string n = std::string(i.param.engine) + "_depth" + i.param.depth;
        for (char& ch : n)
            if (ch == '-') ch = '_';
        return n;
    });

}  // namespace
