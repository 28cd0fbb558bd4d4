// The fixture of bench's command-line tests: `uringkit bench` run in a
// child with a fresh TMPDIR, its output drained, its status decoded.
#pragma once

#include "diagnostics.hpp"
#include "tools/forbid_uring.hpp"
#include "tools/refuse_o_direct.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <dirent.h>
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace bench_cli {

struct Result {
    int status = -1;
    std::string out, err;
};

// A fresh TMPDIR per test, so "nothing left behind" can be checked exactly.
class BenchCli : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/uringkit-bench-cli-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        tmp_ = dir_ / "tmp";
        fs::create_directory(tmp_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    // Runs the CLI with `args`; `in_child` runs after fork, before exec (to
    // set a limit or a seccomp filter); `on_start` gets the child's pid and
    // its stdout fd while it runs.
    Result run(std::vector<std::string> args, const std::function<void()>& in_child = {},
               const std::function<void(pid_t, int)>& on_start = {}) {
        args.insert(args.begin(), {URINGKIT_CLI, "bench"});
        int out[2], err[2];
        EXPECT_EQ(::pipe(out), 0);
        EXPECT_EQ(::pipe(err), 0);
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::dup2(out[1], 1);
            ::dup2(err[1], 2);
            ::close(out[0]);
            ::close(err[0]);
            ::setenv("TMPDIR", tmp_.c_str(), 1);
            if (in_child) in_child();
            std::vector<char*> argv;
            for (std::string& a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
        ::close(out[1]);
        ::close(err[1]);
        Result r;
        if (on_start) on_start(pid, out[0]);
        drain(out[0], r.out, err[0], r.err);
        int st = 0;
        ::waitpid(pid, &st, 0);
        r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return r;
    }
    static void drain(int a, std::string& sa, int b, std::string& sb) {
        pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
        int open = 2;
        char buf[4096];
        while (open > 0 && ::poll(p, 2, -1) > 0) {
            for (int i = 0; i < 2; ++i) {
                if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP))) continue;
                const ssize_t n = ::read(p[i].fd, buf, sizeof buf);
                if (n <= 0) {
                    ::close(p[i].fd);
                    p[i].fd = -1;
                    --open;
                } else {
                    (i == 0 ? sa : sb).append(buf, static_cast<std::size_t>(n));
                }
            }
        }
    }
    bool tmp_empty() const { return fs::is_empty(tmp_); }
    std::string path(const char* name) const { return (dir_ / name).string(); }
    void make_file(const char* name, std::size_t bytes) const {
        std::ofstream f(path(name), std::ios::binary);
        std::string data(bytes, 'x');
        f << data;
    }
    // One line on stderr, naming the problem.
    static void one_line(const Result& r, const std::string& needle) {
        EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
        EXPECT_EQ(diagnostic_lines(r.err), 1u) << r.err;
        EXPECT_EQ(r.out, "") << "nothing printed on stdout for bad input";
    }

    fs::path dir_, tmp_;
};

// Small and quick: a 4 MiB temporary file, a fixed number of I/Os, one round.
const std::vector<std::string> kQuick = {"--size", "4m", "--ios",    "2000",
                                         "--ramp", "0",  "--rounds", "1"};
// As kQuick, with the rounds left to the caller.
const std::vector<std::string> kQuickRounds = {"--size", "4m", "--ios", "2000", "--ramp", "0"};
// The same on a file of the test's own (--size beyond it is refused).
const std::vector<std::string> kQuickOnFile = {"--ios", "2000", "--ramp", "0", "--rounds", "1"};

inline std::vector<std::string> with(std::vector<std::string> a,
                                     const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

}  // namespace bench_cli
