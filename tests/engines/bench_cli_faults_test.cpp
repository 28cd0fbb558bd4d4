// `uringkit bench` when things go wrong: bad input gets one line and its
// exit status and leaves nothing behind; io_uring forbidden by seccomp
// gives `unavailable` rows while the others run; Ctrl-C prints what was
// measured and removes the temporary file.
#include "bench_cli_fixture.hpp"

namespace {

using namespace bench_cli;

// Registered buffers count against RLIMIT_MEMLOCK on every kernel: with
// CAP_IPC_LOCK gone (bounding set, so exec cannot give it back) and 64 KiB
// allowed, uring-reg's 128 KiB of buffers (32 x 4 KiB) are refused, and the
// row says what was asked for and the limit, not a pre-5.12 story.
TEST_F(BenchCli, RegisteredBuffersOverMemlockNameTheFigureAndTheLimit) {
    const std::string json = path("reg.json");
    const Result r =
        run(with(kQuick, {"--engines", "pread,uring-reg", "--iodepth", "32", "--json", json}), [] {
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
    if (reason.find("ENOMEM") == std::string::npos &&
        reason.find("io_uring_setup") != std::string::npos)
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
        [] {
            forbid_io_uring(EPERM, true);
        });  // io_uring_setup fails with EPERM, as under no_uring
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
    const Result r = run(with(
        kQuickOnFile, {"--filename", path("mine"), "--rw", "randwrite", "--engines", "pread"}));
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
