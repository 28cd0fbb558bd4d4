// The opcodes after 6.0, each checked by what it changed: futex words woken
// and counted, a child's exit status, a bound address, bytes through pipes,
// files and sockets.  A kernel without the opcode (the probe says so) skips
// the test with the release it needs and the one it has; an opcode the probe
// lists must work.  Every wait is bounded: a lost wake fails, never hangs.
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/big_ring.hpp"
#include "uringkit/ring/buffer_ring.hpp"

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <chrono>
#include <climits>
#include <cstring>
#include <set>
#include <string>

using namespace uringkit;
using namespace uringkit::testing;
using namespace std::chrono_literals;

namespace {

std::string kernel_release() {
    utsname u{};
    return ::uname(&u) == 0 ? u.release : "unknown";
}

// Exactly `n` completions, or a failure after 10 s: a wake that never comes
// ends the test instead of hanging it.
std::vector<Completion> reap_bounded(Ring& ring, unsigned n) {
    std::vector<Completion> out(n);
    unsigned got = 0;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (got < n) {
        if (ring.cq_ready() == 0) {
            const auto left = deadline - std::chrono::steady_clock::now();
            if (left <= 0s) {
                ADD_FAILURE() << "no completion within 10 s (" << got << " of " << n << ")";
                break;
            }
            const int r = ring.submit_and_wait_for(1, left);
            if (r < 0 && r != -ETIME && r != -EINTR) {
                ADD_FAILURE() << "submit_and_wait_for: " << r;
                break;
            }
        }
        got += ring.copy_completions(std::span<Completion>(out).subspan(got));
    }
    out.resize(got);
    return out;
}

Completion reap_one_bounded(Ring& ring) {
    auto v = reap_bounded(ring, 1);
    return v.empty() ? Completion{~0ull, -9999, 0} : v.front();
}

std::string read_some(int fd, std::size_t n) {
    std::string s(n, '\0');
    const ssize_t got = ::read(fd, s.data(), n);
    s.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
    return s;
}

TEST(NewerOps, FutexWaitEndsOnWakeAndWakeCountsWaiters) {
    Ring ring(8);
    REQUIRE_OP(ring, op::FutexWait::code);
    std::uint32_t word = 0;
    // A word that does not hold the expected value: -EAGAIN at once.
    ring.prepare(op::FutexWait(&word, 1)).user_data(9);
    EXPECT_EQ(reap_one_bounded(ring).res, -EAGAIN);

    // Two waiters queued in order, then a wake of one: it names one waiter.
    ring.prepare(op::FutexWait(&word, 0)).user_data(1);
    ring.prepare(op::FutexWait(&word, 0)).user_data(2);
    ring.prepare(op::FutexWake(&word, 1)).user_data(3);
    auto first = reap_bounded(ring, 2);
    ASSERT_EQ(first.size(), 2u);
    EXPECT_EQ(find(first, 3).res, 1) << "one waiter woken";
    const Completion woken = first[0].user_data == 3 ? first[1] : first[0];
    EXPECT_TRUE(woken.user_data == 1 || woken.user_data == 2);
    EXPECT_EQ(woken.res, 0);
    EXPECT_EQ(ring.cq_ready(), 0u) << "the other waiter is still waiting";

    // A waiter whose mask the wake does not share stays; the other wakes.
    ring.prepare(op::FutexWait(&word, 0).mask(0x1)).user_data(7);
    ring.prepare(op::FutexWake(&word, INT_MAX).mask(0x2)).user_data(5);
    auto second = reap_bounded(ring, 2);
    EXPECT_EQ(find(second, 5).res, 1);
    EXPECT_EQ(find(second, woken.user_data == 1 ? 2 : 1).res, 0);
    // Nobody waits now: a wake counts 0.
    EXPECT_EQ(ring.cq_ready(), 0u) << "the mask-0x1 waiter is still waiting";
    ring.prepare(op::FutexWake(&word, INT_MAX).mask(0x1)).user_data(6);
    auto third = reap_bounded(ring, 2);
    EXPECT_EQ(find(third, 6).res, 1);
    EXPECT_EQ(find(third, 7).res, 0);
    // Nobody waits now: a wake counts 0.
    ring.prepare(op::FutexWake(&word, 1)).user_data(8);
    EXPECT_EQ(reap_one_bounded(ring).res, 0);
}

TEST(NewerOps, FutexWaitvNamesTheWordThatWoke) {
    Ring ring(8);
    REQUIRE_OP(ring, op::FutexWaitv::code);
    std::uint32_t a = 0, b = 0;
    futex_waitv v[2]{};
    v[0].val = 0;
    v[0].uaddr = reinterpret_cast<std::uintptr_t>(&a);
    v[0].flags = op::kFutexPrivate32;
    v[1] = v[0];
    v[1].uaddr = reinterpret_cast<std::uintptr_t>(&b);
    ring.prepare(op::FutexWaitv(v, 2)).user_data(1);
    ring.prepare(op::FutexWake(&b, 1)).user_data(2);
    const auto cs = reap_bounded(ring, 2);
    EXPECT_EQ(find(cs, 2).res, 1);
    EXPECT_EQ(find(cs, 1).res, 1) << "entry 1 (b) woke the wait";
    // One word already changed: -EAGAIN, nothing queued.
    a = 5;
    ring.prepare(op::FutexWaitv(v, 2)).user_data(3);
    EXPECT_EQ(reap_one_bounded(ring).res, -EAGAIN);
}

TEST(NewerOps, WaitidReportsExitStatusAndSignal) {
    Ring ring(4);
    REQUIRE_OP(ring, op::Waitid::code);
    const pid_t exits = ::fork();
    ASSERT_GE(exits, 0);
    if (exits == 0) ::_exit(42);
    siginfo_t info{};
    ring.prepare(op::Waitid(P_PID, static_cast<id_t>(exits), &info, WEXITED)).user_data(1);
    ASSERT_EQ(reap_one_bounded(ring).res, 0);
    EXPECT_EQ(info.si_signo, SIGCHLD);
    EXPECT_EQ(info.si_pid, exits);
    EXPECT_EQ(info.si_code, CLD_EXITED);
    EXPECT_EQ(info.si_status, 42);
    EXPECT_EQ(::waitpid(exits, nullptr, WNOHANG), -1) << "waitid reaped the child";

    // Armed before the child dies: it completes at the death.
    const pid_t killed = ::fork();
    ASSERT_GE(killed, 0);
    if (killed == 0) {
        for (;;) ::pause();
    }
    siginfo_t kinfo{};
    ring.prepare(op::Waitid(P_PID, static_cast<id_t>(killed), &kinfo, WEXITED)).user_data(2);
    ASSERT_GE(ring.submit(), 0);
    ASSERT_EQ(::kill(killed, SIGKILL), 0);
    ASSERT_EQ(reap_one_bounded(ring).res, 0);
    EXPECT_EQ(kinfo.si_pid, killed);
    EXPECT_EQ(kinfo.si_code, CLD_KILLED);
    EXPECT_EQ(kinfo.si_status, SIGKILL);
    // No such child left.
    ring.prepare(op::Waitid(P_PID, static_cast<id_t>(killed), &kinfo, WEXITED)).user_data(3);
    EXPECT_EQ(reap_one_bounded(ring).res, -ECHILD);
}

TEST(NewerOps, BindThenListenAcceptsAConnection) {
    Ring ring(4);
    REQUIRE_OP(ring, op::Bind::code);
    REQUIRE_OP(ring, op::Listen::code);
    const UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    ASSERT_GE(s.get(), 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ring.prepare(op::Bind(Fd{s.get()}, reinterpret_cast<const sockaddr*>(&addr), sizeof addr))
        .user_data(1);
    ASSERT_EQ(reap_one_bounded(ring).res, 0);
    sockaddr_in bound{};
    socklen_t len = sizeof bound;
    ASSERT_EQ(::getsockname(s.get(), reinterpret_cast<sockaddr*>(&bound), &len), 0);
    EXPECT_EQ(bound.sin_family, AF_INET);
    EXPECT_EQ(bound.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
    EXPECT_NE(bound.sin_port, 0) << "port 0 asks the kernel for one";

    ring.prepare(op::Listen(Fd{s.get()}, 4)).user_data(2);
    ASSERT_EQ(reap_one_bounded(ring).res, 0);
    const UniqueFd client(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    ASSERT_EQ(::connect(client.get(), reinterpret_cast<const sockaddr*>(&bound), sizeof bound), 0);
    const UniqueFd server(::accept4(s.get(), nullptr, nullptr, SOCK_CLOEXEC));
    ASSERT_GE(server.get(), 0);
    ASSERT_EQ(::send(client.get(), "listening", 9, 0), 9);
    EXPECT_EQ(read_some(server.get(), 64), "listening");
}

TEST(NewerOps, ReadMultishotDeliversEachPieceThenEndsAtEof) {
    Ring ring(8);
    REQUIRE_OP(ring, op::ReadMultishot::code);
    BufferRing buffers(ring, 3, 4, 64);
    Pipe pipe;
    const std::string pieces[] = {"first piece", "the second, longer piece", "3"};
    ring.prepare(op::ReadMultishot(Fd{pipe.read_end.get()}, 3)).user_data(1);
    ASSERT_GE(ring.submit(), 0);
    std::string got;
    for (const std::string& p : pieces) {
        ASSERT_EQ(::write(pipe.write_end.get(), p.data(), p.size()),
                  static_cast<ssize_t>(p.size()));
        const Completion c = reap_one_bounded(ring);
        ASSERT_EQ(c.res, static_cast<std::int32_t>(p.size())) << "one completion per piece";
        EXPECT_TRUE(c.more()) << "still armed";
        ASSERT_TRUE(c.buffer_id().has_value());
        const auto d = buffers.data(*c.buffer_id(), static_cast<std::size_t>(c.res));
        got.append(reinterpret_cast<const char*>(d.data()), d.size());
        buffers.recycle(*c.buffer_id());
    }
    EXPECT_EQ(got, pieces[0] + pieces[1] + pieces[2]);
    pipe.write_end.reset();
    const Completion end = reap_one_bounded(ring);
    EXPECT_EQ(end.res, 0) << "EOF";
    EXPECT_FALSE(end.more()) << "the final completion has no IORING_CQE_F_MORE";
    io_uring_sqe s{};
    op::ReadMultishot(Fd{0}, 3).prepare(s);
    EXPECT_TRUE(op::is_multishot(s)) << "a stream's operation, refused by Loop::submit()";
}

TEST(NewerOps, FtruncateShrinksAndExtends) {
    Ring ring(4);
    REQUIRE_OP(ring, op::Ftruncate::code);
    TempFile file(8192, 5);
    ring.prepare(op::Ftruncate(Fd{file.fd()}, 1000)).user_data(1);
    ASSERT_EQ(reap_one_bounded(ring).res, 0);
    auto bytes = file.contents();
    ASSERT_EQ(bytes.size(), 1000u);
    const auto want = pattern(1000, 5);
    EXPECT_EQ(bytes, want) << "the bytes kept are the file's first 1000";
    ring.prepare(op::Ftruncate(Fd{file.fd()}, 3000)).user_data(2);
    ASSERT_EQ(reap_one_bounded(ring).res, 0);
    bytes = file.contents();
    ASSERT_EQ(bytes.size(), 3000u);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), bytes.begin()));
    for (std::size_t i = 1000; i < 3000; ++i) ASSERT_EQ(bytes[i], std::byte{0}) << i;
}

TEST(NewerOps, FixedFdInstallMakesARegularDescriptor) {
    Ring ring(4);
    REQUIRE_OP(ring, op::FixedFdInstall::code);
    ring.register_files_sparse(2);
    TempFile file(4096, 9);
    ring.prepare(op::OpenAt(AT_FDCWD, file.path().c_str(), O_RDONLY).into_slot(1)).user_data(1);
    ASSERT_EQ(reap_one_bounded(ring).res, 0);
    ring.prepare(op::FixedFdInstall(Fixed{1})).user_data(2);
    const UniqueFd fd(reap_one_bounded(ring).res);
    ASSERT_GE(fd.get(), 0);
    ring.prepare(op::FixedFdInstall(Fixed{1}).no_cloexec()).user_data(3);
    const UniqueFd inherit(reap_one_bounded(ring).res);
    ASSERT_GE(inherit.get(), 0);
    EXPECT_TRUE(::fcntl(fd.get(), F_GETFD) & FD_CLOEXEC) << "close-on-exec by default";
    EXPECT_FALSE(::fcntl(inherit.get(), F_GETFD) & FD_CLOEXEC);
    std::vector<std::byte> buf(4096);
    ASSERT_EQ(::pread(fd.get(), buf.data(), buf.size(), 0), 4096);
    EXPECT_EQ(buf, pattern(4096, 9));
    struct stat a {
    }, b{};
    ASSERT_EQ(::fstat(inherit.get(), &a), 0);
    ASSERT_EQ(::fstat(file.fd(), &b), 0);
    EXPECT_EQ(a.st_ino, b.st_ino);
    // The slot still holds the file.
    char first = 0;
    ring.prepare(op::Read(Fixed{1}, &first, 1, 7)).user_data(4);
    ASSERT_EQ(reap_one_bounded(ring).res, 1);
    EXPECT_EQ(static_cast<std::byte>(first), pattern_byte(7, 9));
}

TEST(NewerOps, SendMsgZcPostsResultThenNotification) {
    Ring ring(4);
    REQUIRE_OP(ring, op::SendMsgZc::code);
    TcpPair pair;
    const auto data = pattern(3000, 2);
    iovec iov[2] = {{const_cast<std::byte*>(data.data()), 1000},
                    {const_cast<std::byte*>(data.data()) + 1000, 2000}};
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = 2;
    ring.prepare(op::SendMsgZc(Fd{pair.client.get()}, &msg)).user_data(1);
    const auto cs = reap_bounded(ring, 2);
    ASSERT_EQ(cs.size(), 2u);
    EXPECT_EQ(cs[0].res, 3000);
    EXPECT_TRUE(cs[0].flags & IORING_CQE_F_MORE) << "the result says a notification follows";
    EXPECT_FALSE(cs[0].flags & IORING_CQE_F_NOTIF);
    EXPECT_TRUE(cs[1].flags & IORING_CQE_F_NOTIF);
    EXPECT_FALSE(cs[1].flags & IORING_CQE_F_MORE) << "the notification is the last";
    std::vector<std::byte> got(3000);
    std::size_t n = 0;
    while (n < got.size()) {
        const ssize_t r = ::recv(pair.server.get(), got.data() + n, got.size() - n, 0);
        ASSERT_GT(r, 0);
        n += static_cast<std::size_t>(r);
    }
    EXPECT_EQ(got, data);
}

TEST(NewerOps, TeeCopiesWithoutConsuming) {
    Ring ring(4);
    REQUIRE_OP(ring, op::Tee::code);
    Pipe in, out;
    const std::string text = "tee keeps the source intact";
    ASSERT_EQ(::write(in.write_end.get(), text.data(), text.size()),
              static_cast<ssize_t>(text.size()));
    ring.prepare(op::Tee(in.read_end.get(), Fd{out.write_end.get()},
                         static_cast<std::uint32_t>(text.size())))
        .user_data(1);
    ASSERT_EQ(reap_one_bounded(ring).res, static_cast<std::int32_t>(text.size()));
    EXPECT_EQ(read_some(out.read_end.get(), 256), text);
    EXPECT_EQ(read_some(in.read_end.get(), 256), text) << "the source pipe still holds it";
}

// URING_CMD on a socket (6.7): SIOCINQ answers with the bytes waiting, in
// a plain ring and in a BigRing (an ordinary SQE in a 128-byte slot, its
// CQE read at the 32-byte stride).
TEST(NewerOps, SocketCmdCountsTheBytesWaiting) {
    Ring ring(4);
    REQUIRE_OP(ring, op::SocketCmd::code);
    UniqueFd rx(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    UniqueFd tx(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ASSERT_EQ(::bind(rx.get(), reinterpret_cast<sockaddr*>(&a), len), 0);
    ASSERT_EQ(::getsockname(rx.get(), reinterpret_cast<sockaddr*>(&a), &len), 0);
    const std::string msg(37, 'q');
    ASSERT_EQ(::sendto(tx.get(), msg.data(), msg.size(), 0, reinterpret_cast<sockaddr*>(&a), len),
              static_cast<ssize_t>(msg.size()));
    ring.prepare(op::SocketCmd(Fd{rx.get()}, op::SocketCommand::siocinq)).user_data(1);
    const Completion c = reap_one_bounded(ring);
    if (c.res == -EOPNOTSUPP)
        GTEST_SKIP() << "URING_CMD on sockets needs Linux 6.7, have Linux " << kernel_release();
    EXPECT_EQ(c.res, 37);

    BigRing big(4);
    std::set<std::uint64_t> seen;
    for (std::uint64_t first : {10, 13}) {  // six SQEs through four slots: the stride wraps
        for (std::uint64_t ud = first; ud < first + 3; ++ud)
            ASSERT_TRUE(
                big.prepare(op::SocketCmd(Fd{rx.get()}, op::SocketCommand::siocinq)).user_data(ud));
        ASSERT_EQ(big.ring().submit_and_wait(3), 3);
        EXPECT_EQ(big.for_each_completion([&](const BigCompletion& b) {
            EXPECT_EQ(b.res, 37) << b.user_data;
            seen.insert(b.user_data);
        }),
                  3u);
    }
    EXPECT_EQ(seen, (std::set<std::uint64_t>{10, 11, 12, 13, 14, 15}));
}

TEST(NewerOps, EpollWaitReturnsTheReadyEvent) {
    Ring ring(4);
    REQUIRE_OP(ring, op::EpollWait::code);
    const UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
    ASSERT_GE(ep.get(), 0);
    Pipe pipe;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = 0x1234567890ull;
    ASSERT_EQ(::epoll_ctl(ep.get(), EPOLL_CTL_ADD, pipe.read_end.get(), &ev), 0);
    epoll_event got[4]{};
    // Armed while nothing is ready: it waits for the write.
    ring.prepare(op::EpollWait(Fd{ep.get()}, got, 4)).user_data(1);
    ASSERT_GE(ring.submit(), 0);
    EXPECT_EQ(ring.cq_ready(), 0u);
    ASSERT_EQ(::write(pipe.write_end.get(), "x", 1), 1);
    ASSERT_EQ(reap_one_bounded(ring).res, 1);
    const std::uint64_t tag = got[0].data.u64;  // a copy: epoll_event is packed on x86-64
    EXPECT_EQ(tag, 0x1234567890ull);
    EXPECT_TRUE(got[0].events & EPOLLIN);
}

TEST(NewerOps, VectoredIoThroughOneRegisteredBuffer) {
    Ring ring(4);
    REQUIRE_OP(ring, op::WritevFixed::code);
    std::vector<std::byte> reg(8192);
    const auto data = pattern(1000, 4);
    std::memcpy(reg.data() + 100, data.data(), 500);
    std::memcpy(reg.data() + 2000, data.data() + 500, 500);
    const iovec whole{reg.data(), reg.size()};
    ring.register_buffers({&whole, 1});
    TempFile file;
    const iovec out[2] = {{reg.data() + 100, 500}, {reg.data() + 2000, 500}};
    ring.prepare(op::WritevFixed(Fd{file.fd()}, out, 2, 0, 0)).user_data(1);
    ASSERT_EQ(reap_one_bounded(ring).res, 1000);
    EXPECT_EQ(file.contents(), data);

    const iovec in[2] = {{reg.data() + 4000, 300}, {reg.data() + 6000, 700}};
    ring.prepare(op::ReadvFixed(Fd{file.fd()}, in, 2, 0, 0)).user_data(2);
    ASSERT_EQ(reap_one_bounded(ring).res, 1000);
    EXPECT_TRUE(std::equal(data.begin(), data.begin() + 300, reg.begin() + 4000));
    EXPECT_TRUE(std::equal(data.begin() + 300, data.end(), reg.begin() + 6000));
    // An iovec outside the registered buffer is refused, not read into.
    std::byte outside[16]{};
    const iovec bad{outside, sizeof outside};
    ring.prepare(op::ReadvFixed(Fd{file.fd()}, &bad, 1, 0, 0)).user_data(3);
    EXPECT_EQ(reap_one_bounded(ring).res, -EFAULT);
    EXPECT_EQ(outside[0], std::byte{0});
}

TEST(NewerOps, PipeMakesDescriptorsOrDirectSlots) {
    Ring ring(4);
    REQUIRE_OP(ring, op::Pipe::code);
    int fds[2] = {-1, -1};
    ring.prepare(op::Pipe(fds, O_CLOEXEC)).user_data(1);
    ASSERT_EQ(reap_one_bounded(ring).res, 0);
    const UniqueFd r(fds[0]), w(fds[1]);
    ASSERT_GE(r.get(), 0);
    ASSERT_GE(w.get(), 0);
    EXPECT_TRUE(::fcntl(r.get(), F_GETFD) & FD_CLOEXEC);
    ASSERT_EQ(::write(w.get(), "through", 7), 7);
    EXPECT_EQ(read_some(r.get(), 64), "through");

    ring.register_files_sparse(4);
    int slots[2] = {-1, -1};
    ring.prepare(op::Pipe(slots).into_any_slot()).user_data(2);
    ASSERT_EQ(reap_one_bounded(ring).res, 0);
    ASSERT_GE(slots[0], 0);
    ASSERT_LT(slots[0], 4);
    ASSERT_GE(slots[1], 0);
    ASSERT_LT(slots[1], 4);
    EXPECT_NE(slots[0], slots[1]);
    const char text[] = "direct pipe";
    char got[sizeof text]{};
    ring.prepare(op::Write(Fixed{static_cast<unsigned>(slots[1])}, text, sizeof text, 0))
        .user_data(3);
    ASSERT_EQ(reap_one_bounded(ring).res, static_cast<std::int32_t>(sizeof text));
    ring.prepare(op::Read(Fixed{static_cast<unsigned>(slots[0])}, got, sizeof got, 0)).user_data(4);
    ASSERT_EQ(reap_one_bounded(ring).res, static_cast<std::int32_t>(sizeof text));
    EXPECT_STREQ(got, text);
}

}  // namespace
