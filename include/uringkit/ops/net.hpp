// Socket operations: socket, bind and listen (so a server needs no blocking
// setup call), accept, connect, recv and send (zero-copy too), sendmsg and
// recvmsg (UDP), shutdown.  Memory they name (sockaddr, msghdr, its iovecs)
// must live until the completion.
#pragma once

#include "uringkit/cxx20.hpp"
#include "uringkit/ops/prep.hpp"
#include "uringkit/sys/uapi.hpp"

#include <sys/socket.h>

#include <cstdint>

namespace uringkit::op {

// socket(2) (5.19): res is the new descriptor.
class Socket {
public:
    static constexpr std::uint8_t code = IORING_OP_SOCKET;
    Socket(int domain, int type, int protocol = 0) noexcept
        : domain_(domain), type_(type), protocol_(protocol) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = domain_;
        s.off = static_cast<std::uint64_t>(type_);
        s.len = static_cast<std::uint32_t>(protocol_);
    }

private:
    int domain_, type_, protocol_;
};

// A socket and an address: bind(2) and connect(2) encode it alike (the
// kernel reads the address from addr and its length from addr2).
template <std::uint8_t Code>
class BasicAddress {
public:
    static constexpr std::uint8_t code = Code;
    BasicAddress(File f, const sockaddr* addr, socklen_t len) noexcept
        : f_(f), addr_(addr), len_(len) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.addr = reinterpret_cast<std::uintptr_t>(addr_);
        s.addr2 = len_;
    }

private:
    File f_;
    const sockaddr* addr_;
    socklen_t len_;
};
// bind(2) (6.11).
using Bind = BasicAddress<sys::opcode::bind>;

// listen(2) (6.11).
class Listen {
public:
    static constexpr std::uint8_t code = sys::opcode::listen;
    Listen(File f, int backlog) noexcept : f_(f), backlog_(backlog) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.len = static_cast<std::uint32_t>(backlog_);
    }

private:
    File f_;
    int backlog_;
};

// accept4(2).  .multishot() (5.19) keeps posting a CQE per connection while
// the CQE has IORING_CQE_F_MORE; .into_any_slot() puts each socket straight
// into the registered file table (needs a sparse table).  The flags default
// to SOCK_CLOEXEC, as Loop::accept's do (.flags(0) for accept4's own).
class Accept {
public:
    static constexpr std::uint8_t code = IORING_OP_ACCEPT;
    explicit Accept(File listener, sockaddr* addr = nullptr, socklen_t* addrlen = nullptr) noexcept
        : f_(listener), addr_(addr), addrlen_(addrlen) {}
    Accept& flags(int f) noexcept {
        flags_ = f;
        return *this;
    }
    Accept& multishot() noexcept {
        ioprio_ |= IORING_ACCEPT_MULTISHOT;
        return *this;
    }
    Accept& into_slot(unsigned index) noexcept {
        slot_ = index + 1;
        return *this;
    }
    Accept& into_any_slot() noexcept {
        slot_ = IORING_FILE_INDEX_ALLOC;
        return *this;
    }
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.addr = reinterpret_cast<std::uintptr_t>(addr_);
        s.addr2 = reinterpret_cast<std::uintptr_t>(addrlen_);
        s.accept_flags = static_cast<std::uint32_t>(flags_);
        s.ioprio = ioprio_;
        s.file_index = slot_;
    }

private:
    File f_;
    sockaddr* addr_;
    socklen_t* addrlen_;
    int flags_ = SOCK_CLOEXEC;
    std::uint16_t ioprio_ = 0;
    std::uint32_t slot_ = 0;
};

using Connect = BasicAddress<IORING_OP_CONNECT>;

// recv(2) into `buf`; or, with the provided() constructor, into a buffer the
// kernel picks from `group` (BufferRing), optionally .multishot() (6.0): one
// CQE per arrival while IORING_CQE_F_MORE is set; it ends on -ENOBUFS when the
// group runs dry, on EOF (res 0) or error, and must then be re-armed.
class Recv {
public:
    static constexpr std::uint8_t code = IORING_OP_RECV;
    Recv(File f, void* buf, std::uint32_t len, int flags = 0) noexcept
        : f_(f), buf_(buf), len_(len), msg_flags_(flags) {}
    static Recv provided(File f, std::uint16_t group, int flags = 0) noexcept {
        Recv r(f, nullptr, 0, flags);
        r.group_ = group;
        r.select_ = true;
        return r;
    }
    Recv& multishot() noexcept {
        ioprio_ |= IORING_RECV_MULTISHOT;
        return *this;
    }
    // With provided(): one CQE may fill several buffers, taken from the group
    // in ring order from the one it names (BufferRing::take_bundle); Linux
    // 6.10 (IORING_FEAT_RECVSEND_BUNDLE), older kernels fail it with -EINVAL.
    Recv& bundle() noexcept {
        ioprio_ |= IORING_RECVSEND_BUNDLE;
        return *this;
    }
    void prepare(io_uring_sqe& s) const noexcept {
        detail::rw(s, code, f_, buf_, len_, 0);
        s.msg_flags = static_cast<std::uint32_t>(msg_flags_);
        s.ioprio = ioprio_;
        if (select_) {
            s.flags |= IOSQE_BUFFER_SELECT;
            s.buf_group = group_;
        }
    }

private:
    File f_;
    void* buf_;
    std::uint32_t len_;
    int msg_flags_;
    std::uint16_t ioprio_ = 0;
    std::uint16_t group_ = 0;
    bool select_ = false;
};

// send(2); SendZc below is the same shape with IORING_OP_SEND_ZC.  The
// flags default to MSG_NOSIGNAL, as Loop::send's do: a peer that reset the
// connection gives -EPIPE, not a SIGPIPE that ends the process (pass 0 for
// send(2)'s own default).
template <std::uint8_t Code>
class BasicSend {
public:
    static constexpr std::uint8_t code = Code;
    BasicSend(File f, const void* buf, std::uint32_t len, int flags = MSG_NOSIGNAL) noexcept
        : f_(f), buf_(buf), len_(len), msg_flags_(flags) {}
    void prepare(io_uring_sqe& s) const noexcept {
        detail::rw(s, code, f_, buf_, len_, 0);
        s.msg_flags = static_cast<std::uint32_t>(msg_flags_);
    }

private:
    File f_;
    const void* buf_;
    std::uint32_t len_;
    int msg_flags_;
};
using Send = BasicSend<IORING_OP_SEND>;

// Zero-copy send (IORING_OP_SEND_ZC, 6.0).  It completes twice: first with
// the result (IORING_CQE_F_MORE set), then with IORING_CQE_F_NOTIF once the
// kernel no longer reads the buffer.  The buffer must live until that second
// completion; Loop::submit() resumes only then.
using SendZc = BasicSend<IORING_OP_SEND_ZC>;

// sendmsg(2) and recvmsg(2) (5.3): one msghdr, which a recv fills.  A
// sendmsg's flags (zero-copy too) default to MSG_NOSIGNAL, as a send's do.
template <std::uint8_t Code, class Msg>
class BasicMsg {
public:
    static constexpr std::uint8_t code = Code;
    BasicMsg(File f, Msg* msg, int flags = Code == IORING_OP_RECVMSG ? 0 : MSG_NOSIGNAL) noexcept
        : f_(f), msg_(msg), flags_(flags) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.addr = reinterpret_cast<std::uintptr_t>(msg_);
        s.len = 1;
        s.msg_flags = static_cast<std::uint32_t>(flags_);
    }

private:
    File f_;
    Msg* msg_;
    int flags_;
};
// sendmsg(2) (5.3).
using SendMsg = BasicMsg<IORING_OP_SENDMSG, const msghdr>;
// recvmsg(2) (5.3): fills msg's name (the sender's address), iovecs and flags.
using RecvMsg = BasicMsg<IORING_OP_RECVMSG, msghdr>;
// Zero-copy sendmsg(2) (IORING_OP_SENDMSG_ZC, 6.1): completes twice, as
// SendZc does: the result with IORING_CQE_F_MORE, then IORING_CQE_F_NOTIF
// once the kernel no longer reads the iovecs' bytes, which must live until
// then (Loop::submit() resumes only at the notification).
using SendMsgZc = BasicMsg<IORING_OP_SENDMSG_ZC, const msghdr>;

class Shutdown {
public:
    static constexpr std::uint8_t code = IORING_OP_SHUTDOWN;
    Shutdown(File f, int how) noexcept : f_(f), how_(how) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.len = static_cast<std::uint32_t>(how_);
    }

private:
    File f_;
    int how_;
};

}  // namespace uringkit::op
