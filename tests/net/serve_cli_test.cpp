// `uringkit serve` as a process: the port it prints, SIGTERM/SIGINT ending it
// with status 0, io_uring disabled by seccomp (auto falls back and says so,
// --engine uring refuses with status 3), bad options (status 2), and EMFILE
// on accept backing off instead of spinning.
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include "serve_test_support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <regex>

using namespace serve_test;

namespace {

struct Child {
    pid_t pid = -1;
    int out = -1;  // stdout
    int err = -1;  // stderr
    std::string out_text, err_text;

    ~Child() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
        if (out >= 0) ::close(out);
        if (err >= 0) ::close(err);
    }
    // Reads stdout until `pattern` matches (or 10 s pass).
    std::smatch wait_for(const std::regex& pattern) {
        std::smatch m;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!std::regex_search(out_text, m, pattern) &&
               std::chrono::steady_clock::now() < deadline) {
            pollfd p{out, POLLIN, 0};
            if (::poll(&p, 1, 100) <= 0) continue;
            char buf[4096];
            const ssize_t n = ::read(out, buf, sizeof buf);
            if (n <= 0) break;
            out_text.append(buf, static_cast<std::size_t>(n));
        }
        std::regex_search(out_text, m, pattern);
        return m;
    }
    // Waits for the exit (10 s at most) and collects what is left of the output.
    int wait_exit() {
        int status = 0;
        for (int i = 0; i < 1000; ++i) {
            if (::waitpid(pid, &status, WNOHANG) == pid) {
                pid = -1;
                drain(out, out_text);
                drain(err, err_text);
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            ::usleep(10000);
        }
        return -1;
    }
    static void drain(int fd, std::string& text) {
        char buf[4096];
        ssize_t n;
        while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
    }
};

std::unique_ptr<Child> spawn(std::vector<std::string> args, rlim_t nofile = 0) {
    int o[2], e[2];
    if (::pipe2(o, O_CLOEXEC) < 0 || ::pipe2(e, O_CLOEXEC) < 0) throw std::runtime_error("pipe");
    auto c = std::make_unique<Child>();
    c->pid = ::fork();
    if (c->pid == 0) {
        ::dup2(o[1], 1);
        ::dup2(e[1], 2);
        if (nofile) {
            rlimit r{nofile, nofile};
            ::setrlimit(RLIMIT_NOFILE, &r);
        }
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(o[1]);
    ::close(e[1]);
    c->out = o[0];
    c->err = e[0];
    return c;
}

const std::regex kListening(R"(listening on 127\.0\.0\.1:(\d+) \(engine ([a-z-]+))");

std::string get(std::uint16_t port, const std::string& path) {
    Socket s(port);
    s.send("GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    return s.read_all();
}

// GET / on the connected socket `fd` with `host`, read to the end (the
// request asks to close), and expect 200; closes fd.
void expect_root_ok(int fd, const std::string& host) {
    const std::string req = "GET / HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
    ASSERT_EQ(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
    std::string got;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
        got.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    EXPECT_EQ(got.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << got;
}

TEST(ServeCli, PrintsPortServesAndStopsOnSignals) {
    for (int sig : {SIGTERM, SIGINT}) {
        auto c = spawn({URINGKIT_CLI, "serve", "--port", "0", "--engine", "auto"});
        const auto m = c->wait_for(kListening);
        ASSERT_FALSE(m.empty()) << c->out_text;
        const auto port = static_cast<std::uint16_t>(std::stoi(m[1]));
        const std::string expect_engine =
            net::uring_unavailable_reason().empty() ? "uring" : "epoll";
        EXPECT_EQ(m[2], expect_engine);
        const std::string r = get(port, "/");
        EXPECT_NE(r.find("\r\n\r\n" + net::make_body(128)), std::string::npos) << r;
        Socket idle(port);  // an open keep-alive connection must not hold up the exit
        ::kill(c->pid, sig);
        EXPECT_EQ(c->wait_exit(), 0) << c->err_text;
        EXPECT_TRUE(idle.closed_by_peer());
        EXPECT_NE(c->err_text.find("stopped on signal"), std::string::npos) << c->err_text;
    }
}

TEST(ServeCli, AutoFallsBackToEpollWhenIoUringIsDisabled) {
    for (const char* err :
         {"1", "38"}) {  // EPERM (seccomp, sysctl), ENOSYS (no io_uring in the kernel)
        auto c = spawn({NO_URING, "--errno", err, URINGKIT_CLI, "serve", "--port", "0"});
        const auto m = c->wait_for(kListening);
        ASSERT_FALSE(m.empty()) << c->out_text;
        EXPECT_EQ(m[2], "epoll");
        const auto port = static_cast<std::uint16_t>(std::stoi(m[1]));
        EXPECT_NE(get(port, "/").find("HTTP/1.1 200 OK"), std::string::npos);
        ::kill(c->pid, SIGTERM);
        EXPECT_EQ(c->wait_exit(), 0);
        EXPECT_NE(c->err_text.find("falling back to the epoll engine"), std::string::npos)
            << c->err_text;
        EXPECT_NE(c->err_text.find("io_uring_setup"), std::string::npos)
            << "names the refused call: " << c->err_text;
    }
}

TEST(ServeCli, EngineUringRefusesWhenIoUringIsDisabled) {
    auto c = spawn({NO_URING, URINGKIT_CLI, "serve", "--port", "0", "--engine", "uring"});
    EXPECT_EQ(c->wait_exit(), 3);
    EXPECT_EQ(std::count(c->err_text.begin(), c->err_text.end(), '\n'), 1) << c->err_text;
    EXPECT_NE(c->err_text.find("--engine uring: io_uring is not usable here"), std::string::npos)
        << c->err_text;
    EXPECT_EQ(c->out_text.find("listening"), std::string::npos);
}

// A kernel without multishot recv (5.19) answers it with a -EINVAL CQE: the
// seccomp supervisor of no_uring --kernel 5.19 makes this kernel answer so.
// auto falls back to epoll saying why; --engine uring refuses in one line.
TEST(ServeCli, WithoutMultishotRecvAutoServesWithEpollAndUringExits3) {
    auto c = spawn(
        {NO_URING, "--kernel", "5.19", URINGKIT_CLI, "serve", "--port", "0", "--engine", "auto"});
    const auto m = c->wait_for(kListening);
    ASSERT_FALSE(m.empty()) << c->out_text;
    EXPECT_EQ(m[2], "epoll");
    const auto port = static_cast<std::uint16_t>(std::stoi(m[1]));
    EXPECT_NE(get(port, "/").find("HTTP/1.1 200 OK"), std::string::npos);
    ::kill(c->pid, SIGTERM);
    EXPECT_EQ(c->wait_exit(), 0);
    EXPECT_NE(c->err_text.find("no multishot recv (needs Linux 6.0)"), std::string::npos)
        << c->err_text;
    EXPECT_NE(c->err_text.find("falling back to the epoll engine"), std::string::npos)
        << c->err_text;

    for (const char* engine : {"uring", "uring-coro"}) {
        auto u = spawn({NO_URING, "--kernel", "5.19", URINGKIT_CLI, "serve", "--port", "0",
                        "--engine", engine});
        EXPECT_EQ(u->wait_exit(), 3) << engine;
        EXPECT_EQ(std::count(u->err_text.begin(), u->err_text.end(), '\n'), 1) << u->err_text;
        EXPECT_NE(u->err_text.find("no multishot recv (needs Linux 6.0)"), std::string::npos)
            << u->err_text;
        EXPECT_EQ(u->out_text.find("listening"), std::string::npos);
    }
}

// 6.0 has multishot recv but not DEFER_TASKRUN: the io_uring engines set up
// their rings without it (and without SINGLE_ISSUER) instead of failing.
TEST(ServeCli, WithoutDeferTaskrunTheUringEnginesStillServe) {
    for (const char* engine : {"uring", "uring-coro"}) {
        auto c = spawn({NO_URING, "--kernel", "6.0", "--report", URINGKIT_CLI, "serve", "--port",
                        "0", "--engine", engine});
        const auto m = c->wait_for(kListening);
        ASSERT_FALSE(m.empty()) << engine << ": " << c->out_text << c->err_text;
        EXPECT_EQ(m[2], engine);
        const auto port = static_cast<std::uint16_t>(std::stoi(m[1]));
        for (int i = 0; i < 3; ++i)
            EXPECT_NE(get(port, "/").find("HTTP/1.1 200 OK"), std::string::npos) << engine;
        ::kill(c->pid, SIGTERM);
        EXPECT_EQ(c->wait_exit(), 0) << c->err_text;
        EXPECT_EQ(c->err_text.find("no_uring: 0 setups"), std::string::npos)
            << "nothing was refused: " << c->err_text;
    }
}

TEST(ServeCli, BadOptionsExit2WithOneLine) {
    for (std::vector<std::string> extra :
         std::vector<std::vector<std::string>>{{"--idle-timeout", "soon"},
                                               {"--body-size", "lots"},
                                               {"--bind", "localhost:80"},
                                               {"--bind", ""},
                                               {"--engine", "kqueue"},
                                               {"--max-pending", "0"},
                                               {"--max-pending", "lots"},
                                               {"--send-timeout", "soon"}}) {
        std::vector<std::string> args{URINGKIT_CLI, "serve", "--port", "0"};
        args.insert(args.end(), extra.begin(), extra.end());
        auto c = spawn(args);
        EXPECT_EQ(c->wait_exit(), 2) << extra[0] << ": " << c->err_text;
        EXPECT_NE(c->err_text.find(extra[0]), std::string::npos) << c->err_text;
        EXPECT_EQ(c->out_text.find("listening"), std::string::npos);
    }
}

// `serve --engine uring --mode echo OPTION`: status 3 naming `why` where the
// kernel lacks what OPTION needs; otherwise `bytes` sent come back whole.
void echo_with_option(const char* option, const std::string& why, std::size_t bytes) {
    auto c = spawn(
        {URINGKIT_CLI, "serve", "--port", "0", "--engine", "uring", "--mode", "echo", option});
    if (!why.empty()) {
        EXPECT_EQ(c->wait_exit(), 3) << c->err_text;
        EXPECT_NE(c->err_text.find(why), std::string::npos) << c->err_text;
        return;
    }
    const auto m = c->wait_for(kListening);
    ASSERT_FALSE(m.empty()) << c->out_text << c->err_text;
    Socket s(static_cast<std::uint16_t>(std::stoi(m[1])));
    const std::string msg(bytes, 'e');
    s.send(msg);
    ::shutdown(s.fd, SHUT_WR);
    EXPECT_EQ(s.read_all(), msg);
    ::kill(c->pid, SIGTERM);
    EXPECT_EQ(c->wait_exit(), 0) << c->err_text;
}

// A usage error is one line naming the option, then the Try line.
void expect_usage_lines(const std::string& err) {
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 2) << err;
    EXPECT_EQ(err.rfind("uringkit serve: ", 0), 0u) << err;
    EXPECT_TRUE(err.ends_with("Try 'uringkit serve --help' for more information.\n")) << err;
}

// --recv-bundle belongs to the uring engine: with another it is a usage
// error; where the kernel has no bundles (before 6.10) it exits 3 saying so.
TEST(ServeCli, RecvBundleIsAnOptionOfTheUringEngine) {
    for (const char* engine : {"epoll", "uring-coro"}) {
        auto c = spawn({URINGKIT_CLI, "serve", "--port", "0", "--engine", engine, "--recv-bundle"});
        EXPECT_EQ(c->wait_exit(), 2) << engine << ": " << c->err_text;
        expect_usage_lines(c->err_text);
        EXPECT_NE(c->err_text.find("--recv-bundle: an option of the uring engine"),
                  std::string::npos)
            << c->err_text;
    }
    echo_with_option("--recv-bundle", net::recv_bundle_unavailable_reason(), 20000);
}

TEST(ServeCli, RecvIncrementalIsAnOptionOfTheUringEngine) {
    for (std::vector<std::string> extra :
         std::vector<std::vector<std::string>>{{"--engine", "epoll"},
                                               {"--engine", "uring-coro"},
                                               {"--engine", "uring", "--recv-bundle"}}) {
        std::vector<std::string> args{URINGKIT_CLI, "serve", "--port", "0", "--recv-incremental"};
        args.insert(args.end(), extra.begin(), extra.end());
        auto c = spawn(args);
        EXPECT_EQ(c->wait_exit(), 2) << extra[1] << ": " << c->err_text;
        expect_usage_lines(c->err_text);
        EXPECT_NE(c->err_text.find("--recv-incremental: an option of the uring engine"),
                  std::string::npos)
            << c->err_text;
    }
    echo_with_option("--recv-incremental", net::recv_incremental_unavailable_reason(), 200000);
}

// --root: what cannot be served is said in one line (status 1 for a root
// that cannot be opened, 2 for options that need --root); run as an
// ordinary user, a file that user may not read is 403, and the server goes on.
TEST(ServeCli, RootErrorsAndUnreadableFiles) {
    for (const char* root : {"/nonexistent-uringkit-root", "/etc/passwd"}) {
        auto c = spawn({URINGKIT_CLI, "serve", "--port", "0", "--root", root});
        EXPECT_EQ(c->wait_exit(), 1) << c->err_text;
        EXPECT_EQ(c->err_text.rfind(std::string("uringkit serve: --root ") + root + ": ", 0), 0u)
            << c->err_text;
        EXPECT_EQ(std::count(c->err_text.begin(), c->err_text.end(), '\n'), 1) << c->err_text;
    }
    for (std::vector<std::string> extra : std::vector<std::vector<std::string>>{
             {"--no-symlinks"},
             {"--no-xdev"},
             {"--root", "/tmp", "--mode", "echo"},
             {"--file-io", "ring"},
             {"--root", "/tmp", "--file-io", "disk"},
             {"--root", "/tmp", "--engine", "epoll", "--file-io", "calls"},
             {"--body-path", "read"},
             {"--root", "/tmp", "--body-path", "mmap"},
             {"--root", "/tmp", "--engine", "epoll", "--body-path", "splice"},
             {"--root", "/tmp", "--engine", "uring", "--file-io", "calls", "--body-path", "splice"},
             {"--root", "/tmp", "--engine", "uring", "--body-path", "sendfile"}}) {
        std::vector<std::string> args{URINGKIT_CLI, "serve", "--port", "0"};
        args.insert(args.end(), extra.begin(), extra.end());
        auto c = spawn(args);
        EXPECT_EQ(c->wait_exit(), 2) << extra[0] << ": " << c->err_text;
        expect_usage_lines(c->err_text);
    }
    // setpriv execs the server itself (runuser would stay as its parent).
    if (::geteuid() != 0 || ::access("/usr/bin/setpriv", X_OK) != 0)
        GTEST_SKIP() << "needs root and setpriv to serve as the user nobody";
    char tmpl[] = "/tmp/uringkit-serve-root-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
    for (const char* name : {"/open.txt", "/private.txt"}) {
        const int fd = ::open((dir + name).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::write(fd, "bytes\n", 6), 6);
        ::close(fd);
    }
    ASSERT_EQ(::chmod((dir + "/private.txt").c_str(), 0600), 0);
    auto c = spawn({"/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                    URINGKIT_CLI, "serve", "--port", "0", "--root", dir});
    const auto m = c->wait_for(kListening);
    ASSERT_FALSE(m.empty()) << c->out_text << c->err_text;
    const auto port = static_cast<std::uint16_t>(std::stoi(m[1]));
    EXPECT_EQ(get(port, "/private.txt").rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u);
    const std::string ok = get(port, "/open.txt");
    EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
    EXPECT_TRUE(ok.ends_with("\r\n\r\nbytes\n")) << ok;
    ::kill(c->pid, SIGTERM);
    EXPECT_EQ(c->wait_exit(), 0) << c->err_text;
    for (const char* name : {"/open.txt", "/private.txt"}) ::unlink((dir + name).c_str());
    ::rmdir(dir.c_str());
}

TEST(ServeCli, BusyPortExit1NamingTheAddress) {
    // A listener without SO_REUSEPORT holds the port, so ours cannot share it.
    const int holder = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(holder, 1), 0);
    socklen_t len = sizeof a;
    ::getsockname(holder, reinterpret_cast<sockaddr*>(&a), &len);
    const std::string port = std::to_string(ntohs(a.sin_port));
    auto c = spawn({URINGKIT_CLI, "serve", "--port", port, "--engine", "epoll"});
    EXPECT_EQ(c->wait_exit(), 1);
    EXPECT_NE(c->err_text.find("bind 127.0.0.1:" + port + ": Address already in use"),
              std::string::npos)
        << c->err_text;
    EXPECT_EQ(std::count(c->err_text.begin(), c->err_text.end(), '\n'), 1) << c->err_text;
    ::close(holder);
}

// A second server on a port another process serves must fail, not quietly
// take half its connections: the threads of one server share one listening
// socket without SO_REUSEPORT, which no other process can join.
TEST(ServeCli, ASecondServerOnTheSamePortFailsAddressInUse) {
    std::vector<std::string> engines_here{"epoll"};
    if (net::uring_unavailable_reason().empty()) engines_here.push_back("uring");
    for (const std::string& engine : engines_here) {
        auto first =
            spawn({URINGKIT_CLI, "serve", "--port", "0", "--threads", "2", "--engine", engine});
        const auto m = first->wait_for(kListening);
        ASSERT_FALSE(m.empty()) << engine << ": " << first->out_text << first->err_text;
        const std::string port_text = m[1];
        const auto port = static_cast<std::uint16_t>(std::stoi(port_text));

        for (const std::string& second_engine : engines_here) {
            auto second = spawn({URINGKIT_CLI, "serve", "--port", port_text, "--threads", "2",
                                 "--engine", second_engine});
            EXPECT_EQ(second->wait_exit(), 1)
                << engine << " then " << second_engine << ": " << second->out_text;
            EXPECT_NE(
                second->err_text.find("bind 127.0.0.1:" + port_text + ": Address already in use"),
                std::string::npos)
                << second->err_text;
            EXPECT_EQ(std::count(second->err_text.begin(), second->err_text.end(), '\n'), 1)
                << second->err_text;
            EXPECT_EQ(second->out_text.find("listening"), std::string::npos);
        }
        // Not even a socket that asks for SO_REUSEPORT itself can join.
        const int intruder = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        const int one = 1;
        ::setsockopt(intruder, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
        ::setsockopt(intruder, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(port);
        EXPECT_EQ(::bind(intruder, reinterpret_cast<sockaddr*>(&a), sizeof a), -1);
        EXPECT_EQ(errno, EADDRINUSE);
        ::close(intruder);

        // Every connection still reaches the first server, on both threads.
        for (int i = 0; i < 20; ++i)
            ASSERT_NE(get(port, "/").find("\r\n\r\n" + net::make_body(128)), std::string::npos)
                << i;
        const std::string stats = get(port, "/stats");
        const auto j = nlohmann::json::parse(stats.substr(stats.find("\r\n\r\n") + 4));
        EXPECT_EQ(j["requests"].get<int>(), 21) << engine << ": " << j.dump();
        ::kill(first->pid, SIGTERM);
        EXPECT_EQ(first->wait_exit(), 0) << first->err_text;
    }
}

TEST(ServeCli, Ipv6AddressesPrintBracketed) {
    const int probe = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    const bool have_v6 =
        probe >= 0 && ::bind(probe, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    if (probe >= 0) ::close(probe);
    if (!have_v6) GTEST_SKIP() << "no IPv6 loopback here";
    auto c = spawn({URINGKIT_CLI, "serve", "--bind", "::1", "--port", "0", "--engine", "epoll"});
    const auto m = c->wait_for(std::regex(R"(listening on \[::1\]:(\d+) \(engine epoll)"));
    ASSERT_FALSE(m.empty()) << c->out_text << c->err_text;
    // The printed port is the one it serves on.
    const int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    a.sin6_port = htons(static_cast<std::uint16_t>(std::stoi(m[1])));
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    expect_root_ok(fd, "[::1]");
    // A port taken on IPv6 is named the same way.
    auto second =
        spawn({URINGKIT_CLI, "serve", "--bind", "::1", "--port", m[1], "--engine", "epoll"});
    EXPECT_EQ(second->wait_exit(), 1);
    EXPECT_NE(second->err_text.find("bind [::1]:" + std::string(m[1]) + ": Address already in use"),
              std::string::npos)
        << second->err_text;
    ::kill(c->pid, SIGTERM);
    EXPECT_EQ(c->wait_exit(), 0) << c->err_text;
}

// --bind with a host name listens on its first address from getaddrinfo,
// the one a client resolving the same name (load, wrk, curl) tries first, and
// prints that address.  The other loopback family is not listened on.
TEST(ServeCli, BindAHostNameListensOnItsFirstAddress) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (::getaddrinfo("localhost", nullptr, &hints, &res) != 0 || res == nullptr)
        GTEST_SKIP() << "localhost does not resolve here";
    sockaddr_storage first{};
    std::memcpy(&first, res->ai_addr, res->ai_addrlen);
    const socklen_t len = res->ai_addrlen;
    ::freeaddrinfo(res);
    char text[INET6_ADDRSTRLEN] = {};
    const bool v6 = first.ss_family == AF_INET6;
    if (v6)
        ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&first)->sin6_addr, text,
                    sizeof text);
    else
        ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&first)->sin_addr, text, sizeof text);
    EXPECT_TRUE(std::string(text) == "127.0.0.1" || std::string(text) == "::1") << text;

    auto c =
        spawn({URINGKIT_CLI, "serve", "--bind", "localhost", "--port", "0", "--engine", "epoll"});
    const auto m = c->wait_for(std::regex(R"(listening on (\S+):(\d+) \(engine epoll)"));
    ASSERT_FALSE(m.empty()) << c->out_text << c->err_text;
    EXPECT_EQ(m[1], v6 ? "[" + std::string(text) + "]" : std::string(text)) << c->out_text;
    const auto port = static_cast<std::uint16_t>(std::stoi(m[2]));
    if (v6)
        reinterpret_cast<sockaddr_in6*>(&first)->sin6_port = htons(port);
    else
        reinterpret_cast<sockaddr_in*>(&first)->sin_port = htons(port);
    const int fd = ::socket(first.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&first), len), 0) << std::strerror(errno);
    expect_root_ok(fd, "localhost");
    ::kill(c->pid, SIGTERM);
    EXPECT_EQ(c->wait_exit(), 0) << c->err_text;
}

// A --bind that is neither an address nor a name that resolves: status 2,
// the token named, the Try line last.
TEST(ServeCli, BindThatDoesNotResolveIsAUsageError) {
    auto c = spawn({URINGKIT_CLI, "serve", "--port", "0", "--bind", "localhost:80"});
    EXPECT_EQ(c->wait_exit(), 2) << c->err_text;
    EXPECT_EQ(c->err_text.rfind("uringkit serve: --bind localhost:80: not an IPv4 or IPv6 address, "
                                "and no host name that resolves",
                                0),
              0u)
        << c->err_text;
    EXPECT_NE(c->err_text.find("give the port with --port"), std::string::npos) << c->err_text;
    EXPECT_TRUE(c->err_text.ends_with("Try 'uringkit serve --help' for more information.\n"))
        << c->err_text;
    EXPECT_EQ(c->out_text, "");
}

// RLIMIT_NOFILE so low that accept fails with EMFILE while clients hold
// connections: the server pauses between attempts (a handful of system calls,
// not a spin), and serves again once descriptors free up.
TEST(ServeCli, EmfileOnAcceptBacksOff) {
    std::vector<std::string> engines_here{"epoll"};
    if (net::uring_unavailable_reason().empty()) {
        engines_here.push_back("uring");
        engines_here.push_back("uring-coro");
    }
    for (const std::string& engine : engines_here) {
        auto c = spawn({URINGKIT_CLI, "serve", "--port", "0", "--engine", engine}, 24);
        const auto m = c->wait_for(kListening);
        ASSERT_FALSE(m.empty()) << engine << ": " << c->out_text << c->err_text;
        const auto port = static_cast<std::uint16_t>(std::stoi(m[1]));
        // Under UBSan, the first vptr check of a type probes memory through a
        // pipe(2); with no descriptor free it reports a false "invalid vptr"
        // and the sanitized server dies.  /stats (nlohmann's serializer) is
        // the only polymorphic code a request reaches: run it once while
        // descriptors are free, so the checks later hit UBSan's type cache.
        ASSERT_NE(get(port, "/stats").find("\r\n\r\n{"), std::string::npos);
        std::string stats;
        try {
            std::vector<std::unique_ptr<Socket>> held;
            for (int i = 0; i < 40; ++i)
                held.push_back(std::make_unique<Socket>(port, std::chrono::milliseconds(300)));
            ::usleep(500000);  // the server now retries the backlog every 50 ms
            held.clear();
            // The backlog drains once descriptors are back; then /stats answers.
            for (int i = 0; i < 50 && stats.find("\r\n\r\n{") == std::string::npos; ++i) {
                stats = get(port, "/stats");
                if (stats.empty()) ::usleep(100000);
            }
        } catch (const std::exception& e) {
            // Say what the server said, not just what the client saw.
            ::kill(c->pid, SIGTERM);
            const int status = c->wait_exit();
            FAIL() << engine << ": " << e.what() << "; server exit " << status
                   << ", stderr: " << c->err_text;
        }
        const auto body = stats.substr(stats.find("\r\n\r\n") + 4);
        const auto j = nlohmann::json::parse(body);
        EXPECT_GT(j["accept_backoffs"].get<int>(), 0) << engine << ": " << body;
        // A spin would be thousands of failing accepts over the half second.
        EXPECT_LT(j["syscalls"].get<int>(), 600) << engine << ": " << body;
        ::kill(c->pid, SIGTERM);
        EXPECT_EQ(c->wait_exit(), 0) << engine << ": " << c->err_text;
    }
}

}  // namespace
