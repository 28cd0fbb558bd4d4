// A real trace: this test program re-runs itself under strace (the command
// docs/replay.md gives) as a small workload that opens a file and preads and
// pwrites at known offsets from two threads, then checks that the reader
// finds exactly that, thread by thread.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "replay/trace.hpp"

using namespace uringkit::replay;

namespace {

constexpr const char* child_env = "URINGKIT_REPLAY_CHILD";

// The traced workload.  Offsets and sizes are distinct so each event can
// only match one call.
void workload(const char* path) {
    const int fd = ::open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) _exit(10);
    static char buf[16384];
    if (::write(fd, buf, sizeof buf) != static_cast<ssize_t>(sizeof buf)) _exit(11);
    std::thread a([fd] {
        char b[4096];
        if (::pread(fd, b, 4096, 4096) != 4096 || ::pwrite(fd, b, 512, 12288) != 512) _exit(12);
    });
    std::thread b([fd] {
        char c[4096];
        if (::pread(fd, c, 4096, 8192) != 4096 || ::pwrite(fd, c, 100, 0) != 100) _exit(13);
    });
    a.join();
    b.join();
    if (::lseek(fd, 0, SEEK_END) != 16384 || ::write(fd, buf, 8) != 8) _exit(14);
    ::close(fd);
}

// Runs before main() in the traced copy, so gtest never starts there.
const bool ran_as_child = [] {
    if (const char* p = std::getenv(child_env)) {
        workload(p);
        _exit(0);
    }
    return false;
}();

struct StraceRun {
    int status = -1;
    std::string err;
};

StraceRun run_strace(const std::string& trace, const std::string& file,
                     const std::string& errfile) {
    // Resolved here: inside strace, /proc/self/exe would be strace itself.
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::setenv(child_env, file.c_str(), 1);
        const int e = ::open(errfile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (e >= 0) ::dup2(e, 2);
        ::execlp(
            "strace", "strace", "-f", "-ttt", "-T", "-o", trace.c_str(), "-e",
            "trace=openat,open,creat,close,close_range,dup,dup2,dup3,fcntl,clone,clone3,fork,vfork,"
            "read,write,pread64,pwrite64,readv,writev,preadv,pwritev,preadv2,pwritev2,lseek,fsync,"
            "fdatasync,ftruncate,fallocate",
            self.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    StraceRun r;
    ::waitpid(pid, &r.status, 0);
    std::ifstream in(errfile);
    std::stringstream ss;
    ss << in.rdbuf();
    r.err = ss.str();
    return r;
}

std::string describe_event(const Event& e) {
    return std::string(op_name(e.op)) + " " + std::to_string(e.offset) + " " +
           std::to_string(e.length) + " " + std::to_string(e.result);
}

}  // namespace

TEST(ReplayStraceLive, TwoThreadsPreadAndPwriteWhereTheProgramDid) {
    ASSERT_FALSE(ran_as_child);
    char dir_template[] = "/tmp/uringkit-replay-XXXXXX";
    ASSERT_NE(::mkdtemp(dir_template), nullptr);
    const std::filesystem::path dir(dir_template);
    const std::string file = (dir / "data.bin").string(), trace = (dir / "trace.txt").string();
    const StraceRun run = run_strace(trace, file, (dir / "strace.err").string());
    if (WIFEXITED(run.status) && WEXITSTATUS(run.status) == 127) {
        std::filesystem::remove_all(dir);
        GTEST_SKIP() << "strace is not installed (Debian: strace)";
    }
    if (run.err.find("ptrace") != std::string::npos ||
        run.err.find("Operation not permitted") != std::string::npos) {
        std::filesystem::remove_all(dir);
        GTEST_SKIP() << "strace cannot trace here (ptrace refused): " << run.err;
    }
    ASSERT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0)
        << "status " << run.status << ": " << run.err;

    auto reader = TraceReader::open(trace);
    std::map<std::uint32_t, std::vector<Event>> by_thread;
    std::optional<std::uint32_t> index;
    while (auto e = reader.next()) {
        if (reader.files().at(e->file) != file) continue;  // the loader's and libraries' own reads
        index = e->file;
        by_thread[e->thread].push_back(*e);
        EXPECT_TRUE(e->time_ns.has_value());
        EXPECT_TRUE(e->duration_ns.has_value());
    }
    std::filesystem::remove_all(dir);
    ASSERT_TRUE(index) << "no event on " << file;
    ASSERT_EQ(by_thread.size(), 3u) << "the main thread and two workers";

    std::vector<std::string> main_thread;
    std::vector<std::vector<std::string>> workers;
    for (const auto& [tid, events] : by_thread) {
        std::vector<std::string> seq;
        for (const auto& e : events) seq.push_back(describe_event(e));
        if (events.front().op == Op::open) {
            EXPECT_EQ(events.front().flags, static_cast<std::uint32_t>(O_RDWR | O_CREAT | O_TRUNC));
            main_thread = seq;
        } else {
            workers.push_back(seq);
        }
    }
    // The open's result is the descriptor, whatever number the process got.
    ASSERT_FALSE(main_thread.empty());
    main_thread.front() = "open";
    EXPECT_EQ(main_thread, (std::vector<std::string>{"open", "write 0 16384 16384",
                                                     "write 16384 8 8",  // after lseek(SEEK_END)
                                                     "close 0 0 0"}));
    std::sort(workers.begin(), workers.end());
    EXPECT_EQ(workers, (std::vector<std::vector<std::string>>{
                           {"read 4096 4096 4096", "write 12288 512 512"},
                           {"read 8192 4096 4096", "write 0 100 100"},
                       }));
    const Summary& s = reader.summary();
    EXPECT_EQ(s.skipped[static_cast<std::size_t>(SkipReason::malformed)], 0u);
    EXPECT_EQ(s.skipped[static_cast<std::size_t>(SkipReason::orphan_resume)], 0u);
    EXPECT_EQ(s.skipped[static_cast<std::size_t>(SkipReason::unfinished)], 0u);
    EXPECT_EQ(reader.state().pending, 0u);
}
