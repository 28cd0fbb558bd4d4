// `uringkit readfiles` interrupted by SIGINT or SIGTERM while it reads a huge
// file: the lines of the files it finished are printed, in order, and it
// ends by the signal (the parent's wait status names it, as with GNU tools).
#include "files_test_support.hpp"

#include <signal.h>
#include <unistd.h>

namespace {

using namespace files_test;

TEST(ReadFilesInterrupt, PrintsWhatWasReadInOrderThenEndsByTheSignal) {
    Scratch s;
    stdfs::create_directories(s.dir / "t");
    std::vector<std::string> small;
    for (int i = 0; i < 300; ++i) {
        small.push_back(s / ("t/f" + std::to_string(1000 + i)));
        write_file(small.back(),
                   random_bytes(static_cast<std::size_t>(i) * 37, static_cast<unsigned>(i)));
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
            // The signal comes once it has run 0.7 s, inside the huge file
            // (the assertions do not depend on how far it got).
            const Child e = run({URINGKIT_CLI, "readfiles", "--engine", engine, s / "t"}, {}, {},
                                [sig](pid_t pid) {
                                    ::usleep(700 * 1000);
                                    ::kill(pid, sig);
                                });
            EXPECT_EQ(e.signal, sig) << engine << ": exit " << e.status << ", " << e.err;
            EXPECT_EQ(e.out, ref.out)
                << engine << ": every finished line, in order, nothing of the huge file";
            EXPECT_NE(
                e.err.find(std::string("interrupted by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM")),
                std::string::npos)
                << e.err;
        }
}

}  // namespace
