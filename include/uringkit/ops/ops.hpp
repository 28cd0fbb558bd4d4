// Typed io_uring operations.  One small type per opcode: required arguments in
// the constructor, optional ones as chained setters, and a `code` constant the
// probe can test.  Ring::prepare(op) hands prepare() a zeroed SQE, and
// prepare() writes every field the opcode reads, so nothing stale survives.
//
//     ring.prepare(op::Read(Fd{fd}, buf, 4096, offset)).user_data(&req).link();
//     ring.prepare(op::Write(Fixed{0}, buf, n, offset));   // IOSQE_FIXED_FILE set
//
// Memory an operation points to (buffers, iovecs, paths, timespecs, statx
// results, sockaddrs) must stay valid until that operation's own completion,
// even after a cancel: the kernel may still be using it.
#pragma once

#include "uringkit/ring/sqe.hpp"

#include <fcntl.h>
#include <linux/time_types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <cstdint>

namespace uringkit::op {

namespace detail {
inline void rw(io_uring_sqe& s, std::uint8_t code, File f, const void* addr, std::uint32_t len,
               std::uint64_t off) noexcept {
    s.opcode = code;
    f.apply(s);
    s.addr = reinterpret_cast<std::uintptr_t>(addr);
    s.len = len;
    s.off = off;
}
}  // namespace detail

// Completes at once with res 0: measures the ring's own cost.
struct Nop {
    static constexpr std::uint8_t code = IORING_OP_NOP;
    void prepare(io_uring_sqe& s) const noexcept { s.opcode = code; }
};

// pread(2); offset -1 means the file position (IORING_FEAT_RW_CUR_POS).
class Read {
public:
    static constexpr std::uint8_t code = IORING_OP_READ;
    Read(File f, void* buf, std::uint32_t len, std::uint64_t offset) noexcept
        : f_(f), buf_(buf), len_(len), off_(offset) {}
    Read& rw_flags(int flags) noexcept { rw_flags_ = flags; return *this; }
    void prepare(io_uring_sqe& s) const noexcept {
        detail::rw(s, code, f_, buf_, len_, off_);
        s.rw_flags = rw_flags_;
    }

private:
    File f_;
    void* buf_;
    std::uint32_t len_;
    std::uint64_t off_;
    int rw_flags_ = 0;
};

// A read into a buffer the kernel picks from a provided-buffer group: pair with
// Sqe::buffer_select(group); the completion names the buffer.
class ReadProvided {
public:
    static constexpr std::uint8_t code = IORING_OP_READ;
    ReadProvided(File f, std::uint32_t len, std::uint64_t offset) noexcept : f_(f), len_(len), off_(offset) {}
    void prepare(io_uring_sqe& s) const noexcept { detail::rw(s, code, f_, nullptr, len_, off_); }

private:
    File f_;
    std::uint32_t len_;
    std::uint64_t off_;
};

class Write {
public:
    static constexpr std::uint8_t code = IORING_OP_WRITE;
    Write(File f, const void* buf, std::uint32_t len, std::uint64_t offset) noexcept
        : f_(f), buf_(buf), len_(len), off_(offset) {}
    Write& rw_flags(int flags) noexcept { rw_flags_ = flags; return *this; }
    void prepare(io_uring_sqe& s) const noexcept {
        detail::rw(s, code, f_, buf_, len_, off_);
        s.rw_flags = rw_flags_;
    }

private:
    File f_;
    const void* buf_;
    std::uint32_t len_;
    std::uint64_t off_;
    int rw_flags_ = 0;
};

class Readv {
public:
    static constexpr std::uint8_t code = IORING_OP_READV;
    Readv(File f, const iovec* iov, unsigned count, std::uint64_t offset) noexcept
        : f_(f), iov_(iov), n_(count), off_(offset) {}
    Readv& rw_flags(int flags) noexcept { rw_flags_ = flags; return *this; }
    void prepare(io_uring_sqe& s) const noexcept {
        detail::rw(s, code, f_, iov_, n_, off_);
        s.rw_flags = rw_flags_;
    }

private:
    File f_;
    const iovec* iov_;
    unsigned n_;
    std::uint64_t off_;
    int rw_flags_ = 0;
};

class Writev {
public:
    static constexpr std::uint8_t code = IORING_OP_WRITEV;
    Writev(File f, const iovec* iov, unsigned count, std::uint64_t offset) noexcept
        : f_(f), iov_(iov), n_(count), off_(offset) {}
    Writev& rw_flags(int flags) noexcept { rw_flags_ = flags; return *this; }
    void prepare(io_uring_sqe& s) const noexcept {
        detail::rw(s, code, f_, iov_, n_, off_);
        s.rw_flags = rw_flags_;
    }

private:
    File f_;
    const iovec* iov_;
    unsigned n_;
    std::uint64_t off_;
    int rw_flags_ = 0;
};

// Read into registered buffer `buf_index`; [buf, buf+len) must lie inside it.
class ReadFixed {
public:
    static constexpr std::uint8_t code = IORING_OP_READ_FIXED;
    ReadFixed(File f, void* buf, std::uint32_t len, std::uint64_t offset, std::uint16_t buf_index) noexcept
        : f_(f), buf_(buf), len_(len), off_(offset), index_(buf_index) {}
    void prepare(io_uring_sqe& s) const noexcept {
        detail::rw(s, code, f_, buf_, len_, off_);
        s.buf_index = index_;
    }

private:
    File f_;
    void* buf_;
    std::uint32_t len_;
    std::uint64_t off_;
    std::uint16_t index_;
};

class WriteFixed {
public:
    static constexpr std::uint8_t code = IORING_OP_WRITE_FIXED;
    WriteFixed(File f, const void* buf, std::uint32_t len, std::uint64_t offset, std::uint16_t buf_index) noexcept
        : f_(f), buf_(buf), len_(len), off_(offset), index_(buf_index) {}
    void prepare(io_uring_sqe& s) const noexcept {
        detail::rw(s, code, f_, buf_, len_, off_);
        s.buf_index = index_;
    }

private:
    File f_;
    const void* buf_;
    std::uint32_t len_;
    std::uint64_t off_;
    std::uint16_t index_;
};

// fsync(2), or fdatasync(2) with .datasync().
class Fsync {
public:
    static constexpr std::uint8_t code = IORING_OP_FSYNC;
    explicit Fsync(File f) noexcept : f_(f) {}
    Fsync& datasync() noexcept { flags_ = IORING_FSYNC_DATASYNC; return *this; }
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.fsync_flags = flags_;
    }

private:
    File f_;
    std::uint32_t flags_ = 0;
};

// fallocate(2).  The SQE encoding is odd: the mode goes in len, the length in addr.
class Fallocate {
public:
    static constexpr std::uint8_t code = IORING_OP_FALLOCATE;
    Fallocate(File f, int mode, std::uint64_t offset, std::uint64_t length) noexcept
        : f_(f), mode_(mode), off_(offset), len_(length) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.off = off_;
        s.addr = len_;
        s.len = static_cast<std::uint32_t>(mode_);
    }

private:
    File f_;
    int mode_;
    std::uint64_t off_;
    std::uint64_t len_;
};

// openat(2).  The result is a new fd, or with into_slot()/into_any_slot() the
// file goes straight into the registered file table (5.15) and never gets a
// normal descriptor: res is 0 (a chosen slot) or the slot the kernel picked.
class OpenAt {
public:
    static constexpr std::uint8_t code = IORING_OP_OPENAT;
    OpenAt(int dirfd, const char* path, int flags, mode_t mode = 0) noexcept
        : dirfd_(dirfd), path_(path), flags_(flags), mode_(mode) {}
    OpenAt& into_slot(unsigned index) noexcept { slot_ = index + 1; return *this; }
    OpenAt& into_any_slot() noexcept { slot_ = IORING_FILE_INDEX_ALLOC; return *this; }
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = dirfd_;
        s.addr = reinterpret_cast<std::uintptr_t>(path_);
        s.len = mode_;
        s.open_flags = static_cast<std::uint32_t>(flags_);
        s.file_index = slot_;
    }

private:
    int dirfd_;
    const char* path_;
    int flags_;
    mode_t mode_;
    std::uint32_t slot_ = 0;  // 0: a normal fd; otherwise slot+1 or IORING_FILE_INDEX_ALLOC
};

// close(2) of a descriptor, or removal of a registered slot (Fixed, 5.15).
class Close {
public:
    static constexpr std::uint8_t code = IORING_OP_CLOSE;
    explicit Close(File f) noexcept : f_(f) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        if (f_.fixed())
            s.file_index = static_cast<std::uint32_t>(f_.raw()) + 1;
        else
            s.fd = f_.raw();
    }

private:
    File f_;
};

// statx(2) into `out`.
class Statx {
public:
    static constexpr std::uint8_t code = IORING_OP_STATX;
    Statx(int dirfd, const char* path, int flags, unsigned mask, struct statx* out) noexcept
        : dirfd_(dirfd), path_(path), flags_(flags), mask_(mask), out_(out) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = dirfd_;
        s.addr = reinterpret_cast<std::uintptr_t>(path_);
        s.len = mask_;
        s.off = reinterpret_cast<std::uintptr_t>(out_);
        s.statx_flags = static_cast<std::uint32_t>(flags_);
    }

private:
    int dirfd_;
    const char* path_;
    int flags_;
    unsigned mask_;
    struct statx* out_;
};

// Completes with -ETIME when `ts` passes, or with 0 once `count` other
// completions have been posted (count 0: only the time counts).
class Timeout {
public:
    static constexpr std::uint8_t code = IORING_OP_TIMEOUT;
    Timeout(const __kernel_timespec* ts, unsigned count = 0) noexcept : ts_(ts), count_(count) {}
    Timeout& absolute() noexcept { flags_ |= IORING_TIMEOUT_ABS; return *this; }
    Timeout& flags(unsigned f) noexcept { flags_ |= f; return *this; }
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = -1;
        s.addr = reinterpret_cast<std::uintptr_t>(ts_);
        s.len = 1;
        s.off = count_;
        s.timeout_flags = flags_;
    }

private:
    const __kernel_timespec* ts_;
    unsigned count_;
    unsigned flags_ = 0;
};

// Removes a pending Timeout by its user_data.
class TimeoutRemove {
public:
    static constexpr std::uint8_t code = IORING_OP_TIMEOUT_REMOVE;
    explicit TimeoutRemove(std::uint64_t target) noexcept : target_(target) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = -1;
        s.addr = target_;
    }

private:
    std::uint64_t target_;
};

// Linked after an SQE (which carries .link()): cancels it if it has not
// completed when `ts` passes; that SQE then completes with -ECANCELED and this
// one with -ETIME (or -EALREADY/-ECANCELED when it lost the race).
class LinkTimeout {
public:
    static constexpr std::uint8_t code = IORING_OP_LINK_TIMEOUT;
    explicit LinkTimeout(const __kernel_timespec* ts) noexcept : ts_(ts) {}
    LinkTimeout& absolute() noexcept { flags_ |= IORING_TIMEOUT_ABS; return *this; }
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = -1;
        s.addr = reinterpret_cast<std::uintptr_t>(ts_);
        s.len = 1;
        s.timeout_flags = flags_;
    }

private:
    const __kernel_timespec* ts_;
    unsigned flags_ = 0;
};

// Cancels requests: by user_data (default), or .all() matches, or every
// request on a file (.file()), or .any().  res: 0 found and cancelled, -ENOENT
// none found, -EALREADY already running; with .all(), the number cancelled.
class AsyncCancel {
public:
    static constexpr std::uint8_t code = IORING_OP_ASYNC_CANCEL;
    explicit AsyncCancel(std::uint64_t target) noexcept : target_(target) {}
    static AsyncCancel file(File f) noexcept {
        AsyncCancel c(0);
        c.file_ = f;
        c.flags_ = IORING_ASYNC_CANCEL_FD | (f.fixed() ? IORING_ASYNC_CANCEL_FD_FIXED : 0);
        return c;
    }
    static AsyncCancel any() noexcept {
        AsyncCancel c(0);
        c.flags_ = IORING_ASYNC_CANCEL_ANY;
        return c;
    }
    AsyncCancel& all() noexcept { flags_ |= IORING_ASYNC_CANCEL_ALL; return *this; }
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        // A fixed target is named by cancel_flags (FD_FIXED), not by IOSQE_FIXED_FILE.
        s.fd = file_.raw();
        s.addr = target_;
        s.cancel_flags = flags_;
    }

private:
    std::uint64_t target_;
    File file_ = Fd{-1};
    std::uint32_t flags_ = 0;
};

// accept4(2).  .multishot() (5.19) keeps posting a CQE per connection while
// the CQE has IORING_CQE_F_MORE; .into_any_slot() puts each socket straight
// into the registered file table (needs a sparse table).
class Accept {
public:
    static constexpr std::uint8_t code = IORING_OP_ACCEPT;
    explicit Accept(File listener, sockaddr* addr = nullptr, socklen_t* addrlen = nullptr) noexcept
        : f_(listener), addr_(addr), addrlen_(addrlen) {}
    Accept& flags(int f) noexcept { flags_ = f; return *this; }
    Accept& multishot() noexcept { ioprio_ |= IORING_ACCEPT_MULTISHOT; return *this; }
    Accept& into_slot(unsigned index) noexcept { slot_ = index + 1; return *this; }
    Accept& into_any_slot() noexcept { slot_ = IORING_FILE_INDEX_ALLOC; return *this; }
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
    int flags_ = 0;
    std::uint16_t ioprio_ = 0;
    std::uint32_t slot_ = 0;
};

class Connect {
public:
    static constexpr std::uint8_t code = IORING_OP_CONNECT;
    Connect(File f, const sockaddr* addr, socklen_t len) noexcept : f_(f), addr_(addr), len_(len) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.addr = reinterpret_cast<std::uintptr_t>(addr_);
        s.off = len_;
    }

private:
    File f_;
    const sockaddr* addr_;
    socklen_t len_;
};

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
    Recv& multishot() noexcept { ioprio_ |= IORING_RECV_MULTISHOT; return *this; }
    // With provided(): one CQE may fill several buffers, taken from the group
    // in ring order from the one it names (BufferRing::take_bundle); Linux
    // 6.10 (IORING_FEAT_RECVSEND_BUNDLE), older kernels fail it with -EINVAL.
    Recv& bundle() noexcept { ioprio_ |= IORING_RECVSEND_BUNDLE; return *this; }
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

// send(2); zerocopy.hpp names the same shape with IORING_OP_SEND_ZC.
template <std::uint8_t Code>
class BasicSend {
public:
    static constexpr std::uint8_t code = Code;
    BasicSend(File f, const void* buf, std::uint32_t len, int flags = 0) noexcept
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

// poll(2) for `events` (POLLIN...); .multishot() (5.13) re-arms itself.
class PollAdd {
public:
    static constexpr std::uint8_t code = IORING_OP_POLL_ADD;
    PollAdd(File f, unsigned events) noexcept : f_(f), events_(events) {}
    PollAdd& multishot() noexcept { len_ = IORING_POLL_ADD_MULTI; return *this; }
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        f_.apply(s);
        s.poll32_events = events_;  // little-endian hosts; the kernel reads 32 bits
        s.len = len_;
    }

private:
    File f_;
    unsigned events_;
    std::uint32_t len_ = 0;
};

class PollRemove {
public:
    static constexpr std::uint8_t code = IORING_OP_POLL_REMOVE;
    explicit PollRemove(std::uint64_t target) noexcept : target_(target) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = -1;
        s.addr = target_;
    }

private:
    std::uint64_t target_;
};

// mkdirat(2) (5.15).
class MkdirAt {
public:
    static constexpr std::uint8_t code = IORING_OP_MKDIRAT;
    MkdirAt(int dirfd, const char* path, mode_t mode) noexcept : dirfd_(dirfd), path_(path), mode_(mode) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = dirfd_;
        s.addr = reinterpret_cast<std::uintptr_t>(path_);
        s.len = mode_;
    }

private:
    int dirfd_;
    const char* path_;
    mode_t mode_;
};

// symlinkat(2) (5.15): a link at (newdirfd, linkpath) pointing to `target`.
class SymlinkAt {
public:
    static constexpr std::uint8_t code = IORING_OP_SYMLINKAT;
    SymlinkAt(const char* target, int newdirfd, const char* linkpath) noexcept
        : target_(target), dirfd_(newdirfd), path_(linkpath) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = dirfd_;
        s.addr = reinterpret_cast<std::uintptr_t>(target_);
        s.addr2 = reinterpret_cast<std::uintptr_t>(path_);
    }

private:
    const char* target_;
    int dirfd_;
    const char* path_;
};

// renameat2(2) (5.11); flags: RENAME_NOREPLACE, RENAME_EXCHANGE.
class RenameAt {
public:
    static constexpr std::uint8_t code = IORING_OP_RENAMEAT;
    RenameAt(int olddirfd, const char* oldpath, int newdirfd, const char* newpath, unsigned flags = 0) noexcept
        : olddir_(olddirfd), old_(oldpath), newdir_(newdirfd), new_(newpath), flags_(flags) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = olddir_;
        s.addr = reinterpret_cast<std::uintptr_t>(old_);
        s.len = static_cast<std::uint32_t>(newdir_);
        s.addr2 = reinterpret_cast<std::uintptr_t>(new_);
        s.rename_flags = flags_;
    }

private:
    int olddir_;
    const char* old_;
    int newdir_;
    const char* new_;
    unsigned flags_;
};

// unlinkat(2) (5.11); flags: AT_REMOVEDIR.
class UnlinkAt {
public:
    static constexpr std::uint8_t code = IORING_OP_UNLINKAT;
    UnlinkAt(int dirfd, const char* path, int flags = 0) noexcept : dirfd_(dirfd), path_(path), flags_(flags) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = dirfd_;
        s.addr = reinterpret_cast<std::uintptr_t>(path_);
        s.unlink_flags = static_cast<std::uint32_t>(flags_);
    }

private:
    int dirfd_;
    const char* path_;
    int flags_;
};

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
