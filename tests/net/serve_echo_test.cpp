// `serve --mode echo`: every byte comes back, in order, on every engine, with
// several clients at once.
#include "serve_test_support.hpp"

#include <gtest/gtest.h>

#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

using namespace serve_test;
using uringkit::net::EngineKind;

namespace {

class ServeEcho : public PerEngine {};

// Six clients at once, each writing about 256 KiB in writes of odd sizes,
// get every byte back in order; the server's counters add up.
void echo_six_clients(net::ServerConfig c) {
    c.mode = net::Mode::Echo;
    c.threads = 2;
    TestServer srv(c);
    constexpr int kClients = 6;
    std::vector<std::string> payloads(kClients);
    std::mt19937 rng(7);
    for (auto& p : payloads) {
        p.resize(256 * 1024 + rng() % 4096);
        for (char& ch : p) ch = static_cast<char>(rng());
    }
    std::vector<std::string> got(kClients);
    std::vector<std::thread> clients;
    for (int i = 0; i < kClients; ++i) {
        clients.emplace_back([&, i] {
            Socket s(srv.port());
            std::thread writer([&] {
                // Writes of odd sizes, so recv boundaries fall anywhere.
                std::string_view rest = payloads[i];
                std::size_t step = 1;
                while (!rest.empty()) {
                    const std::size_t n = std::min(rest.size(), step);
                    if (!s.send(rest.substr(0, n))) break;
                    rest.remove_prefix(n);
                    step = step * 7 % 65521 + 1;
                }
                ::shutdown(s.fd, SHUT_WR);
            });
            bool closed = false;
            got[i] = s.read_all(&closed);
            writer.join();
        });
    }
    for (auto& t : clients) t.join();
    for (int i = 0; i < kClients; ++i) {
        ASSERT_EQ(got[i].size(), payloads[i].size()) << i;
        EXPECT_TRUE(got[i] == payloads[i]) << i;
    }
    srv.finish();
    EXPECT_EQ(srv.final_stats().active, 0u);
    std::uint64_t total = 0;
    for (auto& p : payloads) total += p.size();
    EXPECT_EQ(srv.final_stats().bytes_in, total);
    EXPECT_EQ(srv.final_stats().bytes_out, total);
    if (c.engine == EngineKind::Uring) {  // the engine that counts its buffers
        // An incremental ring counts a buffer once full: those still filling are not in it.
        const std::uint64_t filling = c.recv_incremental ? c.buffer_count : 0;
        EXPECT_GE((srv.final_stats().recv_buffers + filling) * c.buffer_size, total)
            << "each buffer holds at most buffer_size";
    }
}

TEST_P(ServeEcho, BytesComeBackInOrder) {
    echo_six_clients(config());
}

// Recv bundles with 64-byte buffers: a completion spans many buffers, taken
// from a ring the connections of a thread share and recycle out of order.
TEST(ServeEchoBundle, BytesComeBackInOrderWithSmallBuffers) {
    const std::string why = net::recv_bundle_unavailable_reason();
    if (!why.empty()) GTEST_SKIP() << why;
    net::ServerConfig c;
    c.engine = EngineKind::Uring;
    c.grace = std::chrono::milliseconds(500);
    c.recv_bundle = true;
    c.buffer_size = 64;
    c.buffer_count = 256;
    echo_six_clients(c);
}

// An incremental ring of few buffers: many arrivals share each buffer, from
// different connections, at increasing offsets.
TEST(ServeEchoIncremental, BytesComeBackInOrderSharingBuffers) {
    const std::string why = net::recv_incremental_unavailable_reason();
    if (!why.empty()) GTEST_SKIP() << why;
    net::ServerConfig c;
    c.engine = EngineKind::Uring;
    c.grace = std::chrono::milliseconds(500);
    c.recv_incremental = true;
    c.buffer_size = 16 * 1024;
    c.buffer_count = 8;
    echo_six_clients(c);
}

INSTANTIATE_TEST_SUITE_P(Engines, ServeEcho, testing::ValuesIn(engines()), engine_param_name);

// The serve tests run the uring engines only where uring_unavailable_reason()
// is empty, so a trial that wrongly failed would quietly skip them all.  On
// a kernel that has multishot recv (6.0+) and lets this process use io_uring
// it must pass.
TEST(ServeEngines, UringTrialPassesWhereTheKernelHasMultishotRecv) {
    utsname u{};
    ASSERT_EQ(::uname(&u), 0);
    unsigned major = 0, minor = 0;
    ASSERT_EQ(std::sscanf(u.release, "%u.%u", &major, &minor), 2) << u.release;
    if (major < 6) GTEST_SKIP() << "Linux " << u.release << " predates multishot recv (6.0)";
    const int fd = static_cast<int>(::syscall(__NR_io_uring_setup, 1, nullptr));
    if (fd < 0 && errno != EFAULT)
        GTEST_SKIP() << "io_uring_setup refused here: " << std::strerror(errno);
    EXPECT_EQ(net::uring_unavailable_reason(), "");
}

}  // namespace
