// `uringkit bench` as a user runs it: the JSON has every field of the
// schema, the verdict holds up (A/A, writes, tiny samples), rounds and
// orders, --compare and a cold cache.  Faults and bad input:
// bench_cli_faults_test.cpp.
#include "bench_cli_fixture.hpp"
#include "uringkit/sys/sanitizers.hpp"

namespace {

using namespace bench_cli;

TEST_F(BenchCli, JsonHasTheSchemaAndTheTemporaryFileIsGone) {
    const std::string json = path("out.json"), csv = path("out.csv"), svg = path("out.svg");
    const Result r =
        run(with(kQuickRounds, {"--rounds", "3", "--engines", "pread,uring,auto", "--iodepth",
                                "1,8", "--verify", "--json", json, "--csv", csv, "--plot", svg}));
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    EXPECT_TRUE(tmp_empty()) << "the temporary file was left behind";
    EXPECT_EQ(r.err, "") << "no progress line when stderr is not a terminal";
    EXPECT_NE(r.out.find("at depth 8"), std::string::npos) << "a verdict per depth:\n" << r.out;
    const auto doc = nlohmann::json::parse(std::ifstream(json));
    EXPECT_EQ(doc["schema"], 2);
    EXPECT_EQ(doc["tool"], "uringkit bench");
    for (const char* k : {"kernel", "cpu_model", "cores", "io_uring_disabled"})
        EXPECT_TRUE(doc["host"].contains(k)) << k;
    for (const char* k : {"filesystem", "device", "mount_point"})
        EXPECT_TRUE(doc["storage"].contains(k)) << k;
    EXPECT_EQ(doc["job"]["bs_bytes"], 4096);
    EXPECT_EQ(doc["job"]["rw"], "randread");
    ASSERT_EQ(doc["rows"].size(), 6u);
    for (const auto& row : doc["rows"]) {
        for (const char* k : {"engine", "iodepth", "status", "reason", "ios_per_s", "bytes_per_s",
                              "lat_ns", "cpu_usr_percent", "cpu_sys_percent", "cpu_us_per_io",
                              "ctx_per_kio", "syscalls_per_io", "ios_per_submit"})
            EXPECT_TRUE(row.contains(k)) << k << " in " << row.dump();
        for (const char* k : {"mean", "p50", "p90", "p99", "p99_9", "max"})
            EXPECT_TRUE(row["lat_ns"].contains(k));
        EXPECT_EQ(row["status"], "ok") << row.dump();
        EXPECT_EQ(row["ios"], 2000) << "--ios is exact";
        EXPECT_EQ(row["runs"], 3);
        EXPECT_LE(row["ios_per_s_low"].get<double>(), row["ios_per_s"].get<double>());
        EXPECT_GE(row["ios_per_s_high"].get<double>(), row["ios_per_s"].get<double>());
        EXPECT_FALSE(row["interval_covered"].get<bool>()) << "3 rounds cannot reach 95%";
        EXPECT_LE(row["cpu_us_per_io_low"].get<double>(), row["cpu_us_per_io"].get<double>());
        EXPECT_GT(row["ios_per_s"].get<double>(), 0);
        EXPECT_NEAR(row["bytes_per_s"].get<double>(), row["ios_per_s"].get<double>() * 4096, 1.0);
        EXPECT_LE(row["lat_ns"]["p50"].get<double>(), row["lat_ns"]["p99"].get<double>());
        EXPECT_LE(row["lat_ns"]["p99"].get<double>(), row["lat_ns"]["max"].get<double>() * 1.01);
    }
    // Each round: its order (pairs of rounds, the second reversed, rotated by one each pair) and a
    // run per engine and depth.
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
            EXPECT_GT(run["ios_per_s"].get<double>(), 0);
            EXPECT_EQ(run["steady"], "not_assessed") << "2000 I/Os are too short to judge";
        }
    }
    EXPECT_EQ(doc["runs"][1]["runs"][0]["position"], 1);
    // At each depth: uring against pread, auto against the engine it did not
    // run; on IOPS and CPU.  Three rounds are too few for any verdict.
    ASSERT_EQ(doc["comparisons"].size(), 8u) << doc["comparisons"].dump();
    bool auto_vs_uring_at_1 = false, auto_vs_pread_at_8 = false;
    for (const auto& c : doc["comparisons"]) {
        for (const char* k :
             {"a", "b", "iodepth", "metric", "ratio", "ratio_low", "ratio_high", "verdict"})
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
#if !URINGKIT_ASAN && !URINGKIT_TSAN
    EXPECT_LT(doc["peak_rss_bytes"].get<long>(), ((32 << 10) + 8 * 4 * 1) * 1024L);
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
        return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) -
                                        names.begin());
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
    const Result r = run(with(kQuickRounds, {"--engines",
                                             "pread,pread,uring,uring,threadpool,"
                                             "threadpool",
                                             "--iodepth", "1,8", "--rounds", "16", "--confidence",
                                             "0.999", "--json", json}));
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
    for (const auto& row : doc["rows"])
        uring_ok |= row["engine"] == "uring" && row["status"] == "ok";
    EXPECT_EQ(aa, uring_ok ? 12 : 8) << "A/A for each engine, depth and metric";
    EXPECT_NE(r.out.find("at depth 8 pread#2 against pread: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("the same reads per second within this machine's noise (±"),
              std::string::npos)
        << r.out;
}

// Writes are worded as writes; a few I/Os per run give no verdict at all.
TEST_F(BenchCli, VerdictFitsWritesAndRefusesTinySamples) {
    const Result w =
        run({"--size", "4m", "--ios", "1500", "--ramp", "0", "--rw", "randwrite", "--engines",
             "pread,pread", "--iodepth", "1", "--rounds", "12", "--confidence", "0.999"});
    ASSERT_EQ(w.status, 0) << w.err << w.out;
    EXPECT_NE(w.out.find("at depth 1 pread#2 against pread: "), std::string::npos) << w.out;
    EXPECT_NE(w.out.find("the same writes per second"), std::string::npos) << w.out;
    EXPECT_NE(w.out.find("the same CPU per write"), std::string::npos) << w.out;
    EXPECT_EQ(w.out.find("reads per second"), std::string::npos) << w.out;
    EXPECT_EQ(w.out.find("per read"), std::string::npos) << w.out;

    const Result t = run({"--size", "4m", "--ios", "10", "--ramp", "0", "--engines", "pread,uring",
                          "--iodepth", "1", "--rounds", "11"});
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
    const std::vector<std::string> job = {
        "--engines", "pread,uring,threadpool,libaio", "--iodepth", "1", "--rounds", "4", "--order",
        "shuffle"};
    const Result first = run(with(with(kQuickRounds, job), {"--json", a}));
    ASSERT_EQ(first.status, 0) << first.err;
    const auto at = first.out.find("(--order-seed ");
    ASSERT_NE(at, std::string::npos) << first.out;
    const std::string seed = first.out.substr(at + 14, first.out.find(')', at) - (at + 14));
    ASSERT_EQ(run(with(with(kQuickRounds, job), {"--order-seed", seed, "--json", b})).status, 0);
    const auto da = nlohmann::json::parse(std::ifstream(a)),
               db = nlohmann::json::parse(std::ifstream(b));
    for (int i = 0; i < 4; ++i) EXPECT_EQ(da["runs"][i]["order"], db["runs"][i]["order"]) << i;
    EXPECT_EQ(da["job"]["order"], "shuffle");
}

// --compare judges each engine and depth against a saved run, by the same rule.
TEST_F(BenchCli, CompareAgainstASavedRun) {
    const std::string first = path("first.json"), second = path("second.json");
    const std::vector<std::string> job = {"--engines", "pread",    "--iodepth",
                                          "1,4",       "--rounds", "3"};
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
    for (std::size_t at = 0; (at = r.out.find("x too few\n", at)) != std::string::npos; ++at)
        ++rows;
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
    const std::vector<std::string> job = {"--size",    "16m",         "--ios",     "2000",
                                          "--ramp",    "0.1",         "--rounds",  "2",
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

}  // namespace
