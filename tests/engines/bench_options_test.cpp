// `uringkit bench` options: a malformed list, a batch no depth can hold and a
// --size beyond the named file are refused with one line naming the option
// (status 2); a batch above some depths of a sweep is capped and the header
// and table agree; decimal sizes are read as fio reads them.
#include "diagnostics.hpp"
#include "files_test_support.hpp"

#include <nlohmann/json.hpp>

namespace {

using namespace files_test;

struct BenchOptions : ::testing::Test {
    Scratch dir;
    void SetUp() override { stdfs::create_directory(dir / "tmp"); }
    Child bench(std::vector<std::string> extra, bool pread_only = true) {
        std::vector<std::string> args = {URINGKIT_CLI, "bench", "--ios",    "200",
                                         "--ramp",     "0",     "--rounds", "1"};
        if (pread_only) args.insert(args.end(), {"--engines", "pread"});
        args.insert(args.end(), extra.begin(), extra.end());
        const std::string tmp = dir / "tmp";
        return run(args, {}, [tmp] { ::setenv("TMPDIR", tmp.c_str(), 1); });
    }
    // One line on stderr containing `needle`, nothing on stdout, status 2,
    // and no temporary file made.
    void refused(const Child& r, const std::string& needle) {
        EXPECT_EQ(r.status, 2) << r.err;
        EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
        EXPECT_EQ(diagnostic_lines(r.err), 1u) << r.err;
        EXPECT_EQ(r.out, "");
        EXPECT_TRUE(stdfs::is_empty(dir / "tmp"));
    }
};

TEST_F(BenchOptions, AnEmptyItemInAListIsRefused) {
    refused(bench({"--iodepth", "1,,2"}), "--iodepth 1,,2: an empty item");
    refused(bench({"--iodepth", "1,"}), "--iodepth 1,: an empty item");
    refused(bench({"--iodepth", ",4"}), "--iodepth ,4: an empty item");
    refused(bench({"--engines", "pread,,uring"}, false), "--engines pread,,uring: an empty item");
    // An empty list is an empty item, not the default list (it ran every engine).
    refused(bench({"--engines", ""}, false), "--engines '': an empty item");
}

// A count of 0 is refused as a negative one is: --ios 0 ran by time
// instead, --batch 0 as if --batch had been left out.
TEST_F(BenchOptions, ZeroIosOrBatchIsRefused) {
    const std::string tmp = dir / "tmp";
    for (const auto& [opt, says] : {std::pair{"--ios", "--ios 0: give a count above 0"},
                                    std::pair{"--batch", "--batch 0: give 1 or more"}})
        refused(run({URINGKIT_CLI, "bench", "--engines", "pread", "--rounds", "1", opt, "0"}, {},
                    [tmp] { ::setenv("TMPDIR", tmp.c_str(), 1); }),
                says);
}

TEST_F(BenchOptions, ABatchAboveEveryDepthIsRefused) {
    refused(bench({"--size", "1m", "--iodepth", "4", "--batch", "64"}),
            "--batch 64: above the largest --iodepth (4)");
}

TEST_F(BenchOptions, ABatchAboveSomeDepthsIsCappedAndSaidSo) {
    const Child r = bench({"--size", "1m", "--iodepth", "2,8", "--batch", "4", "--csv", "-"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("depth 2,8 batch 4 (at most the depth)"), std::string::npos) << r.err;
    // The table (CSV on stdout) shows the batch each depth really used.
    EXPECT_EQ(count(r.out, "\npread,2,2,ok,"), 1u) << r.out;
    EXPECT_EQ(count(r.out, "\npread,8,4,ok,"), 1u) << r.out;
    // Without capping no note is added.
    const Child plain = bench({"--size", "1m", "--iodepth", "8", "--batch", "4"});
    ASSERT_EQ(plain.status, 0) << plain.err;
    EXPECT_NE(plain.out.find("depth 8 batch 4,"), std::string::npos) << plain.out;
}

TEST_F(BenchOptions, ASizeBeyondTheNamedFileIsRefusedAndTheFileKept) {
    const std::string data = dir / "data.bin";
    write_file(data, random_bytes(8 << 20, 3));
    refused(bench({"--filename", data, "--size", "16m"}), "--size 16 MiB: larger than " + data);
    EXPECT_EQ(stdfs::file_size(data), 8u << 20) << "the file was grown";
    const Child ok = bench({"--filename", data, "--size", "4m", "--json", "-"});
    ASSERT_EQ(ok.status, 0) << ok.err;
    EXPECT_EQ(nlohmann::json::parse(ok.out)["job"]["size_bytes"], 4u << 20);
}

TEST_F(BenchOptions, DecimalSizesAreAcceptedAsFioReadsThem) {
    const Child r = bench({"--size", "1.5m", "--json", "-"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["job"]["size_bytes"], 1572864u);
    refused(bench({"--size", "0.1k"}), "--size 0.1k: not a size");
    refused(bench({"--size", "1.m"}), "--size 1.m: not a size");
}

}  // namespace

// --no-latency: no latency is recorded, so none is shown: the table has no
// latency columns, the JSON's latency fields are null (not zero) and the
// CSV's latency cells empty; the default records it in all three.
TEST_F(BenchOptions, NoLatencyLeavesEveryLatencyFieldEmpty) {
    const std::string csv = dir / "out.csv";
    const Child off =
        bench({"--engines", "pread,uring", "--no-latency", "--json", "-", "--csv", csv}, false);
    ASSERT_EQ(off.status, 0) << off.err;
    const nlohmann::json doc = nlohmann::json::parse(off.out);
    EXPECT_EQ(doc["job"]["latency"], false);
    for (const auto& row : doc["rows"]) {
        if (row["status"] != "ok") continue;
        EXPECT_TRUE(row["lat_ns"].is_null()) << row.dump();
        EXPECT_GT(row["ios_per_s"].get<double>(), 0);
    }
    for (const auto& round : doc["runs"])
        for (const auto& run : round["runs"]) EXPECT_TRUE(run["lat_p50_ns"].is_null());
    EXPECT_EQ(off.err.find("p99"), std::string::npos) << "no latency columns:\n" << off.err;
    const std::string table = read_file(csv);
    EXPECT_NE(table.find(",,,,,,"), std::string::npos) << table;  // six empty latency cells

    const Child on = bench({"--engines", "pread,uring", "--json", "-"}, false);
    ASSERT_EQ(on.status, 0) << on.err;
    const nlohmann::json with = nlohmann::json::parse(on.out);
    EXPECT_EQ(with["job"]["latency"], true);
    EXPECT_GT(with["rows"][0]["lat_ns"]["p50"].get<double>(), 0);
    EXPECT_NE(on.err.find("p99"), std::string::npos) << on.err;
}
