// `uringkit bench --json/--csv/--plot`: an output never goes through a name
// another user could plant, never replaces what is not a regular file
// (/dev/stdout, a FIFO), never overwrites the input it measures; "-" is
// standard output.
#include "files_test_support.hpp"

#include <sys/stat.h>
#include <sys/types.h>
#include <nlohmann/json.hpp>

#include <thread>

namespace {

using namespace files_test;

struct BenchOutputs : ::testing::Test {
    Scratch dir;
    void SetUp() override { stdfs::create_directory(dir / "tmp"); }
    // A quick run: a 4 MiB temporary file in the scratch TMPDIR, 500 reads.
    Child bench(std::vector<std::string> extra) {
        std::vector<std::string> args = {URINGKIT_CLI, "bench",  "--size",    "4m",       "--ios",
                                         "500",        "--ramp", "0",         "--rounds", "1",
                                         "--engines",  "pread",  "--iodepth", "4"};
        args.insert(args.end(), extra.begin(), extra.end());
        const std::string tmp = dir / "tmp";
        return run(args, {}, [tmp] { ::setenv("TMPDIR", tmp.c_str(), 1); });
    }
};

bool is_symlink(const std::string& p) {
    struct stat st;
    return ::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

TEST_F(BenchOutputs, APlantedSymlinkAtThePredictableTemporaryNameIsNotFollowed) {
    // Another user plants a link where the temporary used to be created.
    write_file(dir / "victim", "precious\n");
    for (const char* name : {"out.json.tmp-uringkit", ".out.json.uringkit-XXXXXX"})
        ASSERT_EQ(::symlink((dir / "victim").c_str(), (dir / name).c_str()), 0);
    const Child r = bench({"--json", dir / "out.json"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(dir / "victim"), "precious\n") << "the planted link was written through";
    EXPECT_TRUE(is_symlink(dir / "out.json.tmp-uringkit")) << "the planted link was renamed";
    EXPECT_FALSE(is_symlink(dir / "out.json"));
    const auto doc = nlohmann::json::parse(read_file(dir / "out.json"));
    EXPECT_EQ(doc["rows"].size(), 1u);
    // Only the planted name is left: the temporary was renamed into place.
    std::vector<std::string> left;
    for (const auto& e : stdfs::directory_iterator(dir.dir))
        if (e.path().filename().string().find(".uringkit-") != std::string::npos &&
            e.path().filename() != ".out.json.uringkit-XXXXXX")
            left.push_back(e.path().string());
    EXPECT_TRUE(left.empty()) << left.front();
}

TEST_F(BenchOutputs, DashIsStandardOutputForJsonAndCsv) {
    const Child j = bench({"--json", "-"});
    ASSERT_EQ(j.status, 0) << j.err;
    const auto doc = nlohmann::json::parse(j.out);  // stdout is JSON only
    ASSERT_EQ(doc["rows"].size(), 1u);
    EXPECT_EQ(doc["rows"][0]["engine"], "pread");
    EXPECT_NE(j.err.find("uringkit bench: 4 KiB randread"), std::string::npos)
        << "the header and table go to stderr:\n"
        << j.err;
    EXPECT_FALSE(stdfs::exists("-"));

    const Child c = bench({"--csv", "-"});
    ASSERT_EQ(c.status, 0) << c.err;
    EXPECT_EQ(c.out.rfind("engine,iodepth,batch,status,", 0), 0u) << c.out;
    EXPECT_EQ(count(c.out, "\n"), 2u) << "a header and one row:\n" << c.out;
    EXPECT_EQ(count(c.out, "\npread,4,4,ok,"), 1u) << c.out;

    const Child both = bench({"--csv", "-", "--json", "-"});
    EXPECT_EQ(both.status, 2);
    EXPECT_NE(both.err.find("already writes to standard output"), std::string::npos) << both.err;
    EXPECT_EQ(both.out, "");
}

TEST_F(BenchOutputs, ASymlinkToAFifoIsWrittenInPlaceNotReplaced) {
    const std::string fifo = dir / "fifo", link = dir / "stdout-like";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    ASSERT_EQ(::symlink(fifo.c_str(), link.c_str()), 0);
    std::string got;
    std::thread reader([&] {
        const int fd = ::open(fifo.c_str(), O_RDONLY);  // waits for bench's writer
        char buf[4096];
        for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
            got.append(buf, static_cast<std::size_t>(n));
        ::close(fd);
    });
    const Child r = bench({"--csv", link});
    if (r.status != 0) {  // unblock the reader before failing
        const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
        if (fd >= 0) ::close(fd);
    }
    reader.join();
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(is_symlink(link)) << "the symlink was replaced";
    struct stat st;
    ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
    EXPECT_EQ(got.rfind("engine,iodepth,batch,status,", 0), 0u) << got;
    EXPECT_EQ(count(got, "\npread,4,4,ok,"), 1u) << got;
}

TEST_F(BenchOutputs, ASymlinkToDevNullSurvives) {
    // /dev/stdout is such a link; as root a rename would replace it.
    const std::string link = dir / "null";
    ASSERT_EQ(::symlink("/dev/null", link.c_str()), 0);
    const Child r = bench({"--json", link, "--csv", link, "--plot", link});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(is_symlink(link));
    EXPECT_EQ(stdfs::read_symlink(link), "/dev/null");
    struct stat st;
    ASSERT_EQ(::stat("/dev/null", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null is still a device";
    EXPECT_TRUE(temporaries(dir.dir).empty());
}

TEST_F(BenchOutputs, AnOutputThatIsTheInputIsRefusedBeforeAnythingRuns) {
    const std::string data = dir / "data.bin", alias = dir / "alias", hard = dir / "hard";
    const std::string bytes = random_bytes(1 << 20, 7);
    write_file(data, bytes);
    ASSERT_EQ(::symlink(data.c_str(), alias.c_str()), 0);
    ASSERT_EQ(::link(data.c_str(), hard.c_str()), 0);
    for (const auto& [opt, out] : std::vector<std::pair<std::string, std::string>>{
             {"--json", data}, {"--csv", alias}, {"--plot", hard}}) {
        const Child r = run({URINGKIT_CLI, "bench", "--filename", data, "--ios", "100", "--ramp",
                             "0", "--engines", "pread", opt, out});
        EXPECT_EQ(r.status, 2) << opt << " " << out << ": " << r.err;
        EXPECT_NE(r.err.find(opt + " " + out + ": is the input file"), std::string::npos) << r.err;
        EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
        EXPECT_EQ(r.out, "") << "nothing ran";
        EXPECT_EQ(read_file(data), bytes) << "the input was overwritten";
    }
}

// The README's rule for destinations: permission refused is 1 (as cp says
// "Permission denied"), a directory that does not exist is 4; both are found
// before the run, and nothing is left behind.
TEST_F(BenchOutputs, PermissionRefusedIsOneMissingDirectoryIsFour) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to drop to nobody";
    ASSERT_EQ(::chmod(dir.dir.c_str(), 0755), 0);
    ASSERT_EQ(::chmod((dir / "tmp").c_str(), 0777), 0);
    const std::string tmp = dir / "tmp";
    const auto as_nobody = [tmp] {
        ::setenv("TMPDIR", tmp.c_str(), 1);
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(126);
    };
    const std::vector<std::string> quick = {URINGKIT_CLI, "bench", "--size",    "1m",
                                            "--ios",      "100",   "--ramp",    "0",
                                            "--rounds",   "1",     "--engines", "pread"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = quick;
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    };
    const Child refused = run(with({"--json", dir / "out.json"}), {}, as_nobody);
    EXPECT_EQ(refused.status, 1) << refused.err;
    EXPECT_NE(refused.err.find("out.json: cannot write the output there: Permission denied"),
              std::string::npos)
        << refused.err;
    EXPECT_EQ(refused.out, "") << "refused before the run";
    const Child missing = run(with({"--csv", dir / "no/such/out.csv"}), {}, as_nobody);
    EXPECT_EQ(missing.status, 4) << missing.err;
    EXPECT_EQ(missing.out, "");
    EXPECT_TRUE(stdfs::is_empty(dir / "tmp"));
    EXPECT_FALSE(stdfs::exists(dir / "out.json"));
}

}  // namespace
