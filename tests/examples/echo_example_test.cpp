// examples/echo_server.cpp as a user runs it: every byte of two clients comes
// back in order; a client that stays silent is cancelled at the idle time (it
// sees EOF); SIGTERM cancels the rest, the loop drains, and the server exits 0.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace {

int connect_to(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    timeval tv{10, 0};  // a hang fails the test instead of blocking it
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

std::string read_exactly(int fd, std::size_t n) {
    std::string s;
    char buf[4096];
    while (s.size() < n) {
        const ssize_t r = ::recv(fd, buf, std::min(sizeof buf, n - s.size()), 0);
        if (r <= 0) break;
        s.append(buf, static_cast<std::size_t>(r));
    }
    return s;
}

TEST(EchoExample, EchoesIdlesOutAndStopsOnSigterm) {
    int out[2];
    ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::dup2(out[1], 1);
        ::execl(EXAMPLE_ECHO, EXAMPLE_ECHO, "0", "300", static_cast<char*>(nullptr));
        _exit(127);
    }
    ::close(out[1]);
    FILE* f = ::fdopen(out[0], "r");
    unsigned port = 0;
    ASSERT_EQ(std::fscanf(f, "listening on %u", &port), 1);

    const int a = connect_to(static_cast<std::uint16_t>(port));
    const int b = connect_to(static_cast<std::uint16_t>(port));
    ASSERT_GE(a, 0);
    ASSERT_GE(b, 0);
    std::string da(300000, '\0'), db(70000, '\0');
    for (std::size_t i = 0; i < da.size(); ++i) da[i] = static_cast<char>(i * 7 + 1);
    for (std::size_t i = 0; i < db.size(); ++i) db[i] = static_cast<char>(i * 11 + 5);
    std::string ga, gb;
    for (std::size_t off = 0; off < da.size(); off += 10000) {  // interleaved, in pieces
        ASSERT_EQ(::send(a, da.data() + off, 10000, MSG_NOSIGNAL), 10000);
        ga += read_exactly(a, 10000);
        if (off < db.size()) {
            ASSERT_EQ(::send(b, db.data() + off, 10000, MSG_NOSIGNAL), 10000);
            gb += read_exactly(b, 10000);
        }
    }
    EXPECT_TRUE(ga == da) << "client a got " << ga.size() << " bytes back";
    EXPECT_TRUE(gb == db) << "client b got " << gb.size() << " bytes back";

    // Silent: cancelled at the idle time, so it reads EOF (not the 10 s guard).
    const int silent = connect_to(static_cast<std::uint16_t>(port));
    char c;
    EXPECT_EQ(::recv(silent, &c, 1, 0), 0) << "the idle connection was not closed";

    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
    EXPECT_EQ(::recv(a, &c, 1, 0), 0) << "shutdown did not close client a";
    ::close(a);
    ::close(b);
    ::close(silent);
    std::fclose(f);
}

}  // namespace
