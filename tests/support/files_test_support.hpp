// Helpers for the cp_* and readfiles_* tests: a scratch directory, files with
// known bytes, and running the CLI as a child process with stdin, stdout,
// stderr and a hook that runs after fork (setrlimit, unshare, ...).
#pragma once

#include "uringkit/sys/page_cache.hpp"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace files_test {

namespace stdfs = std::filesystem;

struct Scratch {
    Scratch() {
        char tmpl[] = "/tmp/uringkit-files-XXXXXX";
        if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp");
        dir = tmpl;
    }
    ~Scratch() {
        std::error_code ec;
        stdfs::remove_all(dir, ec);
    }
    std::string operator/(const std::string& name) const { return (dir / name).string(); }
    stdfs::path dir;
};

inline std::string random_bytes(std::size_t n, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    return s;
}

inline void write_file(const std::string& path, const std::string& data) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
    ASSERT_TRUE(f.good()) << path;
}

inline std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

// Drops `path` from the page cache, as after a reboot or a drop_caches.
// False when the file system keeps the pages anyway (tmpfs: they are the
// file), so the caller can skip.
inline bool evict_from_page_cache(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) return false;
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    struct stat st {};
    uringkit::sys::PageCacheStat pc;
    const bool cold =
        ::fstat(fd, &st) == 0 &&
        uringkit::sys::page_cache_stat(fd, 0, static_cast<std::uint64_t>(st.st_size), pc) == 0 &&
        pc.cached * 2 < pc.pages;
    ::close(fd);
    return cold;
}

// Names in `dir` that start with `.` and contain ".uringkit-": temporaries.
inline std::vector<std::string> temporaries(const stdfs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : stdfs::recursive_directory_iterator(dir))
        if (e.path().filename().string().find(".uringkit-") != std::string::npos)
            out.push_back(e.path().string());
    return out;
}

struct Child {
    int status = -1;  // exit status, or 128 + the signal that ended it
    int signal = 0;   // the signal that ended it, or 0 when it exited
    std::string out, err;
};

// `on_start` runs in the parent once the child runs (to signal it), while
// its output is still unread.
inline Child run(std::vector<std::string> args, const std::string& input = {},
                 const std::function<void()>& in_child = {},
                 const std::function<void(pid_t)>& on_start = {}) {
    int in[2], out[2], err[2];
    if (::pipe(in) || ::pipe(out) || ::pipe(err)) throw std::runtime_error("pipe");
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
        if (in_child) in_child();
        std::vector<char*> argv;
        for (std::string& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execvp(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    if (!input.empty()) {
        const ssize_t n = ::write(in[1], input.data(), input.size());
        (void)n;
    }
    ::close(in[1]);
    if (on_start) on_start(pid);
    Child r;
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
                (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(n));
            }
        }
    int st = 0;
    ::waitpid(pid, &st, 0);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (WIFSIGNALED(st)) r.signal = WTERMSIG(st);
    return r;
}

// For a forked child of a test that runs as root: becomes the user nobody
// (no supplementary groups), so permission checks apply as to anyone.
// Exits 99 when it cannot.
constexpr uid_t kNobody = 65534;
inline void become_nobody() {
    if (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0)
        ::_exit(99);
}

// A child process left running (its stderr readable), for tests that
// signal it or change its input while it works.
struct Spawned {
    pid_t pid = -1;
    int err = -1;  // read end of its stderr
};

inline Spawned spawn(std::vector<std::string> args) {
    int err[2];
    if (::pipe(err) != 0) throw std::runtime_error("pipe");
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(err[1], 2);
        ::close(err[0]);
        ::close(err[1]);
        std::vector<char*> argv;
        for (std::string& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execvp(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(err[1]);
    return {pid, err[0]};
}

inline std::string drain_fd(int fd) {
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
        out.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    return out;
}

// Waits (up to 30 s, polling) until `ready()`; false if it never was.
template <class F>
inline bool wait_until(F ready) {
    for (int i = 0; i < 3000; ++i) {
        if (ready()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

// The first child of `pid` (strace's tracee).
inline pid_t child_of(pid_t pid) {
    const std::string children =
        read_file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
    return children.empty() ? -1 : static_cast<pid_t>(std::stol(children));
}

// LeakSanitizer stops the process's threads with ptrace at exit, which
// cannot work under strace: it prints a line of its own and tells nothing.
// Children run under strace by a test inherit detect_leaks=0 (the rest of
// ASAN_OPTIONS is kept).
inline void no_leak_check_in_traced_children() {
    const char* now = ::getenv("ASAN_OPTIONS");
    std::string opts = now && *now ? std::string(now) + ":detect_leaks=0" : "detect_leaks=0";
    ::setenv("ASAN_OPTIONS", opts.c_str(), 1);
}

#ifdef URINGKIT_CLI
// uringkit cp ARGS...
inline std::vector<std::string> cp(std::initializer_list<std::string> a) {
    std::vector<std::string> v{URINGKIT_CLI, "cp"};
    v.insert(v.end(), a);
    return v;
}
// uringkit readfiles ARGS... MORE...
inline std::vector<std::string> readfiles(std::initializer_list<std::string> a,
                                          const std::vector<std::string>& more = {}) {
    std::vector<std::string> v{URINGKIT_CLI, "readfiles"};
    v.insert(v.end(), a);
    v.insert(v.end(), more.begin(), more.end());
    return v;
}
#endif

inline bool have_program(const char* name) {
    return run({"sh", "-c", std::string("command -v ") + name}).status == 0;
}

inline std::size_t count(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1))
        ++n;
    return n;
}

}  // namespace files_test
