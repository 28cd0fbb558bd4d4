// `uringkit bench net`: workloads parse as documented, the verdict names a
// difference only when the per-round ratios allow it (judged on made-up
// runs whose answer is known), a short real run on loopback measures every
// engine with counts that add up, and the CLI's bad input is one line with
// status 2.
#include "diagnostics.hpp"
#include "files_test_support.hpp"
#include "measure/interval.hpp"
#include "netbench/netbench.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace uringkit;
using measure::Judgement;
using measure::Metric;
using namespace std::chrono_literals;

namespace {

netbench::Workload parse(const std::string& text) {
    std::string why;
    const auto w = netbench::parse_workload(text, why);
    EXPECT_TRUE(w) << text << ": " << why;
    return w.value_or(netbench::Workload{});
}

std::string refused(const std::string& text) {
    std::string why;
    const auto w = netbench::parse_workload(text, why);
    EXPECT_FALSE(w) << text << " was accepted";
    EXPECT_FALSE(why.empty()) << text;
    return why;
}

TEST(BenchNetWorkload, ParsesAndNamesItself) {
    const auto echo = parse("echo:64:4k");
    EXPECT_EQ(echo.mode, load::Mode::Echo);
    EXPECT_EQ(echo.connections, 64u);
    EXPECT_EQ(echo.size, 4096u);
    EXPECT_EQ(echo.name(), "echo:64:4096");
    EXPECT_EQ(parse(echo.name()).size, 4096u);

    const auto http = parse("http:8:16");
    EXPECT_EQ(http.mode, load::Mode::Http);
    EXPECT_EQ(http.connections, 8u);
    EXPECT_EQ(http.pipeline, 16u);
    EXPECT_EQ(http.name(), "http:8:16");
    EXPECT_NE(http.describe().find("16"), std::string::npos);

    const auto file = parse("file:16:64k");
    EXPECT_EQ(file.mode, load::Mode::Http);
    EXPECT_EQ(file.connections, 16u);
    EXPECT_EQ(file.file_size, 65536u);
    EXPECT_EQ(file.name(), "file:16:65536");
    EXPECT_EQ(parse(file.name()).file_size, 65536u);
    EXPECT_NE(file.describe().find("file 64 KiB"), std::string::npos) << file.describe();

    for (const auto& w : netbench::default_workloads()) EXPECT_EQ(parse(w.name()).name(), w.name());
}

TEST(BenchNetWorkload, RefusesWhatItCannotRun) {
    refused("");
    refused("echo");
    refused("echo:8");
    refused("echo:8:64:1");
    refused("ftp:8:64");
    refused("echo:0:64");
    refused("echo:8:0");
    refused("http:8:0");
    refused("echo:x:64");
    refused("echo:-1:64");
    refused("echo:8:64q");
    refused("file:8:0");
    refused("file:8:65m");
}

// A result of `rounds` rounds of engines a and b on one workload, a's server
// CPU per request being `ratio(round)` times b's.
template <class F>
netbench::Result made_up(std::vector<std::string> engines, unsigned rounds, F ratio) {
    netbench::Result res;
    res.config.engines = engines;
    res.config.workloads = {parse("echo:8:64")};
    res.rounds = rounds;
    for (unsigned r = 0; r < rounds; ++r) {
        const double drift = 1 + 0.3 * ((r * 7) % 5) / 5.0;  // the machine drifts; pairs cancel it
        for (unsigned i = 0; i < 2; ++i) {
            netbench::Run run;
            run.engine =
                i == 0 ? engines[0] : (engines[1] == engines[0] ? engines[1] + "#2" : engines[1]);
            run.round = r;
            run.seconds = 1;
            run.requests = run.server_requests = 100000;
            run.server_cpu_s = 0.5 * drift * (i == 0 ? ratio(r) : 1.0);
            run.client_cpu_s = 0.5;
            res.runs.push_back(run);
        }
    }
    return res;
}

const measure::Comparison& on(const std::vector<measure::Comparison>& cs, Metric m) {
    const auto it =
        std::find_if(cs.begin(), cs.end(), [&](const auto& c) { return c.metric == m; });
    EXPECT_NE(it, cs.end());
    return *it;
}

TEST(BenchNetVerdict, AConsistentDifferenceIsNamed) {
    const auto res =
        made_up({"uring", "epoll"}, 12, [](unsigned r) { return 0.8 + 0.01 * (r % 3); });
    const auto cs = netbench::compare(res);
    ASSERT_EQ(cs.size(), 2u);  // server CPU per request and requests/s
    const auto& cpu = on(cs, Metric::cpu_us_per_io);
    EXPECT_EQ(cpu.a, "uring");
    EXPECT_EQ(cpu.b, "epoll");
    EXPECT_EQ(cpu.verdict, Judgement::faster);  // less CPU per request
    EXPECT_NEAR(cpu.ratio, 0.81, 0.011);
    EXPECT_EQ(on(cs, Metric::iops).verdict, Judgement::same);  // equal requests/s every round
    const std::string report = netbench::format_report(res, cs);
    EXPECT_NE(report.find("uring against epoll: server CPU per request: cheaper"),
              std::string::npos)
        << report;
}

TEST(BenchNetVerdict, ScatterAroundOneIsTheSame) {
    const auto res =
        made_up({"uring", "epoll"}, 12, [](unsigned r) { return r % 2 ? 0.85 : 1.15; });
    const auto cs = netbench::compare(res);
    EXPECT_EQ(on(cs, Metric::cpu_us_per_io).verdict, Judgement::same);
    EXPECT_NE(netbench::format_report(res, cs).find("the same within noise"), std::string::npos);
}

TEST(BenchNetVerdict, TooFewRoundsAreNotJudged) {
    const auto res = made_up({"uring", "epoll"}, 2, [](unsigned) { return 0.5; });
    const auto cs = netbench::compare(res);
    EXPECT_EQ(on(cs, Metric::cpu_us_per_io).verdict, Judgement::too_few_samples);
    EXPECT_NE(netbench::format_report(res, cs).find("not judged (2 rounds"), std::string::npos);
}

TEST(BenchNetVerdict, AnEngineListedTwiceIsComparedWithItself) {
    const auto res =
        made_up({"epoll", "epoll"}, 12, [](unsigned r) { return r % 2 ? 0.97 : 1.03; });
    const auto cs = netbench::compare(res);
    const auto& cpu = on(cs, Metric::cpu_us_per_io);
    EXPECT_EQ(cpu.a, "epoll#2");
    EXPECT_EQ(cpu.b, "epoll");
    EXPECT_EQ(cpu.verdict, Judgement::same);
}

TEST(BenchNetVerdict, RoundsByDefaultAreEnoughForAVerdict) {
    netbench::Config c;
    c.engines = {"uring", "epoll"};
    c.workloads = {parse("echo:8:64")};
    const unsigned n = netbench::rounds_of(c);
    // Two comparisons at 95% family-wise: 97.5% each.
    EXPECT_EQ(n, measure::samples_needed(measure::confidence_each(0.95, 2)));
    const auto res = made_up({"uring", "epoll"}, n, [](unsigned) { return 0.8; });
    EXPECT_NE(on(netbench::compare(res), Metric::cpu_us_per_io).verdict,
              Judgement::too_few_samples);
    c.rounds = 3;
    EXPECT_EQ(netbench::rounds_of(c), 3u);
}

TEST(BenchNetVerdict, JsonHoldsEveryRunAndComparison) {
    const auto res = made_up({"uring", "epoll"}, 12, [](unsigned) { return 0.8; });
    const auto cs = netbench::compare(res);
    const auto j = nlohmann::json::parse(netbench::to_json(res, cs));
    EXPECT_EQ(j["schema"], 2);
    EXPECT_EQ(j["runs"].size(), 24u);
    EXPECT_EQ(j["comparisons"].size(), 2u);
    EXPECT_EQ(j["comparisons"][0]["verdict"], "faster");
    EXPECT_EQ(j["runs"][0]["workload"], "echo:8:64");
}

TEST(BenchNetRun, UnknownEngineIsRefused) {
    netbench::Config c;
    c.engines = {"apache"};
    EXPECT_THROW(netbench::run(c), std::invalid_argument);
}

// nginx, the peer, where it is installed: it runs the HTTP and file
// workloads (not echo), its CPU and requests are measured from outside it,
// and its system calls are reported as not counted, never as 0.
TEST(BenchNetRun, NginxIsMeasuredAsAPeer) {
    netbench::Config c;
    c.engines = {"epoll", "nginx"};
    c.workloads = {parse("http:4:4"), parse("file:4:100k"), parse("echo:2:64")};
    c.rounds = 2;
    c.duration = 150ms;
    const auto res = netbench::run(c);
    for (const auto& u : res.unavailable)
        if (u.engine == "nginx") GTEST_SKIP() << u.why;
    std::size_t nginx_runs = 0;
    for (const auto& r : res.runs) {
        SCOPED_TRACE(r.engine + " " + c.workloads[r.workload].name());
        if (r.engine != "nginx") continue;
        ++nginx_runs;
        EXPECT_NE(c.workloads[r.workload].mode, load::Mode::Echo) << "nginx does not echo";
        EXPECT_EQ(r.error, "");
        EXPECT_TRUE(r.usable());
        EXPECT_GE(r.server_requests + 64, r.requests);
        EXPECT_LE(r.server_requests, r.requests + 10000);
        EXPECT_GT(r.server_cpu_s, 0);
        EXPECT_FALSE(r.syscalls_counted);
    }
    EXPECT_EQ(nginx_runs, 2u * 2u) << "two workloads, two rounds";
    const auto cs = netbench::compare(res);
    const auto j = nlohmann::json::parse(netbench::to_json(res, cs));
    for (const auto& r : j["runs"])
        if (r["engine"] == "nginx") {
            EXPECT_TRUE(r["server_syscalls_per_request"].is_null());
        }
    EXPECT_NE(netbench::format_report(res, cs).find("nginx"), std::string::npos);
}

// The real thing, briefly: every engine serves, the server counts at least
// the requests the client counted, and CPU and system calls were measured.
TEST(BenchNetRun, EveryEngineIsMeasuredOnLoopback) {
    netbench::Config c;
    c.engines = {"uring",       "uring-coro",   "uring-bundle", "uring-inc",
                 "uring-calls", "uring-splice", "epoll",        "epoll-read"};
    c.workloads = {parse("echo:4:64"), parse("echo:2:20k"), parse("http:4:4"),
                   parse("file:4:100k")};
    c.rounds = 2;
    c.duration = 150ms;
    const auto res = netbench::run(c);
    EXPECT_FALSE(res.interrupted);
    std::size_t expected = 0;
    for (const auto& e : c.engines) {
        const bool missing = std::any_of(res.unavailable.begin(), res.unavailable.end(),
                                         [&](const auto& u) { return u.engine == e; });
        if (!missing) expected += c.workloads.size() * c.rounds;
    }
    if (expected == 0) GTEST_SKIP() << "no engine can run here: " << res.unavailable.front().why;
    ASSERT_EQ(res.runs.size(), expected);
    for (const auto& r : res.runs) {
        SCOPED_TRACE(r.engine + " " + c.workloads[r.workload].name());
        EXPECT_EQ(r.error, "");
        EXPECT_TRUE(r.usable());
        EXPECT_GT(r.requests, 0u);
        EXPECT_GE(r.server_requests + 64,
                  r.requests);  // the server saw what the client counted (±in flight)
        EXPECT_LE(r.server_requests, r.requests + 10000);  // and no more than it could have sent
        EXPECT_GT(r.server_cpu_s, 0);
        EXPECT_GT(r.server_syscalls, 0u);
        EXPECT_GT(r.lat_p99_ns, 0);
        // Unpipelined, epoll needs a recv and a send per request at least
        // (pipelined, one recv can bring several); io_uring does not.
        if (r.engine == "epoll" && c.workloads[r.workload].mode == load::Mode::Echo) {
            EXPECT_GE(r.server_syscalls_per_request(), 1.0);
        }
    }
    // A file request costs uring-calls openat2, statx, pread and close; the
    // uring engine puts all but the statx on its ring.
    const auto file_calls = [&](const std::string& engine) {
        double most = 0;
        for (const auto& r : res.runs)
            if (r.engine == engine && c.workloads[r.workload].file_size > 0)
                most = std::max(most, r.server_syscalls_per_request());
        return most;
    };
    if (file_calls("uring-calls") > 0) {
        EXPECT_GE(file_calls("uring-calls"), 4.0);
        EXPECT_LT(file_calls("uring"), file_calls("uring-calls"));
    }
    const auto cs = netbench::compare(res);
    EXPECT_FALSE(cs.empty());
    EXPECT_NE(netbench::format_report(res, cs).find("Verdict"), std::string::npos);
    // The file workload's directory is gone with the run.
    for (const auto& e : std::filesystem::directory_iterator("/var/tmp"))
        EXPECT_FALSE(e.path().filename().string().starts_with("uringkit-bench-net-")) << e.path();
}

files_test::Child bench_net(std::vector<std::string> args) {
    args.insert(args.begin(), {URINGKIT_CLI, "bench", "net"});
    return files_test::run(std::move(args));
}

void expect_usage(const std::vector<std::string>& args, const std::string& says) {
    const auto r = bench_net(args);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_EQ(diagnostic_lines(r.err), 1u) << "one line: " << r.err;
    EXPECT_EQ(r.out, "");
}

TEST(BenchNetCli, BadInputIsAUsageError) {
    expect_usage({"--engines", "uring,apache"}, "unknown engine 'apache'");
    expect_usage({"--engines", "uring,,epoll"}, "an empty item");
    expect_usage({"--workloads", "echo:0:64"}, "--workloads echo:0:64");
    expect_usage({"--duration", "10ms"}, "--duration 10ms");
    expect_usage({"--confidence", "1"}, "--confidence 1");
    expect_usage({"--rounds", "5000"}, "--rounds 5000");
}

TEST(BenchNetCli, JsonToStandardOutputParses) {
    const auto r = bench_net({"--engines", "epoll,epoll", "--workloads", "echo:2:64", "--rounds",
                              "2", "-d", "100ms", "--json", "-"});
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["tool"], "uringkit bench net");
    EXPECT_EQ(j["runs"].size(), 4u);
    EXPECT_EQ(j["comparisons"][0]["a"], "epoll#2");
    EXPECT_NE(r.err.find("Verdict"), std::string::npos)
        << "the report goes to stderr beside JSON on stdout";
}

}  // namespace

// Processes whose command line holds `marker`.
std::vector<pid_t> processes_with(const std::string& marker) {
    std::vector<pid_t> out;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        const std::string name = e.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream f(e.path() / "cmdline");
        const std::string cmdline((std::istreambuf_iterator<char>(f)),
                                  std::istreambuf_iterator<char>());
        if (cmdline.find(marker) != std::string::npos) out.push_back(std::stoi(name));
    }
    return out;
}

// SIGTERM mid-run: the report of what finished is printed, bench ends by
// the signal, and no server child outlives it.
TEST(BenchNetCli, SigtermPrintsWhatRanAndLeavesNoServer) {
    const std::string marker = "echo:3:77";  // a workload no other test uses
    const auto r = files_test::run({URINGKIT_CLI, "bench", "net", "--engines", "epoll,uring",
                                    "--workloads", marker, "--rounds", "50", "-d", "200ms"},
                                   {}, {}, [](pid_t pid) {
                                       std::this_thread::sleep_for(1500ms);
                                       ::kill(pid, SIGTERM);
                                   });
    EXPECT_EQ(r.signal, SIGTERM) << r.status << " " << r.err;
    EXPECT_NE(r.out.find("interrupted"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("echo 77 B, 3 connections"), std::string::npos) << r.out;
    EXPECT_TRUE(files_test::wait_until([&] { return processes_with(marker).empty(); }))
        << "a server outlived bench";
}
