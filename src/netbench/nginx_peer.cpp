#include "netbench/nginx_peer.hpp"

#include "uringkit/util/unique_fd.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace uringkit::netbench::detail {
namespace {

// A loopback port nobody listens on now (bound and released: nginx binds it
// a moment later, as the benchmark scripts do).
std::uint16_t free_port() {
    const util::UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (!s || ::bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(s.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0)
        throw std::system_error(errno, std::system_category(), "a free loopback port");
    return ntohs(a.sin_port);
}

// One HTTP/1.0 GET on loopback, read to EOF (5 s at most); empty on failure.
std::string http_get(std::uint16_t port) {
    const util::UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!s) return {};
    const timeval t{5, 0};
    ::setsockopt(s.get(), SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t);
    ::setsockopt(s.get(), SOL_SOCKET, SO_SNDTIMEO, &t, sizeof t);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (::connect(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return {};
    static constexpr char kGet[] = "GET / HTTP/1.0\r\n\r\n";
    if (::send(s.get(), kGet, sizeof kGet - 1, MSG_NOSIGNAL) != sizeof kGet - 1) return {};
    std::string out;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::recv(s.get(), buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

std::string last_line(const std::string& path) {
    std::ifstream in(path);
    std::string line, last;
    while (std::getline(in, line))
        if (!line.empty()) last = line;
    return last;
}

}  // namespace

std::string nginx_binary() {
    for (const char* p : {"/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"})
        if (::access(p, X_OK) == 0) return p;
    return {};
}

NginxPeer::NginxPeer(const Workload& w, const std::string& file_root, int cpu) {
    if (w.mode == load::Mode::Echo) throw std::runtime_error("nginx serves HTTP, not echo");
    const std::string nginx = nginx_binary();
    if (nginx.empty()) throw std::runtime_error("nginx is not installed");
    char tmpl[] = "/tmp/uringkit-bench-net-nginx-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr)
        throw std::system_error(errno, std::system_category(), "mkdtemp /tmp");
    dir_ = tmpl;
    try {
        port_ = free_port();
        status_port_ = free_port();
        // serve's fixed body: 128 bytes.
        const std::string site =
            w.file_size != 0
                ? fmt::format("    root {};\n", file_root)
                : fmt::format("    location = / {{ return 200 \"{}\"; }}\n", std::string(128, 'x'));
        std::ofstream conf(dir_ + "/nginx.conf");
        conf << fmt::format(
            "worker_processes 1;\ndaemon off;\nmaster_process off;\npid {0}/nginx.pid;\n"
            "error_log {0}/error.log warn;\n"
            "events {{ worker_connections 4096; multi_accept on; }}\n"
            "http {{\n  access_log off;\n  keepalive_requests 100000000;\n"
            "  keepalive_timeout 60s;\n  sendfile on;\n  tcp_nopush on;\n"
            "  default_type application/octet-stream;\n"
            "  client_body_temp_path {0}/body;\n  proxy_temp_path {0}/proxy;\n"
            "  fastcgi_temp_path {0}/fastcgi;\n  uwsgi_temp_path {0}/uwsgi;\n"
            "  scgi_temp_path {0}/scgi;\n"
            "  server {{\n    listen 127.0.0.1:{1} backlog=4096;\n{2}  }}\n"
            "  server {{\n    listen 127.0.0.1:{3};\n    location / {{ stub_status; }}\n  }}\n"
            "}}\n",
            dir_, port_, site, status_port_);
        conf.close();
        if (!conf) throw std::runtime_error("cannot write " + dir_ + "/nginx.conf");
        const std::string conf_path = dir_ + "/nginx.conf", err_path = dir_ + "/error.log";
        const pid_t pid = ::fork();
        if (pid < 0) throw std::system_error(errno, std::system_category(), "fork");
        if (pid == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (cpu >= 0) {
                cpu_set_t set;
                CPU_ZERO(&set);
                CPU_SET(cpu, &set);
                ::sched_setaffinity(0, sizeof set, &set);
            }
            const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
            ::dup2(null, 0);
            ::dup2(null, 1);
            ::dup2(null, 2);
            ::execl(nginx.c_str(), "nginx", "-c", conf_path.c_str(), "-p", dir_.c_str(), "-e",
                    err_path.c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
        pid_ = pid;
        // Ready once its status page answers (it listens on both ports).
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (status_page().find("Active connections") == std::string::npos) {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                const std::string why = last_line(err_path);
                throw std::runtime_error(
                    "nginx did not start: " +
                    (why.empty() ? fmt::format("exit status {}", WEXITSTATUS(status)) : why));
            }
            if (std::chrono::steady_clock::now() > deadline)
                throw std::runtime_error("nginx did not answer in 10 s: " + last_line(err_path));
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    } catch (...) {
        stop();
        throw;
    }
}

NginxPeer::~NginxPeer() {
    stop();
}

std::string NginxPeer::status_page() {
    std::string page = http_get(status_port_);
    if (!page.empty()) ++status_requests_;
    return page;
}

// SIGTERM is nginx's fast shutdown; one that does not end in 5 s is killed.
void NginxPeer::stop() noexcept {
    if (pid_ > 0) {
        ::kill(pid_, SIGTERM);
        bool gone = false;
        for (int i = 0; i < 100 && !gone; ++i) {
            gone = ::waitpid(pid_, nullptr, WNOHANG) == pid_;
            if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        if (!gone) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        pid_ = -1;
    }
    if (!dir_.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);  // the run's own mkdtemp directory
        dir_.clear();
    }
}

ServerSnapshot NginxPeer::snapshot() {
    ServerSnapshot s;
    // "Active connections: 1 \nserver accepts handled requests\n 5 5 9 \n..."
    const std::string page = status_page();
    const auto at = page.find("requests\n");
    unsigned long long accepts = 0, handled = 0, requests = 0;
    if (at == std::string::npos ||
        std::sscanf(page.c_str() + at + 9, "%llu %llu %llu", &accepts, &handled, &requests) != 3)
        throw std::runtime_error("nginx's stub_status did not answer: " +
                                 last_line(dir_ + "/error.log"));
    s.requests = requests - status_requests_;  // the status requests count themselves
    std::ifstream sched(fmt::format("/proc/{}/schedstat", pid_));
    unsigned long long run_ns = 0;
    if (!(sched >> run_ns)) throw std::runtime_error("nginx went away");
    s.cpu_s = static_cast<double>(run_ns) / 1e9;
    return s;
}

}  // namespace uringkit::netbench::detail
