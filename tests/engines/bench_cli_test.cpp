// `uringkit bench` as a user runs it: bad input gets one line and its exit
// status and leaves nothing behind; io_uring forbidden by seccomp gives
// `unavailable` rows while the others run; Ctrl-C prints what was measured
// and removes the temporary file; the JSON has every field of the schema.
#include "tools/forbid_uring.hpp"
#include "tools/refuse_o_direct.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <dirent.h>
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Result {
    int status = -1;
    std::string out, err;
};

// A fresh TMPDIR per test, so "nothing left behind" can be checked exactly.
class BenchCli : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/uringkit-bench-cli-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        tmp_ = dir_ / "tmp";
        fs::create_directory(tmp_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    // Runs the CLI with `args`; `in_child` runs after fork, before exec (to
    // set a limit or a seccomp filter); `on_start` gets the child's pid and
    // its stdout fd while it runs.
    Result run(std::vector<std::string> args, const std::function<void()>& in_child = {},
               const std::function<void(pid_t, int)>& on_start = {}) {
        args.insert(args.begin(), {URINGKIT_CLI, "bench"});
        int out[2], err[2];
        EXPECT_EQ(::pipe(out), 0);
        EXPECT_EQ(::pipe(err), 0);
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::dup2(out[1], 1);
            ::dup2(err[1], 2);
            ::close(out[0]);
            ::close(err[0]);
            ::setenv("TMPDIR", tmp_.c_str(), 1);
            if (in_child) in_child();
            std::vector<char*> argv;
            for (std::string& a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
        ::close(out[1]);
        ::close(err[1]);
        Result r;
        if (on_start) on_start(pid, out[0]);
        drain(out[0], r.out, err[0], r.err);
        int st = 0;
        ::waitpid(pid, &st, 0);
        r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return r;
    }
    static void drain(int a, std::string& sa, int b, std::string& sb) {
        pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
        int open = 2;
        char buf[4096];
        while (open > 0 && ::poll(p, 2, -1) > 0) {
            for (int i = 0; i < 2; ++i) {
                if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP))) continue;
                const ssize_t n = ::read(p[i].fd, buf, sizeof buf);
                if (n <= 0) {
                    ::close(p[i].fd);
                    p[i].fd = -1;
                    --open;
                } else {
                    (i == 0 ? sa : sb).append(buf, static_cast<std::size_t>(n));
                }
            }
        }
    }
    bool tmp_empty() const { return fs::is_empty(tmp_); }
    std::string path(const char* name) const { return (dir_ / name).string(); }
    void make_file(const char* name, std::size_t bytes) const {
        std::ofstream f(path(name), std::ios::binary);
        std::string data(bytes, 'x');
        f << data;
    }
    // One line on stderr, naming the problem.
    static void one_line(const Result& r, const std::string& needle) {
        EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_EQ(r.out, "") << "nothing printed on stdout for bad input";
    }

    fs::path dir_, tmp_;
};

// Small and quick: a 4 MiB temporary file, a fixed number of I/Os, one round.
const std::vector<std::string> kQuick = {"--size", "4m", "--ios", "2000", "--ramp", "0",
                                         "--rounds", "1"};
// As kQuick, with the rounds left to the caller.
const std::vector<std::string> kQuickRounds = {"--size", "4m", "--ios", "2000", "--ramp", "0"};
// The same on a file of the test's own (--size beyond it is refused).
const std::vector<std::string> kQuickOnFile = {"--ios", "2000", "--ramp", "0", "--rounds", "1"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

TEST_F(BenchCli, JsonHasTheSchemaAndTheTemporaryFileIsGone) {
    const std::string json = path("out.json"), csv = path("out.csv"), svg = path("out.svg");
    const Result r = run(with(kQuickRounds,
                              {"--rounds", "3", "--engines", "pread,uring,auto", "--iodepth", "1,8",
                               "--verify", "--json", json, "--csv", csv, "--plot", svg}));
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    EXPECT_TRUE(tmp_empty()) << "the temporary file was left behind";
    EXPECT_EQ(r.err, "") << "no progress line when stderr is not a terminal";
    EXPECT_NE(r.out.find("at depth 8"), std::string::npos) << "a verdict per depth:\n" << r.out;
    const auto doc = nlohmann::json::parse(std::ifstream(json));
    for (const char* k :
         {"kernel", "cpu_model", "cores", "io_uring_disabled", "filesystem", "device"})
        EXPECT_TRUE(doc["host"].contains(k)) << k;
    EXPECT_EQ(doc["job"]["bs"], 4096);
    EXPECT_EQ(doc["job"]["rw"], "randread");
    ASSERT_EQ(doc["rows"].size(), 6u);
    for (const auto& row : doc["rows"]) {
        for (const char* k :
             {"engine", "iodepth", "status", "reason", "iops", "bw_bytes", "lat_ns", "cpu_usr",
              "cpu_sys", "cpu_us_per_io", "ctx_per_kio", "syscalls_per_io", "ios_per_submit"})
            EXPECT_TRUE(row.contains(k)) << k << " in " << row.dump();
        for (const char* k : {"mean", "p50", "p90", "p99", "p99_9", "max"})
            EXPECT_TRUE(row["lat_ns"].contains(k));
        EXPECT_EQ(row["status"], "ok") << row.dump();
        EXPECT_EQ(row["ios"], 2000) << "--ios is exact";
        EXPECT_EQ(row["runs"], 3);
        EXPECT_LE(row["iops_low"].get<double>(), row["iops"].get<double>());
        EXPECT_GE(row["iops_high"].get<double>(), row["iops"].get<double>());
        EXPECT_FALSE(row["interval_covered"].get<bool>()) << "3 rounds cannot reach 95%";
        EXPECT_LE(row["cpu_us_per_io_low"].get<double>(), row["cpu_us_per_io"].get<double>());
        EXPECT_GT(row["iops"].get<double>(), 0);
        EXPECT_NEAR(row["bw_bytes"].get<double>(), row["iops"].get<double>() * 4096, 1.0);
        EXPECT_LE(row["lat_ns"]["p50"].get<double>(), row["lat_ns"]["p99"].get<double>());
        EXPECT_LE(row["lat_ns"]["p99"].get<double>(), row["lat_ns"]["max"].get<double>() * 1.01);
    }
    // Each round: its order (pairs of rounds, the second reversed, rotated by one each pair) and a run per engine and depth.
    ASSERT_EQ(doc["runs"].size(), 3u);
    using Labels = std::vector<std::string>;
    EXPECT_EQ(doc["runs"][0]["order"].get<Labels>(), (Labels{"pread", "uring", "auto"}));
    EXPECT_EQ(doc["runs"][1]["order"].get<Labels>(), (Labels{"auto", "uring", "pread"}));
    EXPECT_EQ(doc["runs"][2]["order"].get<Labels>(), (Labels{"uring", "auto", "pread"}));
    for (const auto& round : doc["runs"]) {
        ASSERT_EQ(round["runs"].size(), 6u) << round.dump();
        EXPECT_EQ(round["runs"][0]["engine"], round["order"][0]) << "runs in the round's order";
        for (const auto& run : round["runs"]) {
            EXPECT_EQ(run["ios"], 2000);
            EXPECT_GT(run["iops"].get<double>(), 0);
            EXPECT_EQ(run["steady"], "not_assessed") << "2000 I/Os are too short to judge";
        }
    }
    EXPECT_EQ(doc["runs"][1]["runs"][0]["position"], 1);
    // At each depth: uring against pread, auto against the engine it did not
    // run; on IOPS and CPU.  Three rounds are too few for any verdict.
    ASSERT_EQ(doc["comparisons"].size(), 8u) << doc["comparisons"].dump();
    bool auto_vs_uring_at_1 = false, auto_vs_pread_at_8 = false;
    for (const auto& c : doc["comparisons"]) {
        for (const char* k : {"a", "b", "iodepth", "metric", "ratio", "ratio_low", "ratio_high",
                              "verdict"})
            EXPECT_TRUE(c.contains(k)) << k << " in " << c.dump();
        EXPECT_EQ(c["verdict"], "too_few_samples") << c.dump();
        EXPECT_EQ(c["pairs"], 3);
        EXPECT_LE(c["ratio_low"].get<double>(), c["ratio"].get<double>());
        EXPECT_GE(c["ratio_high"].get<double>(), c["ratio"].get<double>());
        EXPECT_NE(c["a"], c["b"]);
        auto_vs_uring_at_1 |= c["a"] == "auto" && c["b"] == "uring" && c["iodepth"] == 1;
        auto_vs_pread_at_8 |= c["a"] == "auto" && c["b"] == "pread" && c["iodepth"] == 8;
    }
    EXPECT_TRUE(auto_vs_uring_at_1) << "auto ran pread at depth 1: compared with uring";
    EXPECT_TRUE(auto_vs_pread_at_8) << "auto ran uring at depth 8: compared with pread";
    EXPECT_NE(r.out.find("at depth 1 auto ran pread, so it is compared only with uring"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("too few samples to compare (3 rounds;"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("faster"), std::string::npos) << r.out;
    // Peak memory: under 32 MiB plus the I/O buffers (the bound).
    // Sanitizer builds carry shadow memory, so the bound holds only without them.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    EXPECT_LT(doc["peak_rss_kib"].get<long>(), (32 << 10) + 8 * 4 * 1);
#endif
    std::ifstream c(csv);
    std::string header;
    std::getline(c, header);
    EXPECT_EQ(header.rfind("engine,iodepth,batch,status,", 0), 0u) << header;
    // Every row carries the interval of its median, which holds the median.
    const auto split = [](const std::string& line) {
        std::vector<std::string> cells;
        std::stringstream ss(line);
        for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
        return cells;
    };
    const std::vector<std::string> names = split(header);
    const auto column = [&](const std::string& name) {
        return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
    };
    const std::size_t iops_col = column("iops"), low_col = column("iops_low"),
                      high_col = column("iops_high");
    ASSERT_NE(header.find(",iops_low,iops_high,interval_covered,"), std::string::npos) << header;
    std::size_t ok_rows = 0;
    for (std::string line; std::getline(c, line);) {
        if (line.find(",ok,") == std::string::npos) continue;
        const std::vector<std::string> cells = split(line);
        ASSERT_GT(cells.size(), high_col) << line;
        const double iops = std::stod(cells[iops_col]), low = std::stod(cells[low_col]),
                     high = std::stod(cells[high_col]);
        EXPECT_LE(low, iops) << line;
        EXPECT_GE(high, iops) << line;
        EXPECT_GT(low, 0) << line;
        ++ok_rows;
    }
    EXPECT_GT(ok_rows, 0u);
    std::ifstream s(svg);
    const std::string chart((std::istreambuf_iterator<char>(s)), std::istreambuf_iterator<char>());
    EXPECT_NE(chart.find("<svg"), std::string::npos);
    EXPECT_NE(chart.find("I/O depth"), std::string::npos);
    EXPECT_NE(chart.find(">uring<"), std::string::npos) << "a legend entry per engine";
}

// A/A: every engine listed twice must be judged the same as itself.  16
// rounds at 99.9% family-wise over the run's 20 comparisons (each at
// 99.995%, which min-max of 16 paired ratios just reaches): the chance that
// noise makes any engine faster than itself is at most 0.1% (docs/bench.md).
TEST_F(BenchCli, AACheckCallsEveryEngineTheSameAsItself) {
    const std::string json = path("aa.json");
    const Result r = run(with(kQuickRounds, {"--engines", "pread,pread,uring,uring,threadpool,"
                                                          "threadpool",
                                             "--iodepth", "1,8", "--rounds", "16",
                                             "--confidence", "0.999", "--json", json}));
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    const auto doc = nlohmann::json::parse(std::ifstream(json));
    int aa = 0;
    for (const auto& c : doc["comparisons"]) {
        const std::string a = c["a"];
        if (a.find('#') == std::string::npos) continue;
        const std::string base = a.substr(0, a.find('#'));
        ++aa;
        EXPECT_EQ(a, base + "#2");
        EXPECT_EQ(c["b"], base);
        EXPECT_EQ(c["pairs"], 16) << c.dump();
        EXPECT_EQ(c["verdict"], "same") << "an engine faster than itself: " << c.dump() << "\n"
                                        << r.out;
        EXPECT_LE(c["ratio_low"].get<double>(), 1.0);
        EXPECT_GE(c["ratio_high"].get<double>(), 1.0);
    }
    bool uring_ok = false;
    for (const auto& row : doc["rows"]) uring_ok |= row["engine"] == "uring" && row["status"] == "ok";
    EXPECT_EQ(aa, uring_ok ? 12 : 8) << "A/A for each engine, depth and metric";
    EXPECT_NE(r.out.find("at depth 8 pread#2 against pread: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("the same reads per second within this machine's noise (±"),
              std::string::npos)
        << r.out;
}

// Writes are worded as writes; a few I/Os per run give no verdict at all.
TEST_F(BenchCli, VerdictFitsWritesAndRefusesTinySamples) {
    const Result w = run({"--size", "4m", "--ios", "1500", "--ramp", "0", "--rw", "randwrite",
                          "--engines", "pread,pread", "--iodepth", "1", "--rounds", "12",
                          "--confidence", "0.999"});
    ASSERT_EQ(w.status, 0) << w.err << w.out;
    EXPECT_NE(w.out.find("at depth 1 pread#2 against pread: "), std::string::npos) << w.out;
    EXPECT_NE(w.out.find("the same writes per second"), std::string::npos) << w.out;
    EXPECT_NE(w.out.find("the same CPU per write"), std::string::npos) << w.out;
    EXPECT_EQ(w.out.find("reads per second"), std::string::npos) << w.out;
    EXPECT_EQ(w.out.find("per read"), std::string::npos) << w.out;

    const Result t = run({"--size", "4m", "--ios", "10", "--ramp", "0", "--engines",
                          "pread,uring", "--iodepth", "1", "--rounds", "11"});
    ASSERT_EQ(t.status, 0) << t.err << t.out;
    EXPECT_NE(t.out.find("too few samples to compare (runs of fewer than 1000 I/Os)"),
              std::string::npos)
        << t.out;
    EXPECT_EQ(t.out.find("faster"), std::string::npos) << t.out;
    EXPECT_EQ(t.out.find("slower"), std::string::npos) << t.out;
}

TEST_F(BenchCli, BadRoundOptionsAreUsageErrors) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"--rounds", "0"}, "--rounds 0"},
        {{"--order", "backwards"}, "--order backwards: use rotate, shuffle or fixed"},
        {{"--confidence", "1"}, "--confidence 1"},
        {{"--confidence", "0.2"}, "--confidence 0.2"},
        {{"--compare", "no-such.json"}, "no-such.json: cannot read the saved run"},
    };
    for (const auto& [args, needle] : cases) {
        const Result r = run(args);
        EXPECT_EQ(r.status, needle.find("saved run") != std::string::npos ? 4 : 2) << needle;
        one_line(r, needle);
    }
    EXPECT_TRUE(tmp_empty());
}

// --order shuffle prints its seed; the same seed gives the same orders.
TEST_F(BenchCli, ShuffleSeedIsPrintedAndRepeats) {
    const std::string a = path("a.json"), b = path("b.json");
    const std::vector<std::string> job = {"--engines", "pread,uring,threadpool,libaio",
                                          "--iodepth", "1", "--rounds", "4", "--order", "shuffle"};
    const Result first = run(with(with(kQuickRounds, job), {"--json", a}));
    ASSERT_EQ(first.status, 0) << first.err;
    const auto at = first.out.find("(--order-seed ");
    ASSERT_NE(at, std::string::npos) << first.out;
    const std::string seed =
        first.out.substr(at + 14, first.out.find(')', at) - (at + 14));
    ASSERT_EQ(run(with(with(kQuickRounds, job), {"--order-seed", seed, "--json", b})).status, 0);
    const auto da = nlohmann::json::parse(std::ifstream(a)), db = nlohmann::json::parse(std::ifstream(b));
    for (int i = 0; i < 4; ++i) EXPECT_EQ(da["runs"][i]["order"], db["runs"][i]["order"]) << i;
    EXPECT_EQ(da["job"]["order"], "shuffle");
}

// --compare judges each engine and depth against a saved run, by the same rule.
TEST_F(BenchCli, CompareAgainstASavedRun) {
    const std::string first = path("first.json"), second = path("second.json");
    const std::vector<std::string> job = {"--engines", "pread", "--iodepth", "1,4", "--rounds",
                                          "3"};
    ASSERT_EQ(run(with(with(kQuickRounds, job), {"--json", first})).status, 0);
    const Result r = run(with(with(kQuickRounds, job), {"--compare", first, "--json", second}));
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    const auto doc = nlohmann::json::parse(std::ifstream(second));
    int saved = 0;
    for (const auto& c : doc["comparisons"])
        if (c["b"] == "saved") {
            ++saved;
            EXPECT_EQ(c["a"], "pread");
            EXPECT_EQ(c["pairs"], 3);
            EXPECT_GT(c["ratio"].get<double>(), 0);
            // 3 runs a side cannot reach 95%: no verdict either way.
            EXPECT_EQ(c["verdict"], "too_few_samples") << c.dump();
        }
    EXPECT_EQ(saved, 4) << "two depths, IOPS and CPU";
    EXPECT_NE(r.out.find("at depth 4 pread against the saved run (" + first + "): too few"),
              std::string::npos)
        << r.out;
    // The table shows each row against the saved run, with the same verdict.
    EXPECT_NE(r.out.find("IOPS vs saved"), std::string::npos) << r.out;
    std::size_t rows = 0;
    for (std::size_t at = 0; (at = r.out.find("x too few\n", at)) != std::string::npos; ++at) ++rows;
    EXPECT_EQ(rows, 2u) << "one cell per depth\n" << r.out;

    make_file("junk.json", 10);
    const Result bad = run(with(kQuick, {"--compare", path("junk.json")}));
    EXPECT_EQ(bad.status, 4);
    one_line(bad, "junk.json: not a `uringkit bench --json` file");
}

// --cache cold reads cold blocks: the page-cache residency of the file when
// measuring starts (after the ramp) is ~0 for every run; warm is ~all of it.
TEST_F(BenchCli, ColdCacheIsColdAfterTheRamp) {
    const std::string cold = path("cold.json"), warm = path("warm.json");
    const std::vector<std::string> job = {"--size",    "16m",  "--ios",     "2000",
                                          "--ramp",    "0.1",  "--rounds",  "2",
                                          "--engines", "pread,uring", "--iodepth", "1,16"};
    ASSERT_EQ(run(with(job, {"--cache", "cold", "--json", cold})).status, 0);
    ASSERT_EQ(run(with(job, {"--cache", "warm", "--json", warm})).status, 0);
    int runs = 0;
    for (const auto& [file, want_cold] : {std::pair{cold, true}, std::pair{warm, false}}) {
        const auto doc = nlohmann::json::parse(std::ifstream(file));
        for (const auto& round : doc["runs"])
            for (const auto& run : round["runs"]) {
                if (run["status"] != "ok") continue;
                ++runs;
                ASSERT_FALSE(run["cached_at_start"].is_null()) << run.dump();
                const double cached = run["cached_at_start"];
                if (want_cold)
                    EXPECT_LT(cached, 0.01) << "the ramp warmed the file: " << run.dump();
                else
                    EXPECT_GT(cached, 0.99) << run.dump();
            }
    }
    EXPECT_GE(runs, 8) << "pread at two depths, two rounds, cold and warm";
}

// Registered buffers count against RLIMIT_MEMLOCK on every kernel: with
// CAP_IPC_LOCK gone (bounding set, so exec cannot give it back) and 64 KiB
// allowed, uring-reg's 128 KiB of buffers (32 x 4 KiB) are refused, and the
// row says what was asked for and the limit, not a pre-5.12 story.
TEST_F(BenchCli, RegisteredBuffersOverMemlockNameTheFigureAndTheLimit) {
    const std::string json = path("reg.json");
    const Result r = run(with(kQuick, {"--engines", "pread,uring-reg", "--iodepth", "32",
                                       "--json", json}),
                         [] {
                             ::prctl(PR_CAPBSET_DROP, 14 /* CAP_IPC_LOCK */, 0, 0, 0);
                             const rlimit rl{64 * 1024, 64 * 1024};
                             if (::setrlimit(RLIMIT_MEMLOCK, &rl) != 0) ::_exit(126);
                         });
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    const auto doc = nlohmann::json::parse(std::ifstream(json));
    const auto& reg = doc["rows"][1];
    ASSERT_EQ(reg["engine"], "uring-reg");
    if (reg["status"] == "ok")
        GTEST_SKIP() << "registering 128 KiB under a 64 KiB RLIMIT_MEMLOCK succeeded "
                        "(CAP_IPC_LOCK could not be dropped here)";
    const std::string reason = reg["reason"];
    if (reason.find("ENOMEM") == std::string::npos && reason.find("io_uring_setup") != std::string::npos)
        GTEST_SKIP() << "the ring itself was refused: " << reason;
    EXPECT_EQ(reg["status"], "unavailable") << reason;
    EXPECT_NE(reason.find("registering 128 KiB of I/O buffers"), std::string::npos) << reason;
    EXPECT_NE(reason.find("count against RLIMIT_MEMLOCK (64 KiB"), std::string::npos) << reason;
    EXPECT_EQ(reason.find("5.12"), std::string::npos) << reason;
    EXPECT_EQ(doc["rows"][0]["status"], "ok") << "pread still runs";
}

TEST_F(BenchCli, IoUringForbiddenGivesUnavailableRowsAndPreadStillRuns) {
    const std::string json = path("out.json");
    const Result r = run(
        with(kQuick, {"--engines", "pread,uring,uring-reg,auto", "--iodepth", "4", "--json", json}),
        [] { forbid_io_uring(EPERM, true); });  // io_uring_setup fails with EPERM, as under no_uring
    ASSERT_EQ(r.status, 0) << "pread ran, so the exit status is 0\n" << r.err << r.out;
    const auto doc = nlohmann::json::parse(std::ifstream(json));
    for (const auto& row : doc["rows"]) {
        const std::string e = row["engine"];
        if (e == "uring" || e == "uring-reg") {
            EXPECT_EQ(row["status"], "unavailable");
            EXPECT_NE(row["reason"].get<std::string>().find("io_uring_setup"), std::string::npos)
                << row["reason"];
        } else {
            EXPECT_EQ(row["status"], "ok") << e;
        }
    }
    EXPECT_NE(r.out.find("unavailable: io_uring_setup"), std::string::npos) << r.out;
    EXPECT_TRUE(tmp_empty());
}

TEST_F(BenchCli, NoUringWrapperOnlyUringEnginesExitsOne) {
    // no_uring [--errno 38] CMD: io_uring as on a kernel built without it.
    std::vector<std::string> args = with(kQuick, {"--engines", "uring,uring-sqpoll"});
    args.insert(args.begin(), {NO_URING, "--errno", "38", URINGKIT_CLI, "bench"});
    int out[2];
    ASSERT_EQ(::pipe(out), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(out[1], 1);
        ::dup2(out[1], 2);
        ::setenv("TMPDIR", tmp_.c_str(), 1);
        std::vector<char*> argv;
        for (std::string& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(out[1]);
    std::string all, none;
    int devnull = ::open("/dev/null", O_RDONLY);
    drain(out[0], all, devnull, none);
    int st = 0;
    ::waitpid(pid, &st, 0);
    ASSERT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 1) << all;
    EXPECT_NE(all.find("unavailable"), std::string::npos) << all;
    EXPECT_NE(all.find("no engine could run"), std::string::npos) << all;
    EXPECT_TRUE(tmp_empty());
}

TEST_F(BenchCli, MissingFile) {
    const Result r = run(with(kQuick, {"--filename", path("nope")}));
    EXPECT_EQ(r.status, 4);
    one_line(r, "nope: No such file or directory");
}

TEST_F(BenchCli, Directory) {
    const Result r = run(with(kQuick, {"--filename", dir_.string()}));
    EXPECT_EQ(r.status, 4);
    one_line(r, "is a directory");
}

TEST_F(BenchCli, FileSmallerThanOneBlock) {
    make_file("small", 1000);
    const Result r = run(with(kQuickOnFile, {"--filename", path("small")}));
    EXPECT_EQ(r.status, 4);
    one_line(r, "smaller than one block");
}

TEST_F(BenchCli, DirectBlockSizeNotAMultipleOfTheLogicalBlock) {
    const Result r = run(with(kQuick, {"--direct", "--bs", "1000"}));
    EXPECT_EQ(r.status, 4);
    one_line(r, "not a multiple of");
    EXPECT_TRUE(tmp_empty());
}

TEST_F(BenchCli, FilesystemRefusingODirect) {
    // A filesystem without O_DIRECT is injected: open() with O_DIRECT fails
    // with EINVAL, as it does on filesystems that lack direct I/O.
    const Result r = run(with(kQuick, {"--direct"}), [] { refuse_o_direct(); });
    EXPECT_EQ(r.status, 4);
    one_line(r, "refuses direct I/O");
    EXPECT_TRUE(tmp_empty()) << "the temporary file made for the run was removed";
}

TEST_F(BenchCli, BadValuesAreUsageErrors) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"--size", "0"}, "--size 0"},
        {{"--size", "-5"}, "--size -5"},
        {{"--iodepth", "0"}, "--iodepth 0"},
        {{"--iodepth", "1,-3"}, "--iodepth -3"},
        {{"--iodepth", "40000"}, "above the ring's maximum"},
        {{"--bs", "0"}, "--bs 0"},
        {{"--engines", "pread,warp"}, "unknown engine 'warp'"},
        {{"--rw", "sideways"}, "--rw sideways"},
        {{"--cache", "lukewarm"}, "--cache lukewarm"},
        {{"--runtime", "soon"}, "--runtime soon"},
    };
    for (const auto& [args, needle] : cases) {
        const Result r = run(args);
        EXPECT_EQ(r.status, 2) << needle;
        one_line(r, needle);
    }
    const Result r = run({"--no-such-option"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--no-such-option"), std::string::npos) << r.err;
    EXPECT_TRUE(tmp_empty());
}

TEST_F(BenchCli, WritesToAUsersFileNeedAllowWrite) {
    make_file("mine", 1 << 20);
    const auto before = fs::last_write_time(path("mine"));
    const Result r =
        run(with(kQuickOnFile, {"--filename", path("mine"), "--rw", "randwrite", "--engines", "pread"}));
    EXPECT_EQ(r.status, 2);
    one_line(r, "--allow-write");
    EXPECT_EQ(fs::last_write_time(path("mine")), before) << "the file was not touched";
    const Result ok = run(with(kQuickOnFile, {"--filename", path("mine"), "--rw", "randwrite",
                                        "--engines", "pread", "--allow-write"}));
    EXPECT_EQ(ok.status, 0) << ok.err;
}

TEST_F(BenchCli, UnwritableOutputPath) {
    const Result r = run(with(kQuick, {"--json", path("no/such/dir/out.json")}));
    EXPECT_EQ(r.status, 4);
    one_line(r, "out.json: cannot write");
    EXPECT_TRUE(tmp_empty());
    const Result d = run(with(kQuick, {"--csv", dir_.string()}));
    EXPECT_EQ(d.status, 4);
    one_line(d, "is a directory");
}

TEST_F(BenchCli, TemporaryDirectoryWithoutRoom) {
    // A file-size limit stands in for a full disk: fallocate/write fail with EFBIG.
    const Result r = run({"--size", "64m", "--ios", "10"}, [] {
        ::signal(SIGXFSZ, SIG_IGN);
        rlimit lim{1 << 20, 1 << 20};
        ::setrlimit(RLIMIT_FSIZE, &lim);
    });
    EXPECT_EQ(r.status, 5);
    one_line(r, "no room for a 64 MiB temporary file");
    EXPECT_TRUE(tmp_empty()) << "the partial temporary file was removed";
}

TEST_F(BenchCli, TemporaryDirectoryMissing) {
    const Result r = run(kQuick, [] { ::setenv("TMPDIR", "/nonexistent-uringkit", 1); });
    EXPECT_EQ(r.status, 4);
    one_line(r, "cannot create a temporary file in /nonexistent-uringkit");
}

TEST_F(BenchCli, InterruptPrintsWhatWasMeasuredAndRemovesTheFile) {
    // A run far longer than the test: SIGINT after the header line, when the
    // first engine is running.  The figures of the partial run are printed.
    const Result r =
        run({"--size", "8m", "--runtime", "60", "--ramp", "0", "--engines", "pread,uring"}, {},
            [](pid_t pid, int out) {
                char c;
                while (::read(out, &c, 1) == 1 && c != '\n') {
                }
                ::usleep(300 * 1000);  // let the first run measure something
                ::kill(pid, SIGINT);
            });
    EXPECT_EQ(r.status, 130) << r.err;
    EXPECT_NE(r.out.find("\npread"), std::string::npos) << "the row measured so far is printed\n"
                                                        << r.out;
    EXPECT_NE(r.out.find("interrupted"), std::string::npos) << r.out;
    EXPECT_TRUE(tmp_empty()) << "the temporary file was removed";
}

}  // namespace

namespace {

TEST(BenchCliTerminal, ProgressLineOnlyWhenStderrIsATerminal) {
    // script(1) gives the command a pseudo-terminal; everything it writes
    // comes back on our pipe.
    if (std::system("command -v script > /dev/null 2>&1") != 0)
        GTEST_SKIP() << "script(1) is not installed";
    const std::string cmd =
        std::string("script -qec '") + URINGKIT_CLI +
        " bench --size 4m --engines pread --iodepth 1 --runtime 0.6 --ramp 0 --rounds 1' /dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string all;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) all.append(buf, n);
    ASSERT_EQ(::pclose(p), 0) << all;
    EXPECT_NE(all.find("\r\033[Kpread"), std::string::npos) << "a progress line is drawn:\n" << all;
    EXPECT_NE(all.find("depth 1"), std::string::npos);
    EXPECT_NE(all.find("IOPS  ETA"), std::string::npos) << all;
    // The line is cleared before the table, so the table starts on a clean line.
    EXPECT_NE(all.find("\r\033[K\r\n"), std::string::npos) << all;
}

}  // namespace
