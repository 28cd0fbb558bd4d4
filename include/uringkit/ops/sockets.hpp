// Typed socket operations beyond ops.hpp's core set: socket, bind, listen
// (so a server needs no blocking setup call), sendmsg and recvmsg (UDP).
// Memory they name (sockaddr, msghdr, its iovecs) must live until the completion.
#pragma once

#include "uringkit/ops/ops.hpp"
#include "uringkit/sys/uapi.hpp"

namespace uringkit::op {

// socket(2) (5.19): res is the new descriptor.
class Socket {
public:
    static constexpr std::uint8_t code = IORING_OP_SOCKET;
    Socket(int domain, int type, int protocol = 0) noexcept : domain_(domain), type_(type), protocol_(protocol) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = domain_;
        s.off = static_cast<std::uint64_t>(type_);
        s.len = static_cast<std::uint32_t>(protocol_);
    }

private:
    int domain_, type_, protocol_;
};

// bind(2) (6.11).
class Bind {
public:
    static constexpr std::uint8_t code = sys::opcode::bind;
    Bind(File f, const sockaddr* addr, socklen_t len) noexcept : f_(f), addr_(addr), len_(len) {}
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

// sendmsg(2) (5.3).
class SendMsg {
public:
    static constexpr std::uint8_t code = IORING_OP_SENDMSG;
    SendMsg(File f, const msghdr* msg, int flags = 0) noexcept : f_(f), msg_(msg), flags_(flags) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.addr = reinterpret_cast<std::uintptr_t>(msg_);
        s.len = 1;
        s.msg_flags = static_cast<std::uint32_t>(flags_);
    }

private:
    File f_;
    const msghdr* msg_;
    int flags_;
};

// recvmsg(2) (5.3): fills msg's name (the sender's address), iovecs and flags.
class RecvMsg {
public:
    static constexpr std::uint8_t code = IORING_OP_RECVMSG;
    RecvMsg(File f, msghdr* msg, int flags = 0) noexcept : f_(f), msg_(msg), flags_(flags) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.addr = reinterpret_cast<std::uintptr_t>(msg_);
        s.len = 1;
        s.msg_flags = static_cast<std::uint32_t>(flags_);
    }

private:
    File f_;
    msghdr* msg_;
    int flags_;
};

}  // namespace uringkit::op
