// `uringkit bench --compare OLD.json` judges only runs of the same job: a
// saved run of another --rw, --bs, --size, --direct, --cache or file system
// is not compared, every difference is named in a note, and the status is
// 1; so is a saved run with nothing in common (no engine at a depth that ran
// here, or no runs at all).  Rows the saved run lacks are named.
#include "files_test_support.hpp"

#include <nlohmann/json.hpp>

namespace {

using namespace files_test;

struct BenchCompare : ::testing::Test {
    Scratch dir;
    void SetUp() override { stdfs::create_directory(dir / "tmp"); }
    // A quick run of `extra` on a 1 MiB temporary file.
    Child bench(std::vector<std::string> extra) {
        std::vector<std::string> args = {URINGKIT_CLI, "bench",  "--size", "1m",       "--ios",
                                         "200",        "--ramp", "0",      "--rounds", "1"};
        args.insert(args.end(), extra.begin(), extra.end());
        const std::string tmp = dir / "tmp";
        return run(args, {}, [tmp] { ::setenv("TMPDIR", tmp.c_str(), 1); });
    }
    // The comparisons against the saved run in a --json file.
    static int saved_comparisons(const std::string& json) {
        const auto doc = nlohmann::json::parse(read_file(json));
        int n = 0;
        for (const auto& c : doc["comparisons"]) n += c["b"] == "saved";
        return n;
    }
};

// A 64 KiB sequential run against a saved 4 KiB random one: nothing judged,
// both differences named, status 1; the run itself is printed and written.
TEST_F(BenchCompare, AnotherJobIsNotComparedAndEveryDifferenceIsNamed) {
    const std::string saved = dir / "saved.json", now = dir / "now.json";
    ASSERT_EQ(bench({"--engines", "pread", "--iodepth", "1", "--rw", "randread", "--bs", "4k",
                     "--json", saved})
                  .status,
              0);
    const Child r = bench({"--engines", "pread", "--iodepth", "1", "--rw", "read", "--bs", "64k",
                           "--compare", saved, "--json", now});
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(
        r.out.find("note: --compare " + saved + ": nothing compared: it measured another job"),
        std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("--rw read here, randread in " + saved), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--bs 64 KiB here, 4 KiB in " + saved), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("against the saved run"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("IOPS vs saved"), std::string::npos) << r.out;
    EXPECT_EQ(saved_comparisons(now), 0);
    EXPECT_TRUE(stdfs::is_empty(dir / "tmp"));
}

// The same job, but no engine ran here at a depth the saved run has; then
// only some of the rows: those are compared, the others named.
TEST_F(BenchCompare, NothingInCommonIsSaidAndIsStatusOne) {
    const std::string saved = dir / "saved.json";
    ASSERT_EQ(bench({"--engines", "pread", "--iodepth", "1", "--json", saved}).status, 0);
    const Child none = bench({"--engines", "pread", "--iodepth", "4", "--compare", saved});
    EXPECT_EQ(none.status, 1) << none.err;
    EXPECT_NE(
        none.out.find("nothing compared: it has no runs of an engine at a depth that ran here "
                      "(pread at depth 4)"),
        std::string::npos)
        << none.out;

    const Child some = bench({"--engines", "pread", "--iodepth", "1,4", "--compare", saved});
    EXPECT_EQ(some.status, 0) << some.err;
    EXPECT_NE(some.out.find("not in it, so not compared: pread at depth 4"), std::string::npos)
        << some.out;
    EXPECT_NE(some.out.find("at depth 1 pread against the saved run"), std::string::npos)
        << some.out;

    // A saved file whose runs are empty.
    auto doc = nlohmann::json::parse(read_file(saved));
    doc["runs"] = nlohmann::json::array();
    write_file(dir / "empty.json", doc.dump());
    const Child empty =
        bench({"--engines", "pread", "--iodepth", "1", "--compare", dir / "empty.json"});
    EXPECT_EQ(empty.status, 1) << empty.err;
    EXPECT_NE(empty.out.find("nothing compared: it holds no runs"), std::string::npos) << empty.out;
}

// A file saved before the shared JSON header (`uringkit_bench_version` 1,
// "iops", "bs", "size") is still read: its runs are compared, and its job is
// read from the old keys, so a different --bs is still named.
TEST_F(BenchCompare, AFileOfTheFirstShapeIsStillRead) {
    // The cache and file system as a run here records them, so the job matches.
    const std::string now = dir / "now.json";
    ASSERT_EQ(bench({"--engines", "pread", "--iodepth", "1", "--json", now}).status, 0);
    const auto here = nlohmann::json::parse(read_file(now));
    const std::string cache = here["job"]["cache"], filesystem = here["storage"]["filesystem"];
    const auto v1 = [&](unsigned bs) {
        return nlohmann::json{
            {"uringkit_bench_version", 1},
            {"job",
             {{"rw", "randread"},
              {"bs", bs},
              {"size", 1u << 20},
              {"direct", false},
              {"cache", cache}}},
            {"host", {{"kernel", "6.1.0"}, {"cores", 2}, {"filesystem", filesystem}}},
            {"runs",
             {{{"round", 1},
               {"order", {"pread"}},
               {"runs",
                {{{"engine", "pread"},
                  {"iodepth", 1},
                  {"position", 0},
                  {"status", "ok"},
                  {"ios", 200},
                  {"runtime_s", 0.001},
                  {"iops", 200000.0},
                  {"bw_bytes", 200000.0 * bs},
                  {"cpu_us_per_io", 1.0}}}}}}}}
            .dump(2);
    };
    write_file(dir / "v1.json", v1(4096));
    const Child same = bench({"--engines", "pread", "--iodepth", "1", "--rw", "randread", "--bs",
                              "4k", "--compare", dir / "v1.json"});
    EXPECT_EQ(same.status, 0) << same.err << same.out;
    EXPECT_NE(same.out.find("at depth 1 pread against the saved run"), std::string::npos)
        << same.out;

    write_file(dir / "v1_64k.json", v1(65536));
    const Child other = bench({"--engines", "pread", "--iodepth", "1", "--rw", "randread", "--bs",
                               "4k", "--compare", dir / "v1_64k.json"});
    EXPECT_EQ(other.status, 1) << other.err;
    EXPECT_NE(other.out.find("--bs 4 KiB here, 64 KiB in " + dir / "v1_64k.json"),
              std::string::npos)
        << other.out;
}

}  // namespace
