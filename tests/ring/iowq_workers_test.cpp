// Ring::set_iowq_max_workers (IORING_REGISTER_IOWQ_MAX_WORKERS, 5.15): the
// kernel hands back the previous limits, and a blocked request beyond the
// limit waits for a worker instead of getting a thread of its own.  Opening
// a FIFO for reading blocks until a writer comes, and opens are "bounded"
// io-wq work, the kind cp limits; each blocked open holds one worker, seen
// as one of this process's threads named iou-wrk-*.  io-wq belongs to a
// thread, not to a ring, so each case runs on a new thread.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/sys/error.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace {

using namespace uringkit;
using namespace uringkit::testing;

// The io-wq threads serving the calling thread: the kernel names them
// iou-wrk-<its tid>, which keeps another thread's workers (still exiting
// from an earlier case, say) out of the count.
unsigned io_workers() {
    const std::string mine = "iou-wrk-" + std::to_string(::gettid());
    unsigned n = 0;
    DIR* d = ::opendir("/proc/self/task");
    if (!d) return 0;
    while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
        std::string name;
        std::getline(comm, name);
        n += name == mine;
    }
    ::closedir(d);
    return n;
}

// Blocks `n` FIFO opens on io-wq under a bounded limit of `limit` (0: the
// default) and returns the most workers seen while they wait.
unsigned workers_for_blocked_opens(unsigned n, unsigned limit) {
    unsigned most = 0;
    std::thread t([&] {
        char dir[] = "/tmp/uringkit-iowq-XXXXXX";
        ASSERT_NE(::mkdtemp(dir), nullptr);
        std::vector<std::string> fifos;
        for (unsigned i = 0; i < n; ++i) {
            fifos.push_back(std::string(dir) + "/f" + std::to_string(i));
            ASSERT_EQ(::mkfifo(fifos.back().c_str(), 0600), 0);
        }
        Ring ring(16);
        if (limit) ring.set_iowq_max_workers(limit, 0);
        for (unsigned i = 0; i < n; ++i)
            // IOSQE_ASYNC: the inline attempt would add O_NONBLOCK, which
            // opens a FIFO at once.
            ring.prepare(op::OpenAt(AT_FDCWD, fifos[i].c_str(), O_RDONLY)).user_data(i).async();
        ASSERT_EQ(ring.submit(), static_cast<int>(n));
        // Workers start asynchronously; give them time to appear.
        for (int ms = 0; ms < 300; ms += 10) {
            most = std::max(most, io_workers());
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        std::vector<UniqueFd> writers;  // O_RDWR never blocks, and lets each reader's open finish
        for (const std::string& f : fifos) writers.emplace_back(::open(f.c_str(), O_RDWR));
        for (const Completion& c : reap(ring, n)) {
            EXPECT_GE(c.res, 0) << c.user_data;
            if (c.res >= 0) ::close(c.res);
        }
        for (const std::string& f : fifos) ::unlink(f.c_str());
        ::rmdir(dir);
    });
    t.join();
    return most;
}

TEST(IowqWorkers, ReturnsThePreviousLimits) {
    std::thread t([] {
        Ring ring(8);
        try {
            ring.set_iowq_max_workers(3, 5);
        } catch (const RingError& e) {
            if (e.code() == std::errc::invalid_argument)
                GTEST_SKIP() << "needs Linux 5.15: " << e.what();
            throw;
        }
        const auto now = ring.set_iowq_max_workers(0, 0);  // 0, 0: only read them back
        EXPECT_EQ(now[0], 3u);
        EXPECT_EQ(now[1], 5u);
        const auto before = ring.set_iowq_max_workers(1, 0);
        EXPECT_EQ(before[0], 3u);
        EXPECT_EQ(before[1], 5u);
        EXPECT_EQ(ring.set_iowq_max_workers(0, 0)[0], 1u);
    });
    t.join();
}

TEST(IowqWorkers, BlockedRequestsBeyondTheLimitWaitForAWorker) {
    const unsigned free_run = workers_for_blocked_opens(4, 0);
    if (free_run < 4)
        GTEST_SKIP() << "saw " << free_run << " io-wq threads for 4 blocked opens without a limit";
    EXPECT_EQ(workers_for_blocked_opens(4, 1), 1u);
    EXPECT_EQ(workers_for_blocked_opens(4, 2), 2u);
}

}  // namespace
