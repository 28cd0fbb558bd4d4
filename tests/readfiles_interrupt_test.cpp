// `uringkit readfiles` interrupted by SIGINT or SIGTERM while it reads a huge
// file: the lines of the files it finished are printed, in order, and it
// ends by the signal (the parent's wait status names it, as with GNU tools).
#include "files_test_support.hpp"

#include <signal.h>

namespace {

using namespace files_test;

struct Ended {
    int signal = 0;  // the signal that ended it, or 0
    int status = -1;
    std::string out, err;
};

// Runs the CLI with stdout and stderr on pipes and sends `sig` once it has
// been running for `after_ms` (long enough to be inside the huge file; the
// assertions do not depend on how far it got).
Ended run_and_signal(std::vector<std::string> args, int sig, int after_ms) {
    int out[2], err[2];
    if (::pipe(out) || ::pipe(err)) throw std::runtime_error("pipe");
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
        std::vector<char*> argv;
        for (std::string& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    ::usleep(static_cast<useconds_t>(after_ms) * 1000);
    ::kill(pid, sig);
    Ended e;
    pollfd p[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    int open = 2;
    char buf[65536];
    while (open > 0 && ::poll(p, 2, -1) > 0)
        for (int i = 0; i < 2; ++i) {
            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP))) continue;
            const ssize_t n = ::read(p[i].fd, buf, sizeof buf);
            if (n <= 0) {
                ::close(p[i].fd);
                p[i].fd = -1;
                --open;
            } else {
                (i == 0 ? e.out : e.err).append(buf, static_cast<std::size_t>(n));
            }
        }
    int st = 0;
    ::waitpid(pid, &st, 0);
    if (WIFSIGNALED(st)) e.signal = WTERMSIG(st);
    if (WIFEXITED(st)) e.status = WEXITSTATUS(st);
    return e;
}

TEST(ReadFilesInterrupt, PrintsWhatWasReadInOrderThenEndsByTheSignal) {
    Scratch s;
    stdfs::create_directories(s.dir / "t");
    std::vector<std::string> small;
    for (int i = 0; i < 300; ++i) {
        small.push_back(s / ("t/f" + std::to_string(1000 + i)));
        write_file(small.back(), random_bytes(static_cast<std::size_t>(i) * 37, static_cast<unsigned>(i)));
    }
    {
        // Last in walk order, and 64 GiB of holes: tens of seconds to read.
        const int fd = ::open((s / "t/zz-huge").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ASSERT_GE(fd, 0);
        if (::ftruncate(fd, 64ll << 30) != 0) GTEST_SKIP() << "no 64 GiB sparse file here";
        ::close(fd);
    }
    std::vector<std::string> ref_args{URINGKIT_CLI, "readfiles"};
    ref_args.insert(ref_args.end(), small.begin(), small.end());
    const Child ref = run(ref_args);
    ASSERT_EQ(ref.status, 0) << ref.err;
    ASSERT_EQ(count(ref.out, "\n"), small.size());

    for (const char* engine : {"ring", "sync", "threadpool"})
        for (int sig : {SIGINT, SIGTERM}) {
            const Ended e =
                run_and_signal({URINGKIT_CLI, "readfiles", "--engine", engine, s / "t"}, sig, 700);
            EXPECT_EQ(e.signal, sig) << engine << ": exit " << e.status << ", " << e.err;
            EXPECT_EQ(e.out, ref.out) << engine << ": every finished line, in order, nothing of the huge file";
            EXPECT_NE(e.err.find(std::string("interrupted by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM")),
                      std::string::npos)
                << e.err;
        }
}

}  // namespace
