// Small helpers shared by the feature tests: temporary files with a known byte
// pattern, pipes and loopback sockets that close themselves, a reaper that
// collects exactly N completions (waiting in the kernel, never sleeping), and
// REQUIRE_OP, which skips a test on a kernel that lacks an opcode.
#pragma once

#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/uapi.hpp"
#include "uringkit/util/unique_fd.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace uringkit::testing {

// Byte i of the pattern with `seed`: every offset holds a different value
// within a 251-byte period (prime, so it never lines up with a power-of-two
// block), so a read from the wrong offset is caught.
inline std::byte pattern_byte(std::size_t i, unsigned seed = 0) noexcept {
    return static_cast<std::byte>((i + seed * 7u) % 251u);
}
inline std::vector<std::byte> pattern(std::size_t n, unsigned seed = 0) {
    std::vector<std::byte> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = pattern_byte(i, seed);
    return v;
}

using util::UniqueFd;

// A temporary regular file, removed on destruction.  Lives in $TMPDIR (or
// /tmp), optionally pre-filled with pattern(size, seed).
class TempFile {
public:
    explicit TempFile(std::size_t fill = 0, unsigned seed = 0) {
        const char* dir = std::getenv("TMPDIR");
        path_ = std::string(dir && *dir ? dir : "/tmp") + "/uringkit-test-XXXXXX";
        fd_ = UniqueFd(::mkstemp(path_.data()));
        if (fd_.get() < 0) throw std::runtime_error("mkstemp failed for " + path_);
        if (fill) {
            const auto data = pattern(fill, seed);
            std::size_t done = 0;
            while (done < fill) {
                const ssize_t n =
                    ::pwrite(fd_.get(), data.data() + done, fill - done, static_cast<off_t>(done));
                if (n <= 0) throw std::runtime_error("pwrite failed for " + path_);
                done += static_cast<std::size_t>(n);
            }
        }
    }
    ~TempFile() { ::unlink(path_.c_str()); }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;

    int fd() const noexcept { return fd_.get(); }
    const std::string& path() const noexcept { return path_; }
    // The whole file as the kernel has it now (plain pread, not io_uring).
    std::vector<std::byte> contents() const {
        std::vector<std::byte> out;
        std::byte buf[65536];
        off_t off = 0;
        for (;;) {
            const ssize_t n = ::pread(fd_.get(), buf, sizeof buf, off);
            if (n <= 0) break;
            out.insert(out.end(), buf, buf + n);
            off += n;
        }
        return out;
    }

private:
    std::string path_;
    UniqueFd fd_;
};

struct Pipe {
    UniqueFd read_end, write_end;
    Pipe() {
        int p[2];
        if (::pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
        read_end.reset(p[0]);
        write_end.reset(p[1]);
    }
};

// A connected AF_UNIX stream pair: fd[0] and fd[1].
struct SocketPair {
    int fd[2] = {-1, -1};
    SocketPair() {
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd) != 0)
            throw std::runtime_error("socketpair failed");
    }
    ~SocketPair() {
        ::close(fd[0]);
        ::close(fd[1]);
    }
    SocketPair(const SocketPair&) = delete;
    SocketPair& operator=(const SocketPair&) = delete;
};

// A TCP listener on 127.0.0.1 with a kernel-chosen port.
struct Listener {
    UniqueFd fd;
    sockaddr_in addr{};
    Listener() {
        fd.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        if (fd.get() < 0) throw std::runtime_error("socket failed");
        int one = 1;
        ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
            throw std::runtime_error("bind failed");
        socklen_t len = sizeof addr;
        ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len);
        if (::listen(fd.get(), 64) != 0) throw std::runtime_error("listen failed");
    }
    // A blocking client connected with plain connect(2): loopback connects
    // complete from the backlog without the listener accepting.
    UniqueFd connect_client() const {
        UniqueFd c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        if (::connect(c.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
            throw std::runtime_error("connect failed");
        return c;
    }
};

// A connected pair of loopback TCP sockets (client, server side).
struct TcpPair {
    UniqueFd client, server;
    TcpPair() {
        Listener l;
        client = l.connect_client();
        server.reset(::accept4(l.fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (server.get() < 0) throw std::runtime_error("accept failed");
    }
};

// Submits what is prepared and collects exactly `n` completions, waiting in
// the kernel for each missing one; completions beyond `n` stay in the CQ for
// the next call.  A failing enter fails the test.
inline std::vector<Completion> reap(Ring& ring, unsigned n) {
    std::vector<Completion> out(n);
    unsigned got = 0;
    while (got < n) {
        if (ring.cq_ready() == 0) {
            const int r = ring.submit_and_wait(1);
            if (r < 0) {
                ADD_FAILURE() << "submit_and_wait: " << r;
                break;
            }
        }
        got += ring.copy_completions(std::span<Completion>(out).subspan(got));
    }
    out.resize(got);
    return out;
}

inline Completion reap_one(Ring& ring) {
    auto v = reap(ring, 1);
    return v.empty() ? Completion{~0ull, -9999, 0} : v.front();
}

// The completion for `user_data` among `cs` (the test fails if it is not
// there exactly once).
inline Completion find(const std::vector<Completion>& cs, std::uint64_t user_data) {
    const Completion* found = nullptr;
    int count = 0;
    for (const auto& c : cs)
        if (c.user_data == user_data) {
            found = &c;
            ++count;
        }
    EXPECT_EQ(count, 1) << "user_data " << user_data << " completed " << count << " times";
    return found ? *found : Completion{user_data, -9999, 0};
}

// Empty when the running kernel has opcode `op` (IORING_REGISTER_PROBE on
// `ring` lists it as supported); otherwise the reason a test skips, naming
// the opcode, the release that added it and the one running: "kernel lacks
// IORING_OP_STATX (needs Linux 5.6), have Linux 5.4.0-150-generic".  A kernel without the probe
// (before 5.6, below the supported 6.1) throws the probe's RingError: it cannot say.
inline std::string missing_opcode(const Ring& ring, unsigned op) {
    if (ring.probe_opcodes().supported(op)) return {};
    std::string what;
    if (const char* name = sys::opcode_name(op)) {
        what = "IORING_OP_";
        for (const char* c = name; *c; ++c)
            what += static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
    } else {
        what = "opcode " + std::to_string(op);
    }
    std::string why = "kernel lacks " + what;
    if (const char* since = sys::opcode_since(op))
        why += std::string(" (needs Linux ") + since + ")";
    utsname u{};
    why += std::string(", have Linux ") + (::uname(&u) == 0 ? u.release : "unknown");
    return why;
}

}  // namespace uringkit::testing

// Skips the current test, with missing_opcode()'s reason, when the running
// kernel lacks the opcode `op` (an operation's code: op::Statx::code):
//   REQUIRE_OP(ring, op::Statx::code);
#define REQUIRE_OP(ring, op)                                                                 \
    do {                                                                                     \
        const std::string uringkit_why_ = ::uringkit::testing::missing_opcode((ring), (op)); \
        if (!uringkit_why_.empty()) GTEST_SKIP() << uringkit_why_;                           \
    } while (0)
