// `uringkit serve`: an HTTP/1.1 (or TCP echo) server on io_uring, with an
// epoll twin.  Parses options, runs uringkit::net::Server, waits for
// SIGINT/SIGTERM.
#include "command.hpp"
#include "console.hpp"
#include "manual.hpp"

#include "cli/duration.hpp"
#include "cli/size.hpp"
#include "net/server.hpp"

#include <signal.h>

#include <fmt/core.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace uringkit::cli {
namespace {

struct Args {
    std::string mode = "http";
    std::string engine = "auto";
    unsigned threads = 1;
    std::string bind = "127.0.0.1";
    unsigned port = 8080;
    unsigned max_conns = 10000;
    std::string idle = "60s";
    std::string max_pending = "256k";
    std::string send_timeout = "60s";
    std::string body_size = "128";
    std::string max_body = "1m";
    unsigned batch_wait = 20;
    bool recv_bundle = false;
    bool recv_incremental = false;
    std::string root;
    bool no_symlinks = false;
    bool no_xdev = false;
    std::string file_io;    // empty: the default (kDefaultFileIo)
    std::string body_path;  // empty: each engine's default
};

// Measured in bench/results/serve_files.md.
const net::FileIo kDefaultFileIo = net::ServerConfig{}.file_io;

int serve(const Args& a, bool batch_wait_given) {
    const std::string& mode = a.mode;
    const std::string& engine = a.engine;
    const std::string& idle = a.idle;
    const std::string& body_size = a.body_size;
    const std::string& max_body = a.max_body;
    const unsigned batch_wait_us = a.batch_wait;
    const unsigned threads = a.threads, port = a.port, max_conns = a.max_conns;
    const std::string& bind = a.bind;
    net::ServerConfig cfg;
    cfg.mode = mode == "echo" ? net::Mode::Echo : net::Mode::Http;
    cfg.threads = threads;
    cfg.bind = bind;
    cfg.port = static_cast<std::uint16_t>(port);
    cfg.max_conns = max_conns;
    const auto idle_ms = cli::parse_duration(idle);  // 0 turns the timeout off
    if (!idle_ms) {
        return usage_error(
            "serve",
            fmt::format("--idle-timeout {}: not a duration (write 30, 30s, 500ms or 2m)", idle));
    }
    // 0 disables the timeout: a deadline no connection reaches.
    cfg.idle_timeout = idle_ms->count() == 0 ? std::chrono::hours(24 * 365) : *idle_ms;
    const auto pending = cli::parse_size(a.max_pending);
    if (!pending || *pending == 0) {
        return usage_error(
            "serve", fmt::format("--max-pending {}: not a size of at least 1 (write 256k, 1m...)",
                                 a.max_pending));
    }
    cfg.max_pending = *pending;
    const auto send_ms = cli::parse_duration(a.send_timeout);
    if (!send_ms) {
        return usage_error(
            "serve", fmt::format("--send-timeout {}: not a duration (write 30, 30s, 500ms or 2m)",
                                 a.send_timeout));
    }
    cfg.send_timeout = send_ms->count() == 0 ? std::chrono::hours(24 * 365) : *send_ms;
    const auto body = cli::parse_size(body_size);
    if (!body || *body > (64u << 20)) {
        return usage_error(
            "serve",
            fmt::format("--body-size {}: not a size up to 64m (write 128, 4k...)", body_size));
    }
    cfg.body_size = *body;
    const auto limit = cli::parse_size(max_body);
    if (!limit) {
        return usage_error("serve",
                           fmt::format("--max-body {}: not a size (write 1m, 64k...)", max_body));
    }
    cfg.limits.max_body_bytes = *limit;
    cfg.batch_wait = std::chrono::microseconds(batch_wait_us);
    if ((a.no_symlinks || a.no_xdev) && a.root.empty())
        return usage_error("serve", fmt::format("{}: an option of --root",
                                                a.no_symlinks ? "--no-symlinks" : "--no-xdev"));
    if (!a.root.empty() && cfg.mode != net::Mode::Http)
        return usage_error("serve", "--root serves files over HTTP, not with --mode echo");
    cfg.root = a.root;
    cfg.resolve.no_symlinks = a.no_symlinks;
    cfg.resolve.no_xdev = a.no_xdev;

    if (engine == "epoll") {
        cfg.engine = net::EngineKind::Epoll;
    } else {
        const std::string why = net::uring_unavailable_reason();
        if (why.empty()) {
            cfg.engine =
                engine == "uring-coro" ? net::EngineKind::UringCoro : net::EngineKind::Uring;
        } else if (engine == "auto") {
            emit(stderr,
                 "uringkit serve: io_uring is not usable here ({}); falling back to the epoll "
                 "engine\n",
                 why);
            cfg.engine = net::EngineKind::Epoll;
        } else {
            emit(stderr,
                 "uringkit serve: --engine {}: io_uring is not usable here: {} (use --engine epoll "
                 "or auto)\n",
                 engine, why);
            return kNoUring;
        }
    }
    if (!a.file_io.empty()) {
        if (a.root.empty()) return usage_error("serve", "--file-io: an option of --root");
        if (cfg.engine != net::EngineKind::Uring && engine != "auto")
            return usage_error("serve", fmt::format("--file-io: an option of the uring engine, "
                                                    "not of {}",
                                                    net::engine_name(cfg.engine)));
    }
    cfg.file_io = a.file_io == "calls"        ? net::FileIo::Calls
                  : a.file_io == "ring"       ? net::FileIo::Ring
                  : a.file_io == "ring-statx" ? net::FileIo::RingStatx
                                              : kDefaultFileIo;
    if (!a.body_path.empty()) {
        if (a.root.empty()) return usage_error("serve", "--body-path: an option of --root");
        if (a.body_path == "sendfile" && cfg.engine != net::EngineKind::Epoll)
            return usage_error("serve", fmt::format("--body-path sendfile: the epoll engine's, "
                                                    "not {}'s (docs/serve.md)",
                                                    net::engine_name(cfg.engine)));
        if (a.body_path == "splice" &&
            (cfg.engine != net::EngineKind::Uring || cfg.file_io == net::FileIo::Calls))
            return usage_error("serve",
                               "--body-path splice: the uring engine's, with its "
                               "files on the ring (--file-io ring or ring-statx)");
        cfg.body_path = a.body_path == "read"       ? net::BodyPath::Read
                        : a.body_path == "sendfile" ? net::BodyPath::Sendfile
                        : a.body_path == "splice"   ? net::BodyPath::Splice
                                                    : net::BodyPath::Auto;
    }
    if (a.recv_bundle) {
        if (cfg.engine != net::EngineKind::Uring) {
            const std::string why =
                fmt::format("--recv-bundle: an option of the uring engine, not of {}",
                            net::engine_name(cfg.engine));
            // With --engine auto the fallback (no io_uring) made it epoll: not a usage error.
            if (engine != "auto") return usage_error("serve", why);
            emit(stderr, "uringkit serve: {}\n", why);
            return kNoUring;
        }
        const std::string why = net::recv_bundle_unavailable_reason();
        if (!why.empty()) {
            emit(stderr, "uringkit serve: --recv-bundle: {}\n", why);
            return kNoUring;
        }
        cfg.recv_bundle = true;
    }
    if (a.recv_incremental) {
        if (cfg.engine != net::EngineKind::Uring || a.recv_bundle) {
            const std::string why =
                fmt::format("--recv-incremental: an option of the uring engine{}",
                            a.recv_bundle ? ", not combined with --recv-bundle" : "");
            if (engine != "auto" || a.recv_bundle) return usage_error("serve", why);
            emit(stderr, "uringkit serve: {}\n", why);
            return kNoUring;
        }
        const std::string why = net::recv_incremental_unavailable_reason();
        if (!why.empty()) {
            emit(stderr, "uringkit serve: --recv-incremental: {}\n", why);
            return kNoUring;
        }
        net::use_recv_incremental(cfg);
    }
    if (batch_wait_given && batch_wait_us > 0 && cfg.engine != net::EngineKind::Epoll &&
        !net::batch_wait_available())
        emit(stderr,
             "uringkit serve: --batch-wait: this kernel has no batching wait "
             "(IORING_FEAT_MIN_TIMEOUT, Linux 6.12); every wait is a plain one\n");

    // Block the stop signals before any thread starts (threads inherit the
    // mask), and take them here with sigtimedwait: no handler, no races.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    std::unique_ptr<net::Server> server;
    try {
        server = std::make_unique<net::Server>(cfg);
    } catch (const std::system_error& e) {
        if (e.code().value() == EINVAL) {
            std::string what = e.what();
            const std::string suffix = ": " + e.code().message();
            if (what.size() > suffix.size() && what.ends_with(suffix))
                what.resize(what.size() - suffix.size());
            return usage_error("serve", what);
        }
        if (!cfg.root.empty() && std::string_view(e.what()).starts_with("--root "))
            emit(stderr, "uringkit serve: {}\n", e.what());
        else
            emit(stderr, "uringkit serve: {} (choose another --bind/--port)\n", e.what());
        return kFailure;
    }
    server->start();
    // The line clients and scripts wait for (with --port 0, the only place
    // the port is told): where it cannot be written the server stops at once.
    const bool announced =
        emit(stdout, "uringkit serve: listening on {} (engine {}, mode {}, {} thread{})\n",
             net::endpoint_name(server->address(), server->port()), net::engine_name(cfg.engine),
             mode, cfg.threads, cfg.threads == 1 ? "" : "s") &&
        flush(stdout);

    const timespec poll_interval{0, 200'000'000};
    bool signalled = false;
    while (announced && !server->finished()) {
        const int sig = sigtimedwait(&stop_signals, nullptr, &poll_interval);
        if (sig == SIGINT || sig == SIGTERM) {
            signalled = true;
            break;
        }
    }
    server->stop();
    try {
        server->wait();
    } catch (const std::exception& e) {
        emit(stderr, "uringkit serve: engine {} failed: {}\n", net::engine_name(cfg.engine),
             e.what());
        return kFailure;
    }
    const net::StatsSnapshot s = server->stats();
    // Under --root: how much of the output the kernel moved from the page cache.
    std::string spliced = cfg.root.empty() ? std::string()
                                           : fmt::format(", {} of {} bytes out spliced",
                                                         s.bytes_spliced, s.bytes_out);
    if (s.body_read_fallbacks != 0)
        spliced +=
            fmt::format(" ({} bodies read: no pipe for their splice)", s.body_read_fallbacks);
    emit(stderr,
         "uringkit serve: stopped{}: {} requests on {} connections ({} rejected, {} idle-closed, "
         "{} send-timed-out), {} system calls{}\n",
         signalled ? " on signal" : "", s.requests, s.accepted, s.rejected, s.idle_closed,
         s.send_timeouts, s.syscalls, spliced);
    return announced ? kOk : kFailure;
}

Register serve_command{Command{
    "serve", "Serve HTTP/1.1 (or TCP echo) on io_uring, or on its epoll twin", 50,
    [](CLI::App& app) -> std::function<int()> {
        auto a = std::make_shared<Args>();
        app.add_option("--mode", a->mode,
                       "http: GET / answers --body-size bytes, GET /stats the counters; "
                       "echo: raw TCP echo")
            ->check(CLI::IsMember({"http", "echo"}))
            ->capture_default_str();
        app.add_option(
               "--engine", a->engine,
               "uring: multishot accept/recv, provided buffers; epoll: "
               "edge-triggered twin; auto: uring, else epoll (saying why); uring-coro: the uring "
               "engine on the coroutine layer")
            ->check(CLI::IsMember({"uring", "epoll", "auto", "uring-coro"}))
            ->capture_default_str();
        app.add_option(
               "--threads", a->threads,
               "Engine threads, each with its own ring, accepting from one shared listening socket")
            ->check(CLI::Range(1u, 256u))
            ->capture_default_str();
        app.add_option("--bind", a->bind,
                       "Address to listen on: IPv4, IPv6, or a host name such as localhost, whose "
                       "first address (getaddrinfo's order, as clients try them) is used and "
                       "printed")
            ->capture_default_str();
        app.add_option("--port", a->port, "TCP port; 0 picks a free one (printed)")
            ->check(CLI::Range(0u, 65535u))
            ->capture_default_str();
        app.add_option("--max-conns", a->max_conns,
                       "Open connections at most; more are accepted and closed at once")
            ->check(CLI::Range(1u, 10'000'000u))
            ->capture_default_str();
        app.add_option("--idle-timeout", a->idle,
                       "Close a connection that completes no request for this long "
                       "(30, 30s, 500ms, 2m; 0: never)")
            ->capture_default_str();
        app.add_option("--max-pending", a->max_pending,
                       "Output one connection may have waiting to be sent "
                       "(256k, 1m...): at this much the server stops reading its requests until "
                       "the client has "
                       "taken half.  The server's output is bounded by --max-conns x (this + one "
                       "response): "
                       "about 2.4 GiB at the defaults")
            ->capture_default_str();
        app.add_option(
               "--send-timeout", a->send_timeout,
               "Close a connection whose output waits and none of it "
               "is taken for this long, like nginx's send_timeout (30, 30s, 500ms, 2m; 0: never)")
            ->capture_default_str();
        app.add_option("--root", a->root,
                       "Serve the files beneath DIR (GET and HEAD; ETag, Last-Modified, 304, "
                       "one byte range, index.html for a directory, no listings) instead of the "
                       "fixed body; each path is resolved by the kernel beneath DIR "
                       "(openat2 RESOLVE_BENEATH), so '..' and absolute symbolic links are 404")
            ->type_name("DIR");
        app.add_flag("--no-symlinks", a->no_symlinks,
                     "With --root: no symbolic link at all on a path (RESOLVE_NO_SYMLINKS); "
                     "without it a relative link that stays beneath DIR is followed");
        app.add_flag("--no-xdev", a->no_xdev,
                     "With --root: no crossing of a mount point beneath DIR (RESOLVE_NO_XDEV)");
        app.add_option("--file-io", a->file_io,
                       "With --root, uring engine: where files are opened, stat'ed, read and "
                       "closed: 'ring' (OPENAT2, READ and CLOSE on the ring, statx(2) on the "
                       "open file; the default), 'ring-statx' (STATX on the ring too: the kernel "
                       "always hands it to a worker thread), 'calls' (system calls from the "
                       "engine thread, as the epoll and uring-coro engines make them)")
            ->check(CLI::IsMember({"ring", "ring-statx", "calls"}))
            ->type_name("WHERE");
        app.add_option("--body-path", a->body_path,
                       "With --root: how a body reaches the socket: 'auto' (by size, as "
                       "measured: bodies under 64 KiB read, larger ones sendfile with the epoll "
                       "engine and splice with the uring engine's files on the ring), 'read' "
                       "(read into the output and sent with the head), 'sendfile' (epoll engine: "
                       "sendfile(2) from the page cache, as nginx), 'splice' (uring engine: "
                       "SPLICE file->pipe->socket on the ring, each handed to a kernel worker)")
            ->check(CLI::IsMember({"auto", "read", "sendfile", "splice"}))
            ->type_name("PATH");
        app.add_option("--body-size", a->body_size, "Bytes of the GET / body")
            ->capture_default_str();
        app.add_option("--max-body", a->max_body,
                       "Request bodies (Content-Length) over this get 413")
            ->capture_default_str();
        app.add_option(
               "--batch-wait", a->batch_wait,
               "Microseconds completions may gather before a uring "
               "engine wakes up (Linux 6.12), used only while many clients each wait long for "
               "their turn "
               "anyway: fewer system calls per request, at most this much added latency; 0: never")
            ->check(CLI::Range(0u, 1'000'000u))
            ->capture_default_str();
        app.add_flag("--recv-bundle", a->recv_bundle,
                     "uring engine: recv bundles (Linux 6.10): one completion "
                     "may fill several provided buffers, so a burst costs one CQE; exit status 3 "
                     "where the kernel "
                     "has none");
        app.add_flag("--recv-incremental", a->recv_incremental,
                     "uring engine: an incremental buffer ring (Linux 6.12) of 128 buffers of 64 "
                     "KiB, each taking "
                     "arrivals until full, so a large message fills one buffer instead of sixteen "
                     "4 KiB ones; exit "
                     "status 3 where the kernel has none");
        group_options(app, "What is served",
                      {"--mode", "--bind", "--port", "--root", "--no-symlinks", "--no-xdev",
                       "--file-io", "--body-size", "--max-body"});
        group_options(
            app, "Engines",
            {"--engine", "--threads", "--batch-wait", "--recv-bundle", "--recv-incremental"});
        group_options(app, "Limits",
                      {"--max-conns", "--idle-timeout", "--max-pending", "--send-timeout"});
        describe(
            app,
            Manual{
                .description =
                    "Answers HTTP/1.1 (keep-alive, pipelining) or echo over TCP on io_uring (a "
                    "hand-written engine and one on the coroutine layer) or on epoll, its twin for "
                    "comparison.  Prints 'listening on ADDR:PORT' once ready.\n\n"
                    "Each connection's unsent output is bounded (--max-pending) and a connection "
                    "that "
                    "takes nothing for --send-timeout is closed, so a client that never reads "
                    "cannot "
                    "grow the server.  SIGINT and SIGTERM stop accepting, finish the responses "
                    "being "
                    "sent (5 s at most), close everything and exit 0.",
                .examples = {{"uringkit serve --port 0",
                              "HTTP on a free port of 127.0.0.1; the port is printed."},
                             {"uringkit serve --mode echo --threads 2 --max-conns 1000",
                              "An echo server on two threads."},
                             {"uringkit serve --root /srv/www --port 8080",
                              "Static files beneath /srv/www; a request never leaves it."},
                             {"uringkit serve --engine epoll --port 8080",
                              "The epoll twin, to compare with the ring under the same load."}},
                .exits = {{0, "stopped by a signal"},
                          {1,
                           "the server failed (bind, --root cannot be opened, an engine error), "
                           "or the 'listening on' line "
                           "could not be written (it then stops at once)"},
                          {2, "bad option"},
                          {3,
                           "--engine uring or uring-coro where io_uring is not usable, or "
                           "--recv-bundle or --recv-incremental where the kernel lacks them"}},
                .see_also = "nginx(8), uringkit-load(1), uringkit-bench-net(1)",
                .doc = "serve.md"});
        CLI::Option* batch_wait = app.get_option("--batch-wait");
        return [a, batch_wait]() -> int { return serve(*a, batch_wait->count() > 0); };
    }}};

}  // namespace
}  // namespace uringkit::cli
