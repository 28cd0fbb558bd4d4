// `uringkit load` as a process: bad input gets one clear line and its
// documented status (2: another scheme, port 0, --connections 0, more
// threads than connections; 4: nothing accepts connections at the target),
// and a run against `uringkit serve` prints its table and a JSON document
// whose counts add up.
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include "diagnostics.hpp"
#include "load_test_support.hpp"
#include "net/server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

using namespace load_test;
using namespace std::chrono_literals;

namespace {

struct Outcome {
    int status = -1;
    std::string out, err;
};

// Runs the CLI with `args`, 60 s at most.
Outcome run_cli(const std::vector<std::string>& args) {
    int o[2], e[2];
    if (::pipe2(o, O_CLOEXEC) < 0 || ::pipe2(e, O_CLOEXEC) < 0) throw std::runtime_error("pipe");
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(o[1], 1);
        ::dup2(e[1], 2);
        std::vector<char*> argv{const_cast<char*>(URINGKIT_CLI), const_cast<char*>("load")};
        for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        ::execv(URINGKIT_CLI, argv.data());
        ::_exit(127);
    }
    ::close(o[1]);
    ::close(e[1]);
    Outcome r;
    pollfd p[2] = {{o[0], POLLIN, 0}, {e[0], POLLIN, 0}};
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    int open = 2;
    while (open > 0 && std::chrono::steady_clock::now() < deadline) {
        if (::poll(p, 2, 100) <= 0) continue;
        for (int i = 0; i < 2; ++i) {
            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP))) continue;
            char buf[4096];
            const ssize_t n = ::read(p[i].fd, buf, sizeof buf);
            if (n > 0) {
                (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(n));
            } else {
                ::close(p[i].fd);
                p[i].fd = -1;
                --open;
            }
        }
    }
    if (open > 0) ::kill(pid, SIGKILL);
    for (auto& f : p)
        if (f.fd >= 0) ::close(f.fd);
    int status = 0;
    ::waitpid(pid, &status, 0);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

// A port on which nothing listens: bound, never listened on, so nobody else
// takes it while the test runs.
struct UnusedPort {
    int fd;
    std::uint16_t port = 0;
    UnusedPort() {
        fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        ::bind(fd, reinterpret_cast<sockaddr*>(&a), len);
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
        port = ntohs(a.sin_port);
    }
    ~UnusedPort() { ::close(fd); }
};

void expect_usage(const std::vector<std::string>& args, const std::string& says) {
    const Outcome r = run_cli(args);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_EQ(diagnostic_lines(r.err), 1u) << "one line: " << r.err;
    EXPECT_EQ(r.out, "");
}

TEST(LoadCli, BadInputIsAUsageError) {
    expect_usage({"127.0.0.1:0"}, "port 0");
    expect_usage({"https://127.0.0.1:8443/"}, "scheme 'https' is not supported");
    expect_usage({"--connections", "0", "127.0.0.1:8080"}, "--connections 0");
    expect_usage({"--threads", "4", "--connections", "2", "127.0.0.1:8080"}, "--threads 4");
    expect_usage({"127.0.0.1"}, "no port");
    expect_usage({"::1:8080"}, "brackets");
    expect_usage({"--duration", "0", "127.0.0.1:8080"}, "--duration 0");
    expect_usage({"--mode", "echo", "http://127.0.0.1:8080/"}, "HOST:PORT, not a URL");
    expect_usage({"--pipeline", "0", "127.0.0.1:8080"}, "--pipeline 0");
    expect_usage({"--size", "0", "127.0.0.1:8080"}, "--size 0");
    // wrk's -H: a malformed field is refused naming the text given.
    expect_usage({"-H", "NoColon", "127.0.0.1:8080"}, "-H 'NoColon': no ':'");
    expect_usage({"-H", ": value", "127.0.0.1:8080"}, "-H ': value': no field name");
    expect_usage({"-H", "X-A: 1\r\nX-B: 2", "127.0.0.1:8080"},
                 "-H 'X-A: 1\\r\\nX-B: 2': a header field may not hold CR, LF or NUL");
    expect_usage({"--header", "Bad Name: 1", "127.0.0.1:8080"},
                 "the field name 'Bad Name' holds ' '");
    expect_usage({"-H", "Content-Length: 3", "127.0.0.1:8080"}, "sets Content-Length from --body");
    expect_usage({"-H", "X: 1", "--mode", "echo", "127.0.0.1:8080"},
                 "-H: an option of HTTP requests");
    expect_usage({"-m", "GE T", "127.0.0.1:8080"}, "-m 'GE T': not a method token");
    expect_usage({"--method", "CONNECT", "127.0.0.1:8080"}, "--method CONNECT");
    expect_usage({"-b", "@/nonexistent/body", "127.0.0.1:8080"},
                 "-b @/nonexistent/body: cannot open: No such file or directory");
    expect_usage({"--body", "@/dev/null", "127.0.0.1:8080"},
                 "--body @/dev/null: not a regular file");
    expect_usage({"--timeout", "0", "127.0.0.1:8080"}, "--timeout 0");
    expect_usage({"-R", "-5", "127.0.0.1:8080"}, "-R -5: give requests per second");
    expect_usage({"--rate", "-5", "127.0.0.1:8080"}, "--rate -5: give requests per second");
    // wrk's -s has no counterpart: refused by name, with what to use instead.
    expect_usage({"-s", "post.lua", "http://127.0.0.1:8080/"},
                 "-s post.lua: wrk's Lua scripts have no counterpart here");
    expect_usage({"--script", "post.lua", "http://127.0.0.1:8080/"}, "-m, -H and -b");
    // --paths FILE and its options.
    expect_usage({"--verify", "/tmp", "http://127.0.0.1:8080/"}, "--verify: an option of --paths");
    expect_usage({"--random-paths", "http://127.0.0.1:8080/"},
                 "--random-paths: an option of --paths");
    expect_usage({"--paths", "/nonexistent/list", "http://127.0.0.1:8080/"},
                 "--paths /nonexistent/list: cannot open: No such file or directory");
    char dir[] = "/tmp/uringkit-load-paths-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    const std::string list = std::string(dir) + "/list", bad = std::string(dir) + "/bad";
    std::ofstream(list) << "# the pages\n/here.txt\n\n/gone.txt\n";
    std::ofstream(bad) << "/ok\nnot/a target\n";
    std::ofstream(std::string(dir) + "/here.txt") << "here\n";
    expect_usage({"--paths", bad, "http://127.0.0.1:8080/"},
                 "--paths " + bad + ": line 2: 'not/a target' is not a target");
    expect_usage({"--paths", list, "--verify", dir, "http://127.0.0.1:8080/"},
                 "--verify " + std::string(dir) + ": " + dir +
                     "/gone.txt: cannot open: No such file or directory");
    expect_usage({"--paths", list, "--mode", "echo", "127.0.0.1:8080"},
                 "--paths: an option of HTTP requests");
    std::filesystem::remove_all(dir);
}

// Every usage error ends with the Try line, and names the token that is
// wrong, including those CLI11 itself finds (an option without its value).
TEST(LoadCli, UsageErrorsNameTheTokenAndEndWithTheTryLine) {
    for (const auto& [args, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"-H", "NoColon", "127.0.0.1:8080"}, "NoColon"},
             {{"--header", "NoColon", "127.0.0.1:8080"}, "--header 'NoColon'"},
             {{"127.0.0.1:8080", "-H"}, "load: -H: 1 required HEADER missing"},
             {{"127.0.0.1:8080", "--header"}, "load: --header: 1 required"},
             {{"--bogus", "127.0.0.1:8080"}, "--bogus"},
             {{"-c", "many", "127.0.0.1:8080"}, "-c = many"},
             {{"-t", "2", "--connections", "many", "127.0.0.1:8080"}, "--connections = many"}}) {
        const Outcome r = run_cli(args);
        EXPECT_EQ(r.status, 2) << r.err;
        EXPECT_EQ(r.err.rfind("uringkit load: ", 0), 0u) << r.err;
        EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
        EXPECT_TRUE(r.err.ends_with("Try 'uringkit load --help' for more information.\n")) << r.err;
    }
}

TEST(LoadCli, NothingListeningIsStatus4) {
    UnusedPort unused;
    const std::string target = "127.0.0.1:" + std::to_string(unused.port);
    const Outcome r = run_cli({target});
    EXPECT_EQ(r.status, 4) << r.err;
    EXPECT_NE(r.err.find("cannot connect to " + target + ": Connection refused"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.out, "");
}

// An existing file as --json is replaced whole through a new file beside it:
// where none can be made (/proc), that is what the line says, not "No such
// file or directory" about a file that is there.  Before the run: status 4.
TEST(LoadCli, JsonWhereNoFileCanBeMadeSaysWhatFailed) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "an ordinary user is refused /proc/version itself (Permission denied)";
    UnusedPort unused;
    const Outcome r =
        run_cli({"--json", "/proc/version", "127.0.0.1:" + std::to_string(unused.port)});
    EXPECT_EQ(r.status, 4) << r.err;
    EXPECT_NE(
        r.err.find(
            "uringkit load: /proc/version: cannot write the output there: it is replaced whole "
            "through a new file beside it, and none can be created in /proc: No such file or "
            "directory"),
        std::string::npos)
        << r.err;
    EXPECT_EQ(diagnostic_lines(r.err), 1u) << r.err;
}

TEST(LoadCli, ARunPrintsTheTableAndJson) {
    net::ServerConfig sc;
    sc.port = 0;
    sc.engine =
        net::uring_unavailable_reason().empty() ? net::EngineKind::Uring : net::EngineKind::Epoll;
    sc.grace = 500ms;
    net::Server server(sc);
    server.start();
    const Outcome r =
        run_cli({"--duration", "300ms", "--connections", "8", "--threads", "2", "--pipeline", "4",
                 "--json", "-", "http://127.0.0.1:" + std::to_string(server.port()) + "/"});
    server.stop();
    server.wait();
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("requests/s"), std::string::npos)
        << r.err;  // the table, on stderr with --json -
    EXPECT_NE(r.err.find("p99.9"), std::string::npos) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["schema"], 2);
    EXPECT_GT(j["requests"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(j["errors"]["total"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(j["connections"].get<unsigned>(), 8u);
    EXPECT_EQ(j["pipeline"].get<unsigned>(), 4u);
    EXPECT_GT(j["syscalls_per_request"].get<double>(), 0.0);
    EXPECT_GT(j["cpu"]["us_per_request"].get<double>(), 0.0);
    EXPECT_LE(j["lat_ns"]["p50"].get<double>(), j["lat_ns"]["p99_9"].get<double>());
    EXPECT_LE(j["lat_ns"]["p99_9"].get<double>(), j["lat_ns"]["max"].get<double>());
    std::uint64_t by_thread = 0;
    for (const auto& t : j["threads_detail"]) by_thread += t["requests"].get<std::uint64_t>();
    EXPECT_EQ(by_thread, j["requests"].get<std::uint64_t>());
    // The server answered at least what the client counted.
    EXPECT_GE(server.stats().requests, j["requests"].get<std::uint64_t>());
}

// The requests one connection of `load` sent, as a server read them: each
// head, with its body when it has a Content-Length.  Answers each with
// `response`.
struct Recorder {
    std::mutex m;
    std::vector<std::string> requests;
    std::string response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    bool answer = true;
    void handle(int fd, const std::atomic<bool>& stop) {
        std::string carry;
        for (;;) {
            if (!read_until(fd, carry, stop, [](const std::string& c) {
                    return c.find("\r\n\r\n") != std::string::npos;
                }))
                return;
            std::size_t end = carry.find("\r\n\r\n") + 4;
            const std::size_t cl = carry.find("Content-Length: ");
            if (cl != std::string::npos && cl < end) {
                end += std::stoul(carry.substr(cl + 16));
                if (!read_until(fd, carry, stop,
                                [end](const std::string& c) { return c.size() >= end; }))
                    return;
            }
            {
                const std::lock_guard<std::mutex> g(m);
                requests.push_back(carry.substr(0, end));
            }
            carry.erase(0, end);
            if (answer && !send_all(fd, response)) return;
        }
    }
};

// wrk's everyday spellings: -c -t -d, --latency, -H (repeated), and -m with
// -b: every request carries the fields and the body, with its Content-Length.
TEST(LoadCli, WrkSpellingsShapeEveryRequest) {
    Recorder rec;
    ScriptedServer server([&](int fd, const std::atomic<bool>& stop) { rec.handle(fd, stop); });
    const std::string port = std::to_string(server.port());
    const Outcome r = run_cli({"-c", "1", "-t", "1", "-d", "300ms", "--latency", "-H",
                               "X-Test: one", "-H", "Accept:  text/plain ", "-m", "POST", "-b",
                               "hello", "--json", "-", "http://127.0.0.1:" + port + "/p"});
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["connections"].get<unsigned>(), 1u);
    EXPECT_EQ(j["threads"].get<unsigned>(), 1u);
    EXPECT_DOUBLE_EQ(j["duration_s"].get<double>(), 0.3);
    EXPECT_GT(j["requests"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(j["errors"]["total"].get<std::uint64_t>(), 0u);
    EXPECT_NE(r.err.find("p99.9"), std::string::npos) << r.err;
    const std::lock_guard<std::mutex> g(rec.m);
    ASSERT_FALSE(rec.requests.empty());
    for (const std::string& q : rec.requests)
        ASSERT_EQ(q, "POST /p HTTP/1.1\r\nHost: 127.0.0.1:" + port +
                         "\r\nX-Test: one\r\nAccept: text/plain\r\nContent-Length: 5\r\n\r\nhello");
}

// A Host field given with -H replaces the one made from the URL; -b @FILE
// sends the file's bytes, whatever they are.
TEST(LoadCli, HostFieldAndBodyFromAFile) {
    char path[] = "/tmp/load-body-XXXXXX";
    const int fd = ::mkstemp(path);
    ASSERT_GE(fd, 0);
    const std::string body("a\0b\r\n\xff", 6);
    ASSERT_EQ(::write(fd, body.data(), body.size()), static_cast<ssize_t>(body.size()));
    ::close(fd);
    Recorder rec;
    ScriptedServer server([&](int s, const std::atomic<bool>& stop) { rec.handle(s, stop); });
    const Outcome r = run_cli({"-c", "1", "-d", "200ms", "-H", "host: example.test", "-b",
                               std::string("@") + path,
                               "http://127.0.0.1:" + std::to_string(server.port()) + "/"});
    ::unlink(path);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::lock_guard<std::mutex> g(rec.m);
    ASSERT_FALSE(rec.requests.empty());
    EXPECT_EQ(rec.requests.front(),
              "GET / HTTP/1.1\r\nhost: example.test\r\nContent-Length: 6\r\n\r\n" + body);
}

// --timeout: a server that reads requests and never answers.  Each
// connection that waits --timeout counts one timeout error (wrk's timeout
// count), is closed, and is opened again.
TEST(LoadCli, TimeoutCountsAndReconnects) {
    Recorder rec;
    rec.answer = false;
    ScriptedServer server([&](int fd, const std::atomic<bool>& stop) { rec.handle(fd, stop); });
    const Outcome r = run_cli({"-c", "1", "-d", "700ms", "--timeout", "100ms", "--json", "-",
                               "http://127.0.0.1:" + std::to_string(server.port()) + "/"});
    EXPECT_EQ(r.status, 1) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_DOUBLE_EQ(j["timeout_s"].get<double>(), 0.1);
    EXPECT_GE(j["errors"]["timeout"].get<std::uint64_t>(), 2u);
    EXPECT_EQ(j["errors"]["total"].get<std::uint64_t>(),
              j["errors"]["timeout"].get<std::uint64_t>());
    EXPECT_GE(j["reconnects"].get<std::uint64_t>(), 1u);
    EXPECT_EQ(j["requests"].get<std::uint64_t>(), 0u);
    // The reachability check, the first connection, then at least one reopened.
    EXPECT_GE(server.accepted(), 3u);
}

net::ServerConfig serve_config(const char* bind = "127.0.0.1") {
    net::ServerConfig sc;
    sc.port = 0;
    sc.bind = bind;
    sc.engine =
        net::uring_unavailable_reason().empty() ? net::EngineKind::Uring : net::EngineKind::Epoll;
    sc.grace = 500ms;
    return sc;
}

// Against `serve`: POST with a body and HEAD (whose responses end with their
// head, though they announce a Content-Length) complete without errors;
// serve answers both, and a name (localhost) resolves to the address serve
// listens on for the same name.
TEST(LoadCli, MethodsAndBodiesAgainstServe) {
    net::Server server(serve_config("localhost"));
    server.start();
    const std::string url = "http://localhost:" + std::to_string(server.port()) + "/";
    for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
             {"-m", "POST", "-b", "x=1&y=2"}, {"--method", "HEAD"}, {"--body", ""}}) {
        std::vector<std::string> args{"-c", "2", "-d", "200ms", "--json", "-"};
        args.insert(args.end(), extra.begin(), extra.end());
        args.push_back(url);
        const Outcome r = run_cli(args);
        ASSERT_EQ(r.status, 0) << extra[0] << ": " << r.err;
        const auto j = nlohmann::json::parse(r.out);
        EXPECT_GT(j["requests"].get<std::uint64_t>(), 0u) << extra[1];
        EXPECT_EQ(j["non_2xx"].get<std::uint64_t>(), 0u) << extra[1];
        EXPECT_EQ(j["errors"]["total"].get<std::uint64_t>(), 0u) << extra[1] << ": " << r.err;
    }
    server.stop();
    server.wait();
}

// -R (wrk2's spelling of --rate): over 2 s at 200 requests/s about 400
// requests are sent; the bounds are loose, counts, not timings.
TEST(LoadCli, RateSpellingHoldsTheRate) {
    net::Server server(serve_config());
    server.start();
    const Outcome r = run_cli({"-R", "200", "-c", "4", "-t", "2", "-d", "2s", "--json", "-",
                               "http://127.0.0.1:" + std::to_string(server.port()) + "/"});
    server.stop();
    server.wait();
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["asked_requests_per_s"].get<double>(), 200.0);
    const auto sent = j["sent"].get<std::uint64_t>();
    EXPECT_GE(sent, 300u);
    EXPECT_LE(sent, 500u);
    EXPECT_EQ(j["errors"]["total"].get<std::uint64_t>(), 0u);
}

// The system calls load reports are the ones the kernel saw: strace counts
// every io_uring_enter of the process from outside.  load counts those of
// the measured interval only, so strace sees those plus the few of the
// connects before it and the closing after it, never fewer.
TEST(LoadCli, SystemCallsAreCountedNotAssumed) {
    if (std::system("strace -V > /dev/null 2>&1") != 0) GTEST_SKIP() << "strace is not installed";
    net::ServerConfig sc;
    sc.port = 0;
    sc.engine = net::EngineKind::Epoll;  // the server's own calls stay out of the trace: it is in
                                         // this process
    sc.grace = 500ms;
    net::Server server(sc);
    server.start();
    char dir[] = "/tmp/load-strace-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    const std::string trace = std::string(dir) + "/trace", json = std::string(dir) + "/out.json";
    const std::string cmd =
        "ASAN_OPTIONS=detect_leaks=0 strace -f -c -e trace=io_uring_enter -o " + trace + " " +
        URINGKIT_CLI + " load -d 500ms -c 8 --pipeline 2 --json " + json +
        " http://127.0.0.1:" + std::to_string(server.port()) + "/ > /dev/null 2>&1";
    const int st = std::system(cmd.c_str());
    server.stop();
    server.wait();
    std::ifstream t(trace);
    std::string line;
    long traced = -1;
    while (std::getline(t, line))
        if (line.find("io_uring_enter") != std::string::npos) {
            std::istringstream f(line);
            std::vector<std::string> w;
            for (std::string x; f >> x;) w.push_back(x);
            if (w.size() >= 5) traced = std::stol(w[3]);
        }
    std::ifstream j(json);
    if (traced < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || !j) {
        std::filesystem::remove_all(dir);
        GTEST_SKIP() << "strace could not trace here (status " << st << ")";
    }
    const auto doc = nlohmann::json::parse(j);
    std::filesystem::remove_all(dir);
    const auto counted = doc["syscalls"].get<long>();
    EXPECT_EQ(doc["reconnects"].get<long>(),
              0);  // so every call in the interval was an io_uring_enter
    EXPECT_GT(counted, 0);
    EXPECT_LE(counted, traced);
    EXPECT_LE(traced - counted, 100) << "traced " << traced << ", counted " << counted;
}

}  // namespace
