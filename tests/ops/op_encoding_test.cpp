// How operations are spelled and encoded, where the first versions let a
// mistake through:
//  - op::Timeout converted implicitly from a pointer, so a stray
//    `__kernel_timespec*` became a timeout wherever an op was expected;
//  - PollAdd wrote poll32_events as it was, where the kernel reads the two
//    16-bit halves in little-endian order (liburing swaps them with
//    __swahw32 on a big-endian host).
#include "uring_test_support.hpp"
#include "uringkit/ops/ops.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <type_traits>

using namespace uringkit;
using namespace uringkit::testing;

namespace {

static_assert(!std::is_convertible_v<const __kernel_timespec*, op::Timeout>,
              "a pointer is not a timeout");
static_assert(std::is_constructible_v<op::Timeout, const __kernel_timespec*>);
static_assert(!std::is_convertible_v<const __kernel_timespec*, op::LinkTimeout>);
static_assert(!std::is_convertible_v<int*, op::Pipe>, "a pointer is not a pipe");
static_assert(!std::is_convertible_v<Fixed, op::FixedFdInstall>);
static_assert(!std::is_constructible_v<op::FixedFdInstall, Fd>,
              "only a registered slot can be installed as a descriptor");

TEST(OpEncoding, Poll32EventsSwapsHalfwordsOnlyOnBigEndian) {
    constexpr std::uint32_t mask = POLLIN | EPOLLEXCLUSIVE;  // one bit in each half
    EXPECT_EQ(op::poll32_events(mask, std::endian::little), mask);
    EXPECT_EQ(op::poll32_events(mask, std::endian::big), (POLLIN << 16) | (EPOLLEXCLUSIVE >> 16));
    EXPECT_EQ(op::poll32_events(op::poll32_events(mask, std::endian::big), std::endian::big), mask);
}

TEST(OpEncoding, PollAddWritesTheMaskTheKernelReads) {
    io_uring_sqe s{};
    op::PollAdd(Fd{3}, POLLIN | POLLOUT).prepare(s);
    EXPECT_EQ(s.poll32_events, op::poll32_events(POLLIN | POLLOUT));
    // The kernel's answer: a pipe with data is readable, not writable-only.
    Ring ring(4);
    Pipe pipe;
    ASSERT_EQ(::write(pipe.write_end.get(), "a", 1), 1);
    ring.prepare(op::PollAdd(Fd{pipe.read_end.get()}, POLLIN | POLLRDHUP)).user_data(7);
    const auto c = reap_one(ring);
    EXPECT_EQ(c.user_data, 7u);
    EXPECT_EQ(c.res, POLLIN) << "the kernel read a different mask than was asked";
}

// One way to select a provided buffer: the op sets the flag and the group.
TEST(OpEncoding, ReadProvidedSelectsItsGroupItself) {
    io_uring_sqe s{};
    op::ReadProvided(Fd{5}, 7, 4096, 100).prepare(s);
    EXPECT_TRUE(s.flags & IOSQE_BUFFER_SELECT);
    EXPECT_EQ(s.buf_group, 7u);
    EXPECT_EQ(s.addr, 0u);
    EXPECT_EQ(s.len, 4096u);
    EXPECT_EQ(s.off, 100u);
    io_uring_sqe r{};
    op::Recv::provided(Fd{5}, 7).prepare(r);
    EXPECT_EQ(r.flags & IOSQE_BUFFER_SELECT, s.flags & IOSQE_BUFFER_SELECT);
    EXPECT_EQ(r.buf_group, s.buf_group);
}

// The same defaults as Loop::send and Loop::accept.  A send to a peer that
// is gone: -EPIPE and no SIGPIPE (blocked here, so a wrong default shows as
// a pending signal instead of ending the test program).
TEST(OpEncoding, SendDefaultsToNoSignal) {
    sigset_t pipe_only, old;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &pipe_only, &old), 0);
    Ring ring(4);
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    ::close(sv[1]);
    ring.prepare(op::Send(Fd{sv[0]}, "x", 1)).user_data(1);
    const int res = reap_one(ring).res;
    msghdr msg{};
    iovec iov{const_cast<char*>("y"), 1};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    ring.prepare(op::SendMsg(Fd{sv[0]}, &msg)).user_data(2);
    const int msg_res = reap_one(ring).res;
    sigset_t pending;
    sigpending(&pending);
    const bool raised = sigismember(&pending, SIGPIPE) == 1;
    if (raised) {
        const timespec zero{0, 0};
        while (sigtimedwait(&pipe_only, nullptr, &zero) == SIGPIPE) {
        }
    }
    ::close(sv[0]);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    EXPECT_EQ(res, -EPIPE);
    EXPECT_EQ(msg_res, -EPIPE);
    EXPECT_FALSE(raised) << "op::Send raised SIGPIPE: its flags were not MSG_NOSIGNAL";
    io_uring_sqe s{};
    op::SendZc(Fd{3}, "x", 1).prepare(s);
    EXPECT_EQ(s.msg_flags, static_cast<std::uint32_t>(MSG_NOSIGNAL));
    op::Send(Fd{3}, "x", 1, 0).prepare(s);
    EXPECT_EQ(s.msg_flags, 0u) << "0 is still send(2)'s own default";
}

// The opcodes after 6.0, field by field as liburing's io_uring_prep_*
// helpers write them (futex_*, waitid, bind, listen, read_multishot,
// fixed_fd_install, ftruncate, epoll_wait, readv_fixed, pipe, tee,
// sendmsg_zc), and as the kernel's prep functions read them.
TEST(OpEncoding, NewerOpsEncodeAsLiburingDoes) {
    std::uint32_t word = 0;
    io_uring_sqe s{};
    op::FutexWait(&word, 7).mask(0x3).prepare(s);
    EXPECT_EQ(s.opcode, sys::opcode::futex_wait);
    EXPECT_EQ(s.fd, static_cast<int>(FUTEX2_SIZE_U32 | FUTEX2_PRIVATE)) << "futex2 flags in fd";
    EXPECT_EQ(s.addr, reinterpret_cast<std::uintptr_t>(&word));
    EXPECT_EQ(s.addr2, 7u);
    EXPECT_EQ(s.addr3, 0x3u);
    EXPECT_EQ(s.len | s.rw_flags | s.file_index | s.buf_index, 0u) << "the kernel refuses these";
    s = {};
    op::FutexWake(&word, 2).prepare(s);
    EXPECT_EQ(s.opcode, sys::opcode::futex_wake);
    EXPECT_EQ(s.addr2, 2u);
    EXPECT_EQ(s.addr3, static_cast<std::uint64_t>(FUTEX_BITSET_MATCH_ANY));
    s = {};
    futex_waitv v[3]{};
    op::FutexWaitv(v, 3).prepare(s);
    EXPECT_EQ(s.addr, reinterpret_cast<std::uintptr_t>(v));
    EXPECT_EQ(s.len, 3u);
    EXPECT_EQ(s.fd | s.addr2 | s.addr3, 0u);
    s = {};
    siginfo_t info{};
    op::Waitid(P_PID, 1234, &info, WEXITED).prepare(s);
    EXPECT_EQ(s.fd, 1234);
    EXPECT_EQ(s.len, static_cast<std::uint32_t>(P_PID));
    EXPECT_EQ(s.file_index, static_cast<std::uint32_t>(WEXITED));
    EXPECT_EQ(s.addr2, reinterpret_cast<std::uintptr_t>(&info));
    EXPECT_EQ(s.addr | s.addr3, 0u);
    s = {};
    sockaddr_in sin{};
    op::Bind(Fd{5}, reinterpret_cast<const sockaddr*>(&sin), sizeof sin).prepare(s);
    EXPECT_EQ(s.addr, reinterpret_cast<std::uintptr_t>(&sin));
    EXPECT_EQ(s.addr2, sizeof sin);
    EXPECT_EQ(s.len, 0u);
    s = {};
    op::Listen(Fd{5}, 16).prepare(s);
    EXPECT_EQ(s.len, 16u);
    EXPECT_EQ(s.addr | s.addr2, 0u);
    s = {};
    op::ReadMultishot(Fd{5}, 9).prepare(s);
    EXPECT_EQ(s.flags, IOSQE_BUFFER_SELECT);
    EXPECT_EQ(s.buf_group, 9u);
    EXPECT_EQ(s.addr | s.len, 0u) << "later kernels refuse a multishot read with addr or len";
    s = {};
    op::FixedFdInstall(Fixed{4}).no_cloexec().prepare(s);
    EXPECT_EQ(s.fd, 4);
    EXPECT_EQ(s.flags, IOSQE_FIXED_FILE);
    EXPECT_EQ(static_cast<std::uint32_t>(s.rw_flags), IORING_FIXED_FD_NO_CLOEXEC);
    s = {};
    op::Ftruncate(Fd{5}, 1u << 20).prepare(s);
    EXPECT_EQ(s.off, 1u << 20);
    s = {};
    epoll_event evs[2]{};
    op::EpollWait(Fd{5}, evs, 2).prepare(s);
    EXPECT_EQ(s.addr, reinterpret_cast<std::uintptr_t>(evs));
    EXPECT_EQ(s.len, 2u);
    s = {};
    iovec iov[2]{};
    op::ReadvFixed(Fd{5}, iov, 2, 64, 3).prepare(s);
    EXPECT_EQ(s.opcode, sys::opcode::readv_fixed);
    EXPECT_EQ(s.addr, reinterpret_cast<std::uintptr_t>(iov));
    EXPECT_EQ(s.len, 2u);
    EXPECT_EQ(s.off, 64u);
    EXPECT_EQ(s.buf_index, 3u);
    s = {};
    int fds[2];
    op::Pipe(fds, O_NONBLOCK).into_slot(2).prepare(s);
    EXPECT_EQ(s.fd, 0);
    EXPECT_EQ(s.addr, reinterpret_cast<std::uintptr_t>(fds));
    EXPECT_EQ(s.rw_flags, O_NONBLOCK);
    EXPECT_EQ(s.file_index, 3u) << "slot + 1, as for a direct open";
    s = {};
    op::Tee(3, Fd{4}, 100, SPLICE_F_NONBLOCK).prepare(s);
    EXPECT_EQ(s.fd, 4);
    EXPECT_EQ(s.splice_fd_in, 3);
    EXPECT_EQ(s.len, 100u);
    EXPECT_EQ(s.splice_flags, static_cast<std::uint32_t>(SPLICE_F_NONBLOCK));
    EXPECT_EQ(s.off | s.splice_off_in, 0u) << "tee has no offsets";
    s = {};
    msghdr msg{};
    op::SendMsgZc(Fd{5}, &msg).prepare(s);
    EXPECT_EQ(s.opcode, IORING_OP_SENDMSG_ZC);
    EXPECT_EQ(s.len, 1u);
    EXPECT_EQ(s.msg_flags, static_cast<std::uint32_t>(MSG_NOSIGNAL)) << "as SendMsg's default";
}

TEST(OpEncoding, AcceptDefaultsToCloseOnExec) {
    Ring ring(4);
    Listener listener;
    const UniqueFd client = listener.connect_client();
    ring.prepare(op::Accept(Fd{listener.fd.get()})).user_data(1);
    const int fd = reap_one(ring).res;
    ASSERT_GE(fd, 0);
    const int fdflags = ::fcntl(fd, F_GETFD);
    ::close(fd);
    EXPECT_TRUE(fdflags & FD_CLOEXEC) << "op::Accept's socket would leak into an exec'd child";
    io_uring_sqe s{};
    op::Accept(Fd{3}).flags(0).prepare(s);
    EXPECT_EQ(s.accept_flags, 0u);
}

}  // namespace

// NVMe passthrough: struct nvme_uring_cmd at the SQE's cmd field (offset 48),
// running into the second 64 bytes, as liburing's io_uring_prep_cmd and
// fio's io_uring_cmd engine lay it out.
TEST(OpEncoding, NvmeCmdFillsTheBigSqeAsTheDriverReadsIt) {
    static_assert(uringkit::detail::BigSqeOp<op::NvmeCmd>);
    static_assert(
        !std::is_invocable_v<decltype(&op::NvmeCmd::prepare), const op::NvmeCmd&, io_uring_sqe&>,
        "an NVMe command cannot be prepared into a 64-byte SQE");
    BigSqe big{};
    const io_uring_sqe& s = big.sqe();
    const unsigned char* slot = big.bytes();
    char buf[8192];
    op::NvmeCmd::read(Fd{5}, 1, 0x1'0000'0002ULL, 2, buf, sizeof buf).prepare(big);
    EXPECT_EQ(s.opcode, IORING_OP_URING_CMD);
    EXPECT_EQ(s.fd, 5);
    EXPECT_EQ(s.cmd_op, static_cast<std::uint32_t>(NVME_URING_CMD_IO));
    EXPECT_EQ(s.uring_cmd_flags, 0u);
    nvme_uring_cmd c;
    std::memcpy(&c, slot + 48, sizeof c);
    EXPECT_EQ(c.opcode, 0x02) << "NVMe Read";
    EXPECT_EQ(c.nsid, 1u);
    EXPECT_EQ(c.addr, reinterpret_cast<std::uintptr_t>(buf));
    EXPECT_EQ(c.data_len, sizeof buf);
    EXPECT_EQ(c.cdw10, 2u) << "starting LBA, low dword";
    EXPECT_EQ(c.cdw11, 1u) << "starting LBA, high dword";
    EXPECT_EQ(c.cdw12, 1u) << "number of blocks, 0's based";
    EXPECT_EQ(c.cdw13 | c.cdw14 | c.cdw15 | c.timeout_ms | c.metadata_len, 0u);
    EXPECT_EQ(slot[48 + sizeof c], 0) << "nothing past the command";

    big = {};
    op::NvmeCmd::write(Fixed{3}, 1, 7, 1, buf, 4096).fixed_buffer(9).timeout_ms(50).prepare(big);
    std::memcpy(&c, slot + 48, sizeof c);
    EXPECT_EQ(s.flags, IOSQE_FIXED_FILE);
    EXPECT_EQ(s.uring_cmd_flags, IORING_URING_CMD_FIXED);
    EXPECT_EQ(s.buf_index, 9u);
    EXPECT_EQ(c.opcode, 0x01) << "NVMe Write";
    EXPECT_EQ(c.cdw10, 7u);
    EXPECT_EQ(c.cdw12, 0u);
    EXPECT_EQ(c.timeout_ms, 50u);

    big = {};
    op::NvmeCmd::flush(Fd{5}, 1).prepare(big);
    std::memcpy(&c, slot + 48, sizeof c);
    EXPECT_EQ(c.opcode, 0x00) << "NVMe Flush";
    EXPECT_EQ(c.addr | c.data_len | c.cdw10 | c.cdw11 | c.cdw12, 0u);

    big = {};
    op::NvmeCmd::identify(Fd{6}, 1, 0, buf).prepare(big);
    std::memcpy(&c, slot + 48, sizeof c);
    EXPECT_EQ(s.cmd_op, static_cast<std::uint32_t>(NVME_URING_CMD_ADMIN));
    EXPECT_EQ(c.opcode, 0x06) << "NVMe Identify";
    EXPECT_EQ(c.data_len, 4096u);
    EXPECT_EQ(c.cdw10, 0u) << "CNS 0: the namespace";
    EXPECT_EQ(c.cdw11 | c.cdw12, 0u);
}

TEST(OpEncoding, SocketCmdIsAnOrdinarySqe) {
    static_assert(!uringkit::detail::BigSqeOp<op::SocketCmd>);
    io_uring_sqe s{};
    op::SocketCmd(Fd{4}, op::SocketCommand::siocoutq).prepare(s);
    EXPECT_EQ(s.opcode, IORING_OP_URING_CMD);
    EXPECT_EQ(s.fd, 4);
    EXPECT_EQ(s.cmd_op, 1u);
    EXPECT_EQ(s.addr | s.len | s.addr3, 0u);
}
