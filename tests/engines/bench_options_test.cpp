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

// fio's language: a job file and fio's option names (docs/bench.md, "fio
// users").  Each case is a few hundred I/Os on a 256 KiB file.
namespace {

nlohmann::json fio_json(const std::string& text) {
    const std::size_t brace = text.find('{');  // fio prints notes before its JSON
    if (brace == std::string::npos) return nlohmann::json();
    return nlohmann::json::parse(text.substr(brace), nullptr, false);
}

const nlohmann::json* job_named(const nlohmann::json& doc, const std::string& name) {
    for (const nlohmann::json& j : doc["jobs"])
        if (j.value("jobname", "") == name) return &j;
    return nullptr;
}

}  // namespace

struct BenchFio : BenchOptions {
    std::string job_file(const std::string& text) {
        const std::string path = dir / "job.fio";
        std::ofstream(path) << text;
        return path;
    }
    Child cli(std::vector<std::string> args) {
        args.insert(args.begin(), {URINGKIT_CLI, "bench", "--rounds", "1"});
        const std::string tmp = dir / "tmp";
        return run(args, {}, [tmp] { ::setenv("TMPDIR", tmp.c_str(), 1); });
    }
};

TEST_F(BenchFio, UnsupportedJobOptionsAreListedOnOneLineWithStatus2) {
    const std::string job = job_file("[global]\nsize=256k\n[a]\nbsrange=4k-8k\nfoo=1\n");
    const Child r = cli({job});
    refused(r, "job.fio:4: bsrange=4k-8k: bench runs one block size");
    EXPECT_NE(r.err.find("job.fio:5: foo=1"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("Try 'uringkit bench --help'"), std::string::npos) << r.err;
    refused(cli({"--ioengine=io_uring", "--fixedbufs"}), "add registerfiles=1");
    refused(cli({"--ioengine", "sync"}), "the nearest is psync");
    refused(cli({"--output-format", "json+"}), "use normal or json");
    refused(cli({"--time_based"}), "without runtime= fio would run until stopped");
}

// A job file's job, fio's JSON shape: the fields fio's consumers read.
TEST_F(BenchFio, AJobFileRunsAndWritesFiosJsonShape) {
    ::setenv("URINGKIT_TEST_BS", "4k", 1);
    const std::string job = job_file(
        "; what fio would run\n[global]\nsize=256k\nbs=${URINGKIT_TEST_BS}\n"
        "[reads]\nrw=randread\nioengine=psync\nnumber_ios=50\niodepth=4\n");
    const Child r = cli({"--job", job, "--output-format=json"});
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json doc = fio_json(r.out);
    ASSERT_TRUE(doc.is_object()) << r.out;
    EXPECT_EQ(doc["fio version"].get<std::string>().rfind("uringkit ", 0), 0u);
    EXPECT_TRUE(doc["timestamp"].is_number());
    const nlohmann::json* j = job_named(doc, "reads/pread/qd4");
    ASSERT_NE(j, nullptr) << doc.dump();
    const nlohmann::json& read = (*j)["read"];
    EXPECT_EQ(read["total_ios"], 50);  // number_ios stops it before the end of size (64)
    EXPECT_EQ(read["io_bytes"], 50 * 4096);
    EXPECT_EQ(read["io_kbytes"], 200);
    EXPECT_GT(read["iops"].get<double>(), 0);
    EXPECT_GT(read["bw_bytes"].get<double>(), 0);
    EXPECT_TRUE(read["runtime"].is_number());
    for (const char* p : {"50.000000", "90.000000", "99.000000", "99.900000"})
        EXPECT_GT(read["clat_ns"]["percentile"][p].get<double>(), 0) << p;
    EXPECT_EQ((*j)["write"]["total_ios"], 0);
    for (const char* f : {"usr_cpu", "sys_cpu", "ctx", "groupid", "error"})
        EXPECT_TRUE((*j)[f].is_number()) << f;
    EXPECT_EQ((*j)["job options"]["ioengine"], "psync");
    // The table went to stderr, so standard output is the JSON alone.
    EXPECT_NE(r.err.find("job reads"), std::string::npos) << r.err;
}

TEST_F(BenchFio, NameStartsAJobAndOutputWritesTheFile) {
    const std::string out = dir / "out.json";
    const Child r = cli({"--size", "256k", "--ioengine=psync", "--number_ios", "16",
                         "--output-format", "json", "--output", out, "--name=a", "--rw=randread",
                         "--name", "b", "--rw", "randwrite", "--bs=8k"});
    ASSERT_EQ(r.status, 0) << r.err;
    std::ifstream in(out);
    const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    ASSERT_TRUE(doc.is_object());
    const nlohmann::json* a = job_named(doc, "a/pread/qd1");
    const nlohmann::json* b = job_named(doc, "b/pread/qd1");
    ASSERT_TRUE(a && b) << doc.dump();
    EXPECT_EQ((*a)["read"]["io_bytes"], 16 * 4096);
    EXPECT_EQ((*b)["write"]["io_bytes"], 16 * 8192);
    EXPECT_EQ((*b)["read"]["total_ios"], 0);
    EXPECT_NE((*a)["groupid"], (*b)["groupid"]);
    EXPECT_EQ(r.out.find('{'), std::string::npos) << "the JSON went to --output: " << r.out;
}

// The same job file through fio and through bench: the same number of I/Os
// of the same size, a 70/30 mix (each draws its own random sequence), and
// every offset inside [offset, offset + size) (pread64/pwrite64 seen by
// strace: fio's psync and bench's pread make the same calls).  fio runs the
// two jobs at once (no stonewall: half its time), bench one after the other.
TEST_F(BenchFio, FioAndBenchDoTheSameIo) {
    if (run({"fio", "--version"}).status != 0) GTEST_SKIP() << "fio is not installed";
    const std::string data = dir / "data";
    {
        std::ofstream f(data);
        const std::string block(4096, 'x');
        for (int i = 0; i < 192; ++i) f << block;  // 768 KiB: room past the range too
    }
    const std::string job = job_file(
        "[global]\nfilename=" + data +
        "\nrw=randrw\nrwmixread=70\nbs=4k\nsize=512k\noffset=64k\nnumber_ios=100\niodepth=4\n"
        "[psync]\nioengine=psync\n[uring]\nioengine=io_uring\n");
    const Child f = run({"fio", "--output-format=json", job});
    ASSERT_EQ(f.status, 0) << f.err;
    const std::string trace = dir / "bench.strace";
    // --seccomp-bpf stops only the traced calls: 0.2 s instead of 2.
    const Child b =
        run({"strace", "-f", "--seccomp-bpf", "-qq", "-e", "trace=pread64,pwrite64", "-o", trace,
             // LeakSanitizer cannot run under ptrace: off for a sanitized build.
             "-E", "ASAN_OPTIONS=detect_leaks=0", URINGKIT_CLI, "bench", "--rounds", "1",
             "--allow-write", job, "--output-format=json"});
    if (b.status == 127) GTEST_SKIP() << "strace is not installed";
    ASSERT_EQ(b.status, 0) << b.err;
    const nlohmann::json fio_doc = fio_json(f.out), bench_doc = fio_json(b.out);
    for (const auto& [fio_name, bench_name] :
         {std::pair{"psync", "psync/pread/qd4"}, std::pair{"uring", "uring/uring/qd4"}}) {
        const nlohmann::json* fj = job_named(fio_doc, fio_name);
        const nlohmann::json* bj = job_named(bench_doc, bench_name);
        ASSERT_TRUE(fj && bj) << bench_name << " in " << bench_doc.dump();
        for (const nlohmann::json* j : {fj, bj}) {
            const auto reads = (*j)["read"]["total_ios"].get<long>();
            const auto writes = (*j)["write"]["total_ios"].get<long>();
            EXPECT_EQ(reads + writes, 100) << bench_name;
            EXPECT_EQ((*j)["read"]["io_bytes"].get<long>(), reads * 4096) << bench_name;
            EXPECT_EQ((*j)["write"]["io_bytes"].get<long>(), writes * 4096) << bench_name;
            // 70 of 100 reads, give or take 4.3 standard deviations (4.6 I/Os).
            EXPECT_GE(reads, 50) << bench_name;
            EXPECT_LE(reads, 90) << bench_name;
        }
    }
    // Every pread64/pwrite64 of a block: 4096 bytes inside [64k, 576k).
    std::ifstream in(trace);
    std::size_t calls = 0;
    for (std::string line; std::getline(in, line);) {
        const std::size_t call = line.find("pread64(");
        const std::size_t wcall = line.find("pwrite64(");
        if (call == std::string::npos && wcall == std::string::npos) continue;
        // pid pread64(fd, "..."..., count, offset) = result
        const std::size_t close = line.rfind(')');
        const std::size_t comma = line.rfind(',', close);
        const std::size_t comma2 = line.rfind(',', comma - 1);
        if (close == std::string::npos || comma == std::string::npos) continue;
        const long count = std::stol(line.substr(comma2 + 1, comma - comma2 - 1));
        const long offset = std::stol(line.substr(comma + 1, close - comma - 1));
        if (count != 4096) continue;  // warming the cache reads larger pieces
        ++calls;
        EXPECT_GE(offset, 64 * 1024) << line;
        EXPECT_LT(offset, 576 * 1024) << line;
        EXPECT_EQ(offset % 4096, 0) << line;
    }
    EXPECT_GE(calls, 100u) << "bench's psync job made its I/O with pread64/pwrite64";
}

// fio's --output with the normal format: the table goes to the file, and
// standard output stays empty (fio's --output does the same).
TEST_F(BenchFio, OutputWritesTheTableToTheFile) {
    const std::string out = dir / "table.txt";
    const Child r = cli(
        {"--size", "256k", "--ios", "32", "--engines", "pread", "--offset=64k", "--output", out});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "");
    std::ifstream in(out);
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    EXPECT_NE(text.find("256 KiB at offset 64 KiB of temporary file"), std::string::npos) << text;
    EXPECT_NE(text.find("\npread "), std::string::npos) << text;
}
