// libFuzzer target for a multishot recv stream (async::RecvStream) and its
// provided buffers, driven through the real kernel: the input is a script
// of what the peer and the consumer do (send a few bytes, take a chunk, keep
// or give back its buffer, let the loop turn, stop and re-create the
// stream), on a buffer ring of 4 buffers of 8 bytes, so the ring runs dry
// (-ENOBUFS), multishots end and re-arm, and chunks queue up.  Whatever the
// order: the bytes arrive whole and in order, every chunk names a buffer of
// the group with at most its size, no buffer is handed out twice, and after
// the peer's EOF with every buffer given back the stream ends.  A stopped
// stream drops the chunks it had queued: the check then goes on from what
// the socket still holds (FIONREAD).
//
// Input: one byte per step, the step in its low 3 bits, an argument above.
#include "uringkit/async/loop.hpp"
#include "uringkit/async/streams.hpp"
#include "uringkit/ring/buffer_ring.hpp"

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <optional>

namespace {

using namespace uringkit;

constexpr unsigned kBuffers = 4;
constexpr std::uint32_t kBufferSize = 8;

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "recv_stream_fuzz: %s\n", what);
    std::abort();
}

std::byte byte_at(std::uint64_t i) {
    return static_cast<std::byte>((i * 131 + 7) & 0xff);
}

struct Run {
    Run(async::Loop& l, BufferRing& p, int r, int w) : loop(l), pool(p), reader(r), writer(w) {}
    async::Loop& loop;
    BufferRing& pool;
    int reader, writer;
    std::uint64_t sent = 0, received = 0;
    std::deque<async::RecvStream::Chunk> held;
    bool out[kBuffers] = {};  // buffers the consumer holds

    void check(const async::RecvStream::Chunk& c) {
        if (c.res <= 0) return;
        if (c.id() >= kBuffers) fail("a chunk names a buffer outside the group");
        if (out[c.id()]) fail("a buffer handed out twice");
        if (static_cast<std::uint32_t>(c.res) > kBufferSize ||
            c.bytes().size() != static_cast<std::size_t>(c.res))
            fail("a chunk longer than its buffer");
        if (c.bytes().data() != pool.buffer(c.id()).data())
            fail("a chunk's bytes are not in its buffer");
        for (std::size_t i = 0; i < c.bytes().size(); ++i)
            if (c.bytes()[i] != byte_at(received + i)) fail("bytes out of order or changed");
        received += c.bytes().size();
        out[c.id()] = true;
    }
    // The chunk goes, and its buffer back to the ring with it.
    void give_back() {
        out[held.front().id()] = false;
        held.pop_front();
    }

    async::Task<void> script(const std::uint8_t* data, std::size_t size) {
        auto in = std::make_unique<async::RecvStream>(loop, Fd{reader}, pool);
        for (std::size_t k = 0; k < size; ++k) {
            const unsigned step = data[k] & 7, arg = data[k] >> 3;
            if (step <= 1) {  // the peer sends 1..32 bytes, as many as the socket takes
                std::byte b[32];
                const std::size_t n = arg + 1;
                for (std::size_t i = 0; i < n; ++i) b[i] = byte_at(sent + i);
                // Never block: with nobody reading, the socket's buffer fills
                // (each small send costs a whole skb of it), and a blocked
                // send would hang the run until a signal cut it short.
                const ssize_t put = ::send(writer, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (put < 0 && errno != EAGAIN && errno != EWOULDBLOCK) fail("send");
                if (put > 0) sent += static_cast<std::uint64_t>(put);
            } else if (step == 2 ||
                       step == 3) {  // take a chunk if one is there; keep it or give it back
                if (!in->ready()) continue;
                auto c = co_await in->next();
                if (c.res <= 0) fail("the stream ended while the peer was still open");
                check(c);
                held.push_back(std::move(c));
                if (step == 2 || held.size() > 2) give_back();
            } else if (step == 4) {
                if (!held.empty()) give_back();
            } else if (step == 5 || step == 6) {
                co_await loop.nop();  // a turn: completions are dispatched
            } else {                  // stop the stream and start another on the same socket
                co_await in->stop();
                while (!held.empty()) give_back();
                in.reset();
                // Chunks queued and not taken went back with the stream:
                // their bytes are gone.  What the socket still holds comes next.
                int unread = 0;
                if (::ioctl(reader, FIONREAD, &unread) != 0) fail("FIONREAD");
                if (sent - static_cast<std::uint64_t>(unread) < received)
                    fail("more taken than the socket gave");
                received = sent - static_cast<std::uint64_t>(unread);
                in = std::make_unique<async::RecvStream>(loop, Fd{reader}, pool);
            }
        }
        // The peer is done; the consumer gives everything back and reads to the end.
        ::shutdown(writer, SHUT_WR);
        while (!held.empty()) give_back();
        for (unsigned turns = 0;; ++turns) {
            if (turns > 100000) fail("the stream never ended after the peer's EOF");
            if (!in->ready()) {
                co_await loop.nop();
                continue;
            }
            auto c = co_await in->next();
            if (c.res == 0) break;
            if (c.res < 0) fail("an error instead of the end");
            check(c);
            out[c.id()] = false;
            c.reset();
        }
        if (received != sent) fail("bytes lost");
    }
};

struct Fixture {
    std::optional<Ring> ring;
    std::optional<BufferRing> pool;
    std::optional<async::Loop> loop;
};

Fixture& fixture() {
    static Fixture* f = [] {
        auto* made = new Fixture;
        try {
            made->ring.emplace(64);
            made->pool.emplace(*made->ring, 3, kBuffers, kBufferSize);
            made->loop.emplace(*made->ring);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "recv_stream_fuzz: no multishot recv here (%s): nothing fuzzed\n",
                         e.what());
            std::abort();
        }
        return made;
    }();
    return *f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 512) return 0;  // longer scripts add time, not states
    Fixture& f = fixture();
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) fail("socketpair");
    Run run{*f.loop, *f.pool, sv[0], sv[1]};
    f.loop->block_on(run.script(data, size));
    ::close(sv[0]);
    ::close(sv[1]);
    return 0;
}
