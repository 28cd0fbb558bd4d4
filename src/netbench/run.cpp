// bench net's runs: a fresh server in a child process per run, loaded from
// this process, each on its own CPU, in rounds with the engine order rotated.
#include "netbench/netbench.hpp"
#include "netbench/nginx_peer.hpp"

#include "cli/size.hpp"
#include "measure/interval.hpp"
#include "measure/io_workers.hpp"
#include "net/server.hpp"
#include "uringkit/util/unique_fd.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace uringkit::netbench {
namespace {

// The client's reply from the server child, or a failure naming what
// happened (it died, it said why, it took too long).
class ServerChild {
public:
    ServerChild(const net::ServerConfig& config, int cpu) {
        int cmd[2], reply[2];
        if (::pipe2(cmd, O_CLOEXEC) != 0 || ::pipe2(reply, O_CLOEXEC) != 0)
            throw std::system_error(errno, std::generic_category(), "pipe2");
        const pid_t pid = ::fork();
        if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
        if (pid == 0) {
            ::close(cmd[1]);
            ::close(reply[0]);
            serve(cmd[0], reply[1], config, cpu);  // never returns
        }
        pid_ = pid;
        ::close(cmd[0]);
        ::close(reply[1]);
        cmd_.reset(cmd[1]);
        reply_.reset(reply[0]);
        const std::string first = line();
        if (first.rfind("port ", 0) != 0) {
            finish();
            throw std::runtime_error(first.rfind("error ", 0) == 0
                                         ? first.substr(6)
                                         : "the server did not start: " + first);
        }
        port_ = static_cast<std::uint16_t>(std::stoul(first.substr(5)));
    }
    ~ServerChild() { finish(); }
    ServerChild(const ServerChild&) = delete;
    ServerChild& operator=(const ServerChild&) = delete;

    std::uint16_t port() const noexcept { return port_; }

    using Snapshot = detail::ServerSnapshot;
    Snapshot snapshot() {
        if (::write(cmd_.get(), "S", 1) != 1) throw std::runtime_error("the server went away");
        const std::string s = line();
        Snapshot out;
        unsigned long long req = 0, sys = 0, cpu_us = 0, in = 0, wrk_ns = 0, wrk_ctx = 0;
        if (std::sscanf(s.c_str(), "snap %llu %llu %llu %llu %llu %llu", &req, &sys, &cpu_us, &in,
                        &wrk_ns, &wrk_ctx) != 6)
            throw std::runtime_error("the server went away: " + s);
        out.offload_cpu_s = static_cast<double>(wrk_ns) / 1e9;
        out.offload_ctx = wrk_ctx;
        out.requests = req;
        out.bytes_in = in;
        out.syscalls = sys;
        out.cpu_s = static_cast<double>(cpu_us) / 1e6;
        return out;
    }

    // Stops the server and reaps it; one that does not end in 10 s is killed.
    void finish() noexcept {
        if (pid_ <= 0) return;
        cmd_.reset();  // EOF: the child stops its server and exits
        pollfd p{reply_.get(), POLLIN, 0};
        for (int i = 0; i < 100; ++i) {
            if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
                pid_ = -1;
                return;
            }
            (void)::poll(&p, 1, 100);
        }
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }

private:
    // One line from the child, waiting at most 10 s.
    std::string line() {
        std::string out;
        for (;;) {
            pollfd p{reply_.get(), POLLIN, 0};
            const int r = ::poll(&p, 1, 10000);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) return "no answer from the server in 10 s";
            char c;
            const ssize_t n = ::read(reply_.get(), &c, 1);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return out.empty() ? "the server process ended" : out;
            if (c == '\n') return out;
            out += c;
        }
    }

    [[noreturn]] static void serve(int cmd, int reply, net::ServerConfig c, int cpu) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        // Ctrl-C reaches the whole process group: the parent decides when this ends.
        ::signal(SIGINT, SIG_IGN);
        ::signal(SIGTERM, SIG_IGN);
        auto say = [reply](const std::string& s) { (void)!::write(reply, s.data(), s.size()); };
        if (cpu >= 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            ::sched_setaffinity(0, sizeof set, &set);  // the engine thread inherits it
        }
        try {
            c.threads = 1;
            c.port = 0;
            c.grace = std::chrono::milliseconds(500);
            net::Server server(c);
            server.start();
            say(fmt::format("port {}\n", server.port()));
            // The first snapshot starts the io-wq workers' account, each
            // later one reads it: a worker that exits in between (after 5 s
            // idle, longer than a run) would lose its figures.
            measure::KernelThreadTracker workers;
            bool tracking = false;
            for (char op; ::read(cmd, &op, 1) == 1;) {
                measure::KernelThreadCost wrk;
                if (tracking) {
                    workers.end();
                    wrk = workers.cost(measure::KernelThreadKind::io_worker);
                } else {
                    workers.begin();
                    tracking = true;
                }
                rusage ru{};
                ::getrusage(RUSAGE_SELF, &ru);
                const auto us = [](const timeval& t) {
                    return static_cast<unsigned long long>(t.tv_sec) * 1000000ULL +
                           static_cast<unsigned long long>(t.tv_usec);
                };
                const net::StatsSnapshot st = server.stats();
                say(fmt::format("snap {} {} {} {} {:.0f} {}\n", st.requests, st.syscalls,
                                us(ru.ru_utime) + us(ru.ru_stime), st.bytes_in, wrk.cpu_s * 1e9,
                                wrk.vcsw + wrk.ivcsw));
                if (server.finished()) break;  // a thread died: wait() says why
            }
            server.stop();
            server.wait();
            ::_exit(0);
        } catch (const std::exception& e) {
            say(fmt::format("error {}\n", e.what()));
            ::_exit(1);
        }
    }

    pid_t pid_ = -1;
    util::UniqueFd cmd_, reply_;
    std::uint16_t port_ = 0;
};

// The first two CPUs this process may run on (-1 where there are none).
std::pair<int, int> two_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return {-1, -1};
    int found[2] = {-1, -1};
    for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; ++c)
        if (CPU_ISSET(c, &set)) found[k++] = c;
    return {found[0], found[1]};
}

// The calling thread on `cpu` for a scope (threads it creates inherit it).
class PinnedScope {
public:
    explicit PinnedScope(int cpu) {
        if (cpu < 0) return;
        CPU_ZERO(&old_);
        if (::sched_getaffinity(0, sizeof old_, &old_) != 0) return;
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        active_ = ::sched_setaffinity(0, sizeof set, &set) == 0;
    }
    ~PinnedScope() {
        if (active_) ::sched_setaffinity(0, sizeof old_, &old_);
    }
    PinnedScope(const PinnedScope&) = delete;
    PinnedScope& operator=(const PinnedScope&) = delete;

private:
    cpu_set_t old_;
    bool active_ = false;
};

std::optional<unsigned> parse_count(std::string_view s) {
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
}

// The server an engine name stands for: serve's engines, uring-bundle (the
// uring engine with recv bundles), uring-inc, uring-calls (its file
// operations as system calls: serve --file-io calls), uring-splice (its
// file bodies spliced: --body-path splice) and epoll-read (epoll reading
// file bodies into its output instead of sendfile: --body-path read).
std::optional<net::ServerConfig> server_config(std::string_view name) {
    net::ServerConfig c;
    if (name == "uring-bundle") {
        c.engine = net::EngineKind::Uring;
        c.recv_bundle = true;
        return c;
    }
    if (name == "uring-calls") {  // as serve --file-io calls
        c.engine = net::EngineKind::Uring;
        c.file_io = net::FileIo::Calls;
        return c;
    }
    if (name == "uring-splice") {  // as serve --body-path splice
        c.engine = net::EngineKind::Uring;
        c.body_path = net::BodyPath::Splice;
        return c;
    }
    if (name == "epoll-read") {  // as serve --engine epoll --body-path read
        c.engine = net::EngineKind::Epoll;
        c.body_path = net::BodyPath::Read;
        return c;
    }
    if (name == "uring-inc") {  // as serve --recv-incremental
        c.engine = net::EngineKind::Uring;
        net::use_recv_incremental(c);
        return c;
    }
    const auto kind = net::parse_engine(name);
    if (!kind) return std::nullopt;
    c.engine = *kind;
    return c;
}

// The engine a label names: "epoll#2" is epoll listed a second time.
std::string base_engine(const std::string& label) {
    return label.substr(0, label.find('#'));
}

// The files of the file workloads: one "f<SIZE>" per size, of random bytes,
// in a directory of its own under /var/tmp (a disk file system: on tmpfs
// every io_uring read would go to a kernel worker), written now, so the runs
// find them in the page cache; removed with the object, or at once when
// making them fails (a full /var/tmp).
class FileRoot {
public:
    explicit FileRoot(const std::vector<Workload>& workloads) {
        std::vector<std::size_t> sizes;
        for (const Workload& w : workloads)
            if (w.file_size != 0 &&
                std::find(sizes.begin(), sizes.end(), w.file_size) == sizes.end())
                sizes.push_back(w.file_size);
        if (sizes.empty()) return;
        char tmpl[] = "/var/tmp/uringkit-bench-net-XXXXXX";
        if (::mkdtemp(tmpl) == nullptr)
            throw std::system_error(errno, std::system_category(), "mkdtemp /var/tmp");
        dir_ = tmpl;
        try {
            for (const std::size_t size : sizes) make(size);
        } catch (...) {
            remove();
            throw;
        }
    }
    ~FileRoot() { remove(); }
    FileRoot(const FileRoot&) = delete;
    FileRoot& operator=(const FileRoot&) = delete;
    const std::string& dir() const noexcept { return dir_; }

private:
    void make(std::size_t size) {
        const std::string path = fmt::format("{}/f{}", dir_, size);
        // O_EXCL in a directory only this run made: nothing else's file is written.
        const util::UniqueFd fd(
            ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
        if (!fd) throw std::system_error(errno, std::system_category(), "create " + path);
        names_.push_back(path);
        std::string bytes(size, '\0');
        std::uint64_t x = 0x9e3779b97f4a7c15ULL ^ size;
        for (char& c : bytes) {  // xorshift: incompressible, and fast to make
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            c = static_cast<char>(x);
        }
        for (std::size_t done = 0; done < size;) {
            const ssize_t n = ::write(fd.get(), bytes.data() + done, size - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0)
                throw std::system_error(n < 0 ? errno : ENOSPC, std::system_category(),
                                        "write " + path);
            done += static_cast<std::size_t>(n);
        }
    }
    void remove() noexcept {
        for (const std::string& n : names_) ::unlink(n.c_str());
        names_.clear();
        if (!dir_.empty()) ::rmdir(dir_.c_str());
        dir_.clear();
    }

    std::string dir_;
    std::vector<std::string> names_;
};

bool is_nginx(const std::string& label) {
    return base_engine(label) == "nginx";
}

Run one_run(const Workload& w, const std::string& label, net::ServerConfig sc,
            const std::string& file_root, std::chrono::nanoseconds duration, int server_cpu,
            int client_cpu, const std::atomic<bool>* stop) {
    Run run;
    run.engine = label;
    try {
        sc.mode = w.mode == load::Mode::Echo ? net::Mode::Echo : net::Mode::Http;
        if (w.file_size != 0) sc.root = file_root;
        // The peer, or serve's engine in a child process.
        std::optional<detail::NginxPeer> nginx;
        std::optional<ServerChild> child;
        if (is_nginx(label)) {
            nginx.emplace(w, file_root, server_cpu);
            run.syscalls_counted = false;
        } else {
            child.emplace(sc, server_cpu);
        }
        const auto snapshot = [&] { return nginx ? nginx->snapshot() : child->snapshot(); };
        const std::uint16_t port = nginx ? nginx->port() : child->port();
        load::LoadConfig lc;
        lc.target = load::parse_target(
            w.file_size != 0 ? fmt::format("http://127.0.0.1:{}/f{}", port, w.file_size)
                             : fmt::format("127.0.0.1:{}", port));
        lc.mode = w.mode;
        lc.connections = w.connections;
        lc.threads = 1;
        lc.pipeline = w.pipeline;
        lc.size = w.size;
        lc.duration = duration;
        PinnedScope pinned(client_cpu);
        const auto before = snapshot();
        const load::LoadResult r = load::run_load(lc, stop);
        const auto after = snapshot();
        run.seconds = r.seconds;
        run.requests = r.requests;
        run.client_cpu_s = r.cpu_user_s + r.cpu_system_s;
        run.errors = r.total_errors();
        run.lat_p50_ns = r.latency.quantile(0.50);
        run.lat_p99_ns = r.latency.quantile(0.99);
        // An echo server sees bytes, not messages (a recv may hold part of
        // one, or a bundle several): its messages are the bytes over the size.
        run.server_requests = w.mode == load::Mode::Echo
                                  ? (after.bytes_in - before.bytes_in) / w.size
                                  : after.requests - before.requests;
        run.server_syscalls = after.syscalls - before.syscalls;
        run.server_cpu_s = after.cpu_s - before.cpu_s;
        run.server_offload_cpu_s = after.offload_cpu_s;
        run.server_offload_ctx = after.offload_ctx;
        if (run.errors > 0)
            run.error = fmt::format("{} errors, the first: {}", run.errors, r.first_error);
    } catch (const std::exception& e) {
        run.error = e.what();
    }
    return run;
}

}  // namespace

std::string Workload::name() const {
    if (file_size != 0) return fmt::format("file:{}:{}", connections, file_size);
    return mode == load::Mode::Echo ? fmt::format("echo:{}:{}", connections, size)
                                    : fmt::format("http:{}:{}", connections, pipeline);
}

std::string Workload::describe() const {
    const std::string conns =
        fmt::format("{} connection{}", connections, connections == 1 ? "" : "s");
    if (mode == load::Mode::Echo) return fmt::format("echo {}, {}", cli::format_bytes(size), conns);
    if (file_size != 0) return fmt::format("file {}, {}", cli::format_bytes(file_size), conns);
    return pipeline == 1 ? fmt::format("HTTP, {}", conns)
                         : fmt::format("HTTP pipelined {}, {}", pipeline, conns);
}

std::optional<Workload> parse_workload(std::string_view text, std::string& why) {
    const auto c1 = text.find(':');
    const auto c2 = c1 == std::string_view::npos ? c1 : text.find(':', c1 + 1);
    if (c2 == std::string_view::npos || text.find(':', c2 + 1) != std::string_view::npos) {
        why =
            "give echo:CONNECTIONS:SIZE, http:CONNECTIONS:PIPELINE or file:CONNECTIONS:SIZE, like "
            "echo:64:64, http:64:16 or file:64:4k";
        return std::nullopt;
    }
    const std::string_view kind = text.substr(0, c1), conns = text.substr(c1 + 1, c2 - c1 - 1),
                           last = text.substr(c2 + 1);
    Workload w;
    if (kind == "echo") {
        w.mode = load::Mode::Echo;
    } else if (kind == "http" || kind == "file") {
        w.mode = load::Mode::Http;
    } else {
        why = fmt::format("'{}' is not echo, http or file", kind);
        return std::nullopt;
    }
    const auto n = parse_count(conns);
    if (!n || *n == 0 || *n > 10000) {
        why = fmt::format("'{}': give 1 to 10000 connections", conns);
        return std::nullopt;
    }
    w.connections = *n;
    if (kind == "file") {
        const auto size = cli::parse_size(last);
        if (!size || *size == 0 || *size > (64u << 20)) {
            why = fmt::format("'{}': give a file size of 1 byte to 64m, like 4k or 1m", last);
            return std::nullopt;
        }
        w.file_size = *size;
    } else if (w.mode == load::Mode::Echo) {
        const auto size = cli::parse_size(last);
        if (!size || *size == 0 || *size > (1u << 20)) {
            why = fmt::format("'{}': give a message size of 1 byte to 1m, like 64 or 4k", last);
            return std::nullopt;
        }
        w.size = *size;
    } else {
        const auto p = parse_count(last);
        if (!p || *p == 0 || *p > 1024) {
            why = fmt::format("'{}': give a pipeline depth of 1 to 1024", last);
            return std::nullopt;
        }
        w.pipeline = *p;
    }
    return w;
}

std::vector<Workload> default_workloads() {
    std::vector<Workload> out;
    for (const char* t : {"echo:1:64", "echo:64:64", "echo:512:64", "echo:64:4k", "echo:16:64k",
                          "http:64:1", "http:64:16"}) {
        std::string why;
        out.push_back(*parse_workload(t, why));
    }
    return out;
}

double Run::server_cpu_us_per_request() const noexcept {
    return server_requests > 0 ? server_cpu_s * 1e6 / static_cast<double>(server_requests) : 0;
}
double Run::server_syscalls_per_request() const noexcept {
    return server_requests > 0
               ? static_cast<double>(server_syscalls) / static_cast<double>(server_requests)
               : 0;
}

bool known_engine(std::string_view name) noexcept {
    return name == "nginx" || server_config(name).has_value();
}

unsigned rounds_of(const Config& config) {
    if (config.rounds > 0) return config.rounds;
    // As compare() counts: per workload every engine but the baseline, on two metrics.
    const std::size_t n =
        config.engines.size() > 1 ? (config.engines.size() - 1) * config.workloads.size() * 2 : 1;
    return std::max(3u, measure::samples_needed(measure::confidence_each(config.confidence, n)));
}

Result run(const Config& config, const std::atomic<bool>* stop, const ProgressFn& progress) {
    Result res;
    res.config = config;
    res.rounds = rounds_of(config);
    // Labels: a second listing of an engine is its A/A twin.
    std::vector<std::pair<std::string, net::ServerConfig>> engines;
    for (const std::string& e : config.engines) {
        // nginx: the peer; its ServerConfig is unused.
        const auto sc =
            e == "nginx" ? std::optional<net::ServerConfig>(net::ServerConfig{}) : server_config(e);
        if (!sc)
            throw std::invalid_argument(fmt::format("unknown engine '{}' ({})", e, kEngineNames));
        const auto listed = std::count_if(engines.begin(), engines.end(),
                                          [&](const auto& p) { return base_engine(p.first) == e; });
        engines.emplace_back(listed == 0 ? e : fmt::format("{}#{}", e, listed + 1), *sc);
    }
    const std::string uring_why = net::uring_unavailable_reason();
    const std::string bundle_why = net::recv_bundle_unavailable_reason();
    const std::string inc_why = net::recv_incremental_unavailable_reason();
    const std::string nginx_why =
        detail::nginx_binary().empty() ? "nginx is not installed (Debian's package nginx)" : "";
    std::vector<std::pair<std::string, net::ServerConfig>> runnable;
    for (const auto& e : engines) {
        const std::string& why = is_nginx(e.first)                           ? nginx_why
                                 : e.second.recv_bundle                      ? bundle_why
                                 : e.second.recv_incremental                 ? inc_why
                                 : e.second.engine != net::EngineKind::Epoll ? uring_why
                                                                             : std::string();
        if (!why.empty())
            res.unavailable.push_back({e.first, why});
        else
            runnable.push_back(e);
    }
    const auto [cpu_a, cpu_b] = two_cpus();
    const bool pin = config.pin && cpu_b >= 0;
    if (pin)
        res.pinning = fmt::format("server on CPU {}, client on CPU {}", cpu_a, cpu_b);
    else
        res.pinning =
            config.pin
                ? "not pinned: this process may run on one CPU only, so server and client share it"
                : "not pinned (--no-pin)";
    const FileRoot files(config.workloads);
    // nginx does not echo: it runs the HTTP and file workloads only.
    const auto skipped = [&](const std::string& label, const Workload& w) {
        return is_nginx(label) && w.mode == load::Mode::Echo;
    };
    Progress p;
    for (const Workload& w : config.workloads)
        for (const auto& e : runnable)
            if (!skipped(e.first, w)) p.total += res.rounds;
    for (unsigned round = 0; round < res.rounds; ++round) {
        for (unsigned w = 0; w < config.workloads.size(); ++w) {
            for (std::size_t i = 0; i < runnable.size(); ++i) {
                if (stop && stop->load()) {
                    res.interrupted = true;
                    return res;
                }
                // Each round (and each workload) starts one engine later.
                const auto& [label, sc] = runnable[(i + round + w) % runnable.size()];
                if (skipped(label, config.workloads[w])) continue;
                p.engine = label;
                p.workload = config.workloads[w].name();
                if (progress) progress(p);
                Run r = one_run(config.workloads[w], label, sc, files.dir(), config.duration,
                                pin ? cpu_a : -1, pin ? cpu_b : -1, stop);
                r.workload = w;
                r.round = round;
                res.runs.push_back(std::move(r));
                ++p.done;
            }
        }
    }
    if (stop && stop->load()) res.interrupted = true;
    return res;
}

}  // namespace uringkit::netbench
