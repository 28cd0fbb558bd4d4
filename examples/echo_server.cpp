// A TCP echo server on uringkit::async: a multishot accept as a stream, one
// coroutine per connection reading through a multishot recv (RecvStream)
// into a shared provided-buffer ring, and cancellation: a connection idle for
// longer than --idle-ms is cancelled, and SIGINT/SIGTERM cancel everything
// (the accept and every connection's recv), then the loop drains and exits.
//
//     example_echo_server [PORT [IDLE_MS]]     (defaults: 0 = any free port, 10000)
//
// Prints "listening on PORT" once ready.  Exit status: 0 after a signal,
// 1 a setup call failed (named), 2 usage, 3 io_uring is not usable here.
#include <uringkit/async/loop.hpp>
#include <uringkit/async/streams.hpp>
#include <uringkit/ops/net.hpp>
#include <uringkit/sys/error.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stop_token>

namespace {

using namespace uringkit;
using namespace std::chrono_literals;

using Clock = std::chrono::steady_clock;

struct Server {
    async::Loop& loop;
    BufferRing& buffers;
    std::chrono::milliseconds idle;
    std::map<int, Clock::time_point>
        open;               // connection -> last data; for idle and shutdown cancels
    std::stop_source stop;  // ends the idle ticker's sleep at shutdown
    bool stopping = false;

    // Echoes until EOF, an error, or a cancel (idle or shutdown).
    async::Task<void> connection(int fd) {
        open[fd] = Clock::now();
        {
            async::RecvStream in(loop, Fd{fd}, buffers);
            for (;;) {
                auto chunk = co_await in.next();
                if (chunk.res <= 0) break;  // 0: EOF; -ECANCELED: idle or shutdown
                open[fd] = Clock::now();
                const async::Result sent =
                    co_await loop.send_all(Fd{fd}, chunk.bytes().data(), chunk.bytes().size());
                if (!sent.ok()) break;
            }            // each chunk's buffer goes back to the ring as the chunk goes
        }                // the stream cancels and drains itself if still armed
        open.erase(fd);  // before the close: a new connection may get the number
        co_await loop.close(Fd{fd});
    }

    // Every quarter of the idle time, cancels the connections idle too long.
    async::Task<void> idle_ticker() {
        __kernel_timespec tick{0, static_cast<long long>(idle.count()) * 250000};
        tick.tv_sec = tick.tv_nsec / 1000000000;
        tick.tv_nsec %= 1000000000;
        while (!stopping) {
            co_await loop.submit(op::Timeout(&tick), stop.get_token());  // -ECANCELED at shutdown
            const auto now = Clock::now();
            for (const auto& [fd, last] : open)
                if (now - last > idle) loop.post(op::AsyncCancel::file(Fd{fd}).all());
        }
    }

    async::Task<void> acceptor(int listener) {
        async::AcceptStream accepts(loop, Fd{listener});
        accepts.arm();
        for (;;) {
            const async::Result c = co_await accepts.next();
            if (c.ok() && !stopping)
                loop.spawn(connection(c.res));
            else if (c.ok())
                ::close(c.res);
            if (c.more()) continue;
            if (stopping || c.cancelled()) break;
            accepts.arm();  // the kernel ended the multishot (EMFILE...): go on
        }
    }

    // Waits for SIGINT/SIGTERM, then cancels the accept, every connection and the ticker.
    async::Task<void> on_signal(int sigfd, int listener) {
        signalfd_siginfo info{};
        co_await loop.read(Fd{sigfd}, &info, sizeof info, 0);
        stopping = true;
        stop.request_stop();
        loop.post(op::AsyncCancel::file(Fd{listener}).all());
        for (const auto& entry : open) loop.post(op::AsyncCancel::file(Fd{entry.first}).all());
    }
};

}  // namespace

int main(int argc, char** argv) {
    if (argc > 3) {
        std::fprintf(stderr, "usage: %s [PORT [IDLE_MS]]\n", argv[0]);
        return 2;
    }
    const long port = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 0;
    const long idle_ms = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 10000;
    if (port < 0 || port > 65535 || idle_ms < 1) {
        std::fprintf(stderr, "%s: PORT must be 0..65535 and IDLE_MS at least 1\n", argv[0]);
        return 2;
    }
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    const int sigfd = ::signalfd(-1, &mask, SFD_CLOEXEC);
    try {
        Ring ring(256);
        BufferRing buffers(ring, 0, 64, 4096);
        async::Loop loop(ring);
        Server server{loop, buffers, std::chrono::milliseconds(idle_ms), {}, {}};
        // Setup through the ring too (socket, bind, listen: 5.19 and 6.11).
        const auto listener =
            loop.block_on([](async::Loop& l, long p) -> async::Task<async::Result> {
                const async::Result s =
                    co_await l.submit(op::Socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC));
                if (!s.ok()) co_return s;
                const int one = 1;
                ::setsockopt(s.res, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
                sockaddr_in a{};
                a.sin_family = AF_INET;
                a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                a.sin_port = htons(static_cast<std::uint16_t>(p));
                async::Result r = co_await l.submit(
                    op::Bind(Fd{s.res}, reinterpret_cast<const sockaddr*>(&a), sizeof a));
                if (r.res == -EOPNOTSUPP)
                    r.res =
                        ::bind(s.res, reinterpret_cast<const sockaddr*>(&a), sizeof a) ? -errno : 0;
                if (!r.ok()) co_return r;
                r = co_await l.submit(op::Listen(Fd{s.res}, 128));
                if (r.res == -EOPNOTSUPP) r.res = ::listen(s.res, 128) ? -errno : 0;
                co_return r.ok() ? s : r;
            }(loop, port));
        if (!listener.ok()) {
            std::fprintf(stderr, "%s: listening on 127.0.0.1:%ld: %s\n", argv[0], port,
                         listener.error().message().c_str());
            return 1;
        }
        sockaddr_in bound{};
        socklen_t len = sizeof bound;
        ::getsockname(listener.res, reinterpret_cast<sockaddr*>(&bound), &len);
        std::printf("listening on %u\n", ntohs(bound.sin_port));
        std::fflush(stdout);
        loop.spawn(server.acceptor(listener.res));
        loop.spawn(server.on_signal(sigfd, listener.res));
        loop.spawn(server.idle_ticker());
        loop.run();  // until the signal's cancels have unwound every task
        ::close(listener.res);
        return 0;
    } catch (const RingError& e) {
        std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
        return 3;
    }
}
