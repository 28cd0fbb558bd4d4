#include "trials.hpp"

#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/buffer_ring.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/error.hpp"
#include "uringkit/util/size.hpp"
#include "uringkit/util/unique_fd.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <thread>
#include <utility>

namespace uringkit::probe::detail {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// No trial may hang the probe: a request the kernel accepted but never
// completes is reported as failed after this long.
constexpr auto kCompletionWait = 10s;  // generous: sanitizers and loaded CI machines

using util::UniqueFd;

// Page-aligned anonymous memory: O_DIRECT and registered buffers want alignment.
class Pages {
public:
    explicit Pages(std::size_t size) : size_(size) {
        void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw RingError("mmap of a probe buffer", errno);
        data_ = static_cast<unsigned char*>(p);
    }
    Pages(const Pages&) = delete;
    Pages& operator=(const Pages&) = delete;
    ~Pages() { ::munmap(data_, size_); }
    unsigned char* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }

private:
    unsigned char* data_ = nullptr;
    std::size_t size_;
};

// The byte a probe file holds at `offset`: position-dependent, so a read from
// the wrong offset or into the wrong place cannot pass the check.
unsigned char pattern(std::uint64_t offset) noexcept {
    return static_cast<unsigned char>((offset * 131 + (offset >> 8) * 7 + 0x5a) & 0xff);
}

// Index of the first byte of `data` that differs from the file's content at
// `offset`, or -1 when all match.
long mismatch(const unsigned char* data, std::size_t len, std::uint64_t offset) noexcept {
    for (std::size_t i = 0; i < len; ++i)
        if (data[i] != pattern(offset + i)) return static_cast<long>(i);
    return -1;
}

// A file in the probe directory filled with pattern(); unlinked on destruction.
class ProbeFile {
public:
    static constexpr std::size_t kSize = 64 * 1024;

    // Returns 0 or a positive errno.
    int create(const std::string& dir) {
        path_ = dir + "/.uringkit-probe-XXXXXX";
        const int fd = ::mkostemp(path_.data(), O_CLOEXEC);
        if (fd < 0) {
            const int err = errno;
            path_.clear();
            return err;
        }
        fd_ = UniqueFd(fd);
        unsigned char block[4096];
        for (std::size_t off = 0; off < kSize; off += sizeof block) {
            for (std::size_t i = 0; i < sizeof block; ++i) block[i] = pattern(off + i);
            if (::pwrite(fd, block, sizeof block, static_cast<off_t>(off)) !=
                static_cast<ssize_t>(sizeof block))
                return errno ? errno : EIO;
        }
        // O_DIRECT reads go to the device: the data must be there, not only cached.
        if (::fsync(fd) != 0) return errno;
        return 0;
    }
    ~ProbeFile() {
        if (!path_.empty()) ::unlink(path_.c_str());
    }
    int fd() const noexcept { return fd_.get(); }
    const std::string& path() const noexcept { return path_; }

private:
    std::string path_;
    UniqueFd fd_;
};

// Submits what is prepared and collects exactly out.size() completions.
// Returns 0, or -errno (-ETIME when they did not all arrive in time).
int collect(Ring& ring, std::span<Completion> out) {
    std::size_t got = 0;
    const auto deadline = Clock::now() + kCompletionWait;
    for (;;) {
        got += ring.copy_completions(out.subspan(got));
        if (got == out.size()) return 0;
        const auto left = deadline - Clock::now();
        if (left <= 0s) return -ETIME;
        int r = ring.submit_and_wait_for(1, left);
        if (r == -EOPNOTSUPP) r = ring.submit_and_wait(1);  // no IORING_FEAT_EXT_ARG (before 5.11)
        if (r < 0 && r != -ETIME) return r;
    }
}

// Errors by which the kernel, file system or a limit says "not here": the
// feature is unsupported.  Anything else after the kernel accepted a request
// is a failure worth reporting as one.
bool is_refusal(int err) noexcept {
    switch (err) {
        case EINVAL:
        case EOPNOTSUPP:
        case ENOSYS:
        case EPERM:
        case EACCES:
        case ENOMEM:
        case EROFS:
        case ENOBUFS:
            return true;
        default:
            return false;
    }
}

std::string err_text(int err) {
    const char* name = ::strerrorname_np(err);
    return fmt::format("{} ({})", name ? name : fmt::format("errno {}", err), std::strerror(err));
}

void set_ok(Trial& t, std::string detail) {
    t.outcome = Outcome::ok;
    t.err = 0;
    t.detail = std::move(detail);
}
void set_unsupported(Trial& t, int err, std::string why) {
    t.outcome = Outcome::unsupported;
    t.err = err;
    t.detail = std::move(why);
}
void set_failed(Trial& t, int err, std::string why) {
    t.outcome = Outcome::failed;
    t.err = err;
    t.detail = std::move(why);
}
// A negative kernel result for `what`: unsupported or failed by its errno.
void set_from_result(Trial& t, int res, std::string_view what) {
    const int err = res < 0 ? -res : res;
    if (is_refusal(err))
        set_unsupported(t, err, fmt::format("{}: {}", what, err_text(err)));
    else
        set_failed(t, err, fmt::format("{}: {}", what, err_text(err)));
}

std::string memlock_text() {
    rlimit rl{};
    if (::getrlimit(RLIMIT_MEMLOCK, &rl) != 0) return "RLIMIT_MEMLOCK unknown";
    if (rl.rlim_cur == RLIM_INFINITY) return "RLIMIT_MEMLOCK unlimited";
    return fmt::format("RLIMIT_MEMLOCK {}", util::format_bytes(rl.rlim_cur));
}

// Runs one trial, turning exceptions (setup and registration refusals) into results.
Trial attempt(const char* name, const char* summary, const std::function<void(Trial&)>& body) {
    Trial t;
    t.name = name;
    t.summary = summary;
    try {
        body(t);
    } catch (const RingError& e) {
        const int err = e.code().value();
        if (err == ENOMEM && std::string_view(e.call()) == "io_uring_setup") {
            // Measured on 6.18: without CAP_IPC_LOCK the rings themselves are
            // charged to RLIMIT_MEMLOCK, and a ring closed by an earlier trial
            // is released asynchronously, so its pages may still count.
            set_unsupported(t, err,
                            fmt::format("io_uring_setup: {}: the ring's memory is charged to {} "
                                        "(no CAP_IPC_LOCK); raise it with `ulimit -l`",
                                        err_text(err), memlock_text()));
        } else if (is_refusal(err)) {
            set_unsupported(t, err, e.what());
        } else {
            set_failed(t, err, e.what());
        }
    } catch (const std::exception& e) {
        set_failed(t, 0, e.what());
    }
    return t;
}

// Checks a read's completion and data; returns true when both are right.
bool check_read(Trial& t, const Completion& c, const unsigned char* buf, std::size_t len,
                std::uint64_t offset, std::string_view what) {
    if (c.res < 0) {
        set_from_result(t, c.res, what);
        return false;
    }
    if (static_cast<std::size_t>(c.res) != len) {
        set_failed(t, 0, fmt::format("{}: {} bytes instead of {}", what, c.res, len));
        return false;
    }
    if (const long at = mismatch(buf, len, offset); at >= 0) {
        set_failed(t, 0,
                   fmt::format("{}: wrong data at byte {} (file offset {})", what, at,
                               offset + static_cast<std::uint64_t>(at)));
        return false;
    }
    return true;
}

// ---- the trials --------------------------------------------------------------

void nop(Trial& t) {
    Ring ring(8);
    ring.prepare(op::Nop{}).user_data(0xC0FFEE);
    Completion c[1];
    if (const int r = collect(ring, c); r < 0) return set_from_result(t, r, "waiting for the NOP");
    if (c[0].user_data != 0xC0FFEE || c[0].res != 0)
        return set_failed(
            t, 0, fmt::format("NOP came back as user_data {:#x} res {}", c[0].user_data, c[0].res));
    set_ok(t, "a NOP went through the SQ and came back on the CQ with its user_data");
}

void sqpoll(Trial& t) {
    RingOptions o;
    o.sqpoll = true;
    o.sq_thread_idle_ms = 1000;
    Ring ring(8, o);
    const auto calls_before = ring.enter_calls();
    ring.prepare(op::Nop{}).user_data(1);
    if (const int r = ring.submit(); r < 0) return set_from_result(t, r, "submit");
    // Give the poll thread up to a second to pick the SQE up by itself: the
    // point of SQPOLL is a submission without io_uring_enter.
    const auto until = Clock::now() + 1s;
    while (ring.cq_ready() == 0 && Clock::now() < until) std::this_thread::sleep_for(200us);
    const auto calls = ring.enter_calls() - calls_before;
    Completion c[1];
    if (const int r = collect(ring, c); r < 0) return set_from_result(t, r, "waiting for the NOP");
    if (c[0].user_data != 1 || c[0].res != 0)
        return set_failed(t, 0, fmt::format("NOP came back with res {}", c[0].res));
    set_ok(t, fmt::format(
                  "the kernel's SQ thread picked up a NOP; io_uring_enter calls to submit it: {}",
                  calls));
}

const char* fs_name(long type) noexcept {
    switch (static_cast<unsigned long>(type)) {
        case 0xEF53:
            return "ext4";
        case 0x58465342:
            return "xfs";
        case 0x9123683E:
            return "btrfs";
        case 0x01021994:
            return "tmpfs";
        case 0x794C7630:
            return "overlayfs";
        case 0x6969:
            return "nfs";
        case 0xF2F52010:
            return "f2fs";
        case 0x2FC12FC1:
            return "zfs";
        case 0x65735546:
            return "fuse";
        case 0x858458F6:
            return "ramfs";
        case 0x4D44:
            return "vfat";
        default:
            return nullptr;
    }
}

void iopoll(Trial& t, const std::string& dir) {
    ProbeFile file;
    if (const int err = file.create(dir))
        return set_unsupported(t, err,
                               fmt::format("cannot create a file in {}: {}", dir, err_text(err)));
    struct statfs sfs {};
    std::string fs = "an unknown file system";
    if (::fstatfs(file.fd(), &sfs) == 0) {
        const char* n = fs_name(static_cast<long>(sfs.f_type));
        fs = n ? n : fmt::format("file system {:#x}", static_cast<unsigned long>(sfs.f_type));
    }
    UniqueFd direct(::open(file.path().c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
    if (!direct) {
        const int err = errno;
        return set_unsupported(
            t, err, fmt::format("{} refuses O_DIRECT, which IOPOLL needs: {}", fs, err_text(err)));
    }
    RingOptions o;
    o.iopoll = true;
    Ring ring(8, o);
    Pages buf(4096);
    constexpr std::uint64_t offset = 8192;
    ring.prepare(op::Read(Fd{direct.get()}, buf.data(), 4096, offset)).user_data(1);
    Completion c[1];
    if (const int r = collect(ring, c); r < 0)
        return set_from_result(t, r, "waiting for the polled read");
    if (c[0].res == -EOPNOTSUPP)
        return set_unsupported(
            t, EOPNOTSUPP,
            fmt::format("{} in {}: the block device has no poll queues (e.g. NVMe "
                        "needs nvme.poll_queues > 0): {}",
                        fs, dir, err_text(EOPNOTSUPP)));
    if (!check_read(t, c[0], buf.data(), 4096, offset, fmt::format("O_DIRECT read on {}", fs)))
        return;
    set_ok(t,
           fmt::format("a 4 KiB O_DIRECT read at offset {} on {} in {} completed by polling; data "
                       "matches",
                       offset, fs, dir));
}

void defer_taskrun(Trial& t, const std::string& dir) {
    RingOptions o;
    o.single_issuer = true;
    o.defer_taskrun = true;
    Ring ring(8, o);
    ProbeFile file;
    if (const int err = file.create(dir))
        return set_failed(t, err,
                          fmt::format("cannot create a file in {}: {}", dir, err_text(err)));
    unsigned char buf[4096];
    constexpr std::uint64_t offset = 12288;
    ring.prepare(op::Read(Fd{file.fd()}, buf, sizeof buf, offset)).user_data(1);
    Completion c[1];
    if (const int r = collect(ring, c); r < 0) return set_from_result(t, r, "waiting for the read");
    if (!check_read(t, c[0], buf, sizeof buf, offset, "read")) return;
    set_ok(t, "a read completed on a SINGLE_ISSUER|DEFER_TASKRUN ring; data matches");
}

// Registered buffers, then a real read_fixed into one: two trials, one ring.
void registered_buffers(std::vector<Trial>& out, const std::string& dir) {
    constexpr std::size_t kBufferSize = 64 * 1024;
    Ring* ring_ptr = nullptr;
    std::optional<Ring> ring;
    std::optional<Pages> buf;
    out.push_back(
        attempt("registered_buffers", "register a 64 KiB buffer (pinned memory)", [&](Trial& t) {
            ring.emplace(8);
            buf.emplace(kBufferSize);
            const iovec iov{buf->data(), buf->size()};
            try {
                ring->register_buffers({&iov, 1});
            } catch (const RingError& e) {
                const int err = e.code().value();
                if (err == ENOMEM)
                    return set_unsupported(
                        t, err,
                        fmt::format("registering 64 KiB: {}; {} and no CAP_IPC_LOCK: raise "
                                    "it with `ulimit -l`",
                                    err_text(err), memlock_text()));
                throw;
            }
            ring_ptr = &*ring;
            set_ok(t, fmt::format("64 KiB registered; {}", memlock_text()));
        }));
    out.push_back(
        attempt("read_fixed", "read_fixed into a registered buffer, data checked", [&](Trial& t) {
            if (!ring_ptr)
                return set_unsupported(t, out.back().err, "needs registered buffers (see above)");
            ProbeFile file;
            if (const int err = file.create(dir))
                return set_failed(
                    t, err, fmt::format("cannot create a file in {}: {}", dir, err_text(err)));
            // Read into the middle of the registered buffer, so the kernel must use
            // the address we give (some kernels answered -EFAULT when addr was not
            // set) and must not write outside [addr, addr+len).
            std::memset(buf->data(), 0xAA, buf->size());
            constexpr std::size_t at = 4096, len = 8192;
            constexpr std::uint64_t offset = 20480;
            ring_ptr->prepare(op::ReadFixed(Fd{file.fd()}, buf->data() + at, len, offset, 0))
                .user_data(1);
            Completion c[1];
            if (const int r = collect(*ring_ptr, c); r < 0)
                return set_from_result(t, r, "waiting for read_fixed");
            if (!check_read(t, c[0], buf->data() + at, len, offset, "read_fixed")) return;
            for (std::size_t i = 0; i < buf->size(); ++i)
                if ((i < at || i >= at + len) && buf->data()[i] != 0xAA)
                    return set_failed(
                        t, 0, fmt::format("read_fixed wrote outside its range, at byte {}", i));
            set_ok(t, fmt::format(
                          "{} bytes at offset {} landed at byte {} of the registered buffer; data "
                          "matches, nothing else touched",
                          len, offset, at));
        }));
}

sockaddr_in loopback_any_port() noexcept {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    return a;
}

// A listening TCP socket on 127.0.0.1 and an ephemeral port; throws on failure.
UniqueFd listen_loopback(sockaddr_in& addr) {
    UniqueFd l(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!l) throw RingError("socket", errno);
    addr = loopback_any_port();
    socklen_t len = sizeof addr;
    if (::bind(l.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(l.get(), 16) != 0 ||
        ::getsockname(l.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
        throw RingError("bind/listen on 127.0.0.1", errno);
    return l;
}

UniqueFd connect_to(const sockaddr_in& addr) {
    UniqueFd c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!c) throw RingError("socket", errno);
    // A loopback connect completes from the listen backlog, before any accept.
    if (::connect(c.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
        throw RingError("connect to 127.0.0.1", errno);
    return c;
}

unsigned short local_port(int fd) noexcept {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    return ntohs(a.sin_port);
}
unsigned short peer_port(int fd) noexcept {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len);
    return ntohs(a.sin_port);
}

void multishot_accept(Trial& t) {
    sockaddr_in addr{};
    UniqueFd listener = listen_loopback(addr);
    Ring ring(8);
    constexpr std::uint64_t kAccept = 1, kCancel = 2;
    ring.prepare(op::Accept(Fd{listener.get()}).flags(SOCK_CLOEXEC).multishot()).user_data(kAccept);
    if (const int r = ring.submit(); r < 0) return set_from_result(t, r, "submit");
    UniqueFd clients[2] = {connect_to(addr), connect_to(addr)};
    Completion c[2];
    if (const int r = collect(ring, c); r < 0)
        return set_from_result(t, r, "waiting for two accepts");
    UniqueFd accepted[2];
    for (int i = 0; i < 2; ++i) {
        if (c[i].res >= 0) accepted[i] = UniqueFd(c[i].res);
        if (c[i].user_data != kAccept)
            return set_failed(t, 0, "a completion with a foreign user_data");
        if (c[i].res < 0) return set_from_result(t, c[i].res, "multishot accept");
        if (!c[i].more())
            return set_unsupported(t, 0,
                                   "the accept completed without IORING_CQE_F_MORE: not multishot");
    }
    // Each accepted socket must be the peer of one of our clients.
    const unsigned short p0 = peer_port(accepted[0].get()), p1 = peer_port(accepted[1].get());
    const unsigned short c0 = local_port(clients[0].get()), c1 = local_port(clients[1].get());
    if (!((p0 == c0 && p1 == c1) || (p0 == c1 && p1 == c0)))
        return set_failed(t, 0, "the accepted sockets are not the two clients' peers");
    // Stop it: the cancel and the accept's last CQE (without MORE) both come back.
    ring.prepare(op::AsyncCancel(kAccept)).user_data(kCancel);
    Completion end[2];
    if (const int r = collect(ring, end); r < 0)
        return set_from_result(t, r, "waiting for the cancel");
    for (const Completion& e : end) {
        if (e.user_data == kAccept && (e.more() || e.res != -ECANCELED))
            return set_failed(t, 0, fmt::format("cancelled accept ended with res {}", e.res));
        if (e.user_data == kCancel && e.res != 0)
            return set_from_result(t, e.res, "async_cancel of the multishot accept");
    }
    set_ok(t, "one SQE accepted two loopback connections (CQE_F_MORE on each), then was cancelled");
}

// Provided buffer ring, then multishot recv from it: two trials, one ring.
void buffer_ring_and_recv(std::vector<Trial>& out, const std::string& dir) {
    constexpr std::uint16_t kGroup = 7;
    constexpr unsigned kCount = 4;
    constexpr std::uint32_t kSize = 256;
    std::optional<Ring> ring;
    std::optional<BufferRing> group;
    out.push_back(attempt(
        "provided_buffer_ring", "register a provided buffer ring; a read picks a buffer",
        [&](Trial& t) {
            ring.emplace(8);
            group.emplace(*ring, kGroup, kCount, kSize);
            ProbeFile file;
            if (const int err = file.create(dir))
                return set_failed(
                    t, err, fmt::format("cannot create a file in {}: {}", dir, err_text(err)));
            constexpr std::uint64_t offset = 1000;
            ring->prepare(op::ReadProvided(Fd{file.fd()}, kSize, offset))
                .buffer_select(kGroup)
                .user_data(1);
            Completion c[1];
            if (const int r = collect(*ring, c); r < 0)
                return set_from_result(t, r, "waiting for the read");
            if (c[0].res < 0) return set_from_result(t, c[0].res, "read with a provided buffer");
            const auto id = c[0].buffer_id();
            if (!id || *id >= kCount)
                return set_failed(t, 0, "the completion names no valid buffer");
            const auto data = group->data(*id, static_cast<std::size_t>(c[0].res));
            if (!check_read(t, c[0], reinterpret_cast<const unsigned char*>(data.data()), kSize,
                            offset, "read into a provided buffer"))
                return;
            group->recycle(*id);
            set_ok(t,
                   fmt::format(
                       "the kernel picked buffer {} of group {} for a {}-byte read; data matches",
                       *id, kGroup, kSize));
        }));
    const Outcome ring_outcome = out.back().outcome;
    const int ring_err = out.back().err;
    out.push_back(attempt(
        "multishot_recv", "multishot recv on loopback TCP into the buffer ring", [&](Trial& t) {
            if (ring_outcome != Outcome::ok)
                return set_unsupported(t, ring_err, "needs a provided buffer ring (see above)");
            sockaddr_in addr{};
            UniqueFd listener = listen_loopback(addr);
            UniqueFd client = connect_to(addr);
            UniqueFd server(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
            if (!server) throw RingError("accept", errno);
            ring->prepare(op::Recv::provided(Fd{server.get()}, kGroup).multishot()).user_data(3);
            if (const int r = ring->submit(); r < 0) return set_from_result(t, r, "submit");
            // Two separate arrivals, each waited for, so each must come back as its
            // own CQE from the one armed request.
            const std::string_view messages[] = {"first message over loopback",
                                                 "second, a little longer"};
            int shots = 0;
            for (std::string_view m : messages) {
                if (::send(client.get(), m.data(), m.size(), MSG_NOSIGNAL) !=
                    static_cast<ssize_t>(m.size()))
                    throw RingError("send on loopback", errno);
                Completion c[1];
                if (const int r = collect(*ring, c); r < 0)
                    return set_from_result(t, r, "waiting for data");
                if (c[0].res < 0) return set_from_result(t, c[0].res, "multishot recv");
                const auto id = c[0].buffer_id();
                if (!id || *id >= kCount)
                    return set_failed(t, 0, "a recv completion names no valid buffer");
                const auto data = group->data(*id, static_cast<std::size_t>(c[0].res));
                if (std::string_view(reinterpret_cast<const char*>(data.data()), data.size()) != m)
                    return set_failed(t, 0,
                                      fmt::format("message {} came back different", shots + 1));
                if (!c[0].more())
                    return set_unsupported(
                        t, 0, "recv completed without IORING_CQE_F_MORE: not multishot");
                group->recycle(*id);
                ++shots;
            }
            // EOF ends the multishot request: res 0 and no MORE.
            ::shutdown(client.get(), SHUT_WR);
            Completion c[1];
            if (const int r = collect(*ring, c); r < 0)
                return set_from_result(t, r, "waiting for EOF");
            if (c[0].res != 0 || c[0].more())
                return set_failed(t, 0,
                                  fmt::format("after EOF: res {} more {}", c[0].res, c[0].more()));
            set_ok(t, fmt::format(
                          "one SQE delivered {} messages into provided buffers, then ended at EOF",
                          shots));
        }));
}

void registered_ring_fd(Trial& t) {
    RingOptions o;
    o.register_ring_fd = true;
    Ring ring(8, o);
    if (!ring.ring_fd_registered()) {
        // The Ring keeps the plain fd quietly; ask the kernel ourselves for the errno.
        io_uring_rsrc_update up{};
        up.offset = ~0U;
        up.data = static_cast<__u64>(ring.fd());
        const int r = ring.register_raw(IORING_REGISTER_RING_FDS, &up, 1);
        if (r == 1) {
            ring.register_raw(IORING_UNREGISTER_RING_FDS, &up, 1);
            return set_failed(t, 0,
                              "the kernel registers the ring fd, but the Ring did not use it");
        }
        return set_from_result(t, r, "IORING_REGISTER_RING_FDS");
    }
    ring.prepare(op::Nop{}).user_data(9);
    Completion c[1];
    if (const int r = collect(ring, c); r < 0)
        return set_from_result(t, r, "NOP via the registered fd");
    if (c[0].user_data != 9 || c[0].res != 0) return set_failed(t, 0, "the NOP came back wrong");
    set_ok(t, "io_uring_enter with IORING_ENTER_REGISTERED_RING submitted and reaped a NOP");
}

void direct_openat(Trial& t, const std::string& dir) {
    ProbeFile file;
    if (const int err = file.create(dir))
        return set_failed(t, err,
                          fmt::format("cannot create a file in {}: {}", dir, err_text(err)));
    Ring ring(8);
    ring.register_files_sparse(4);
    constexpr unsigned kSlot = 2;
    unsigned char buf[4096];
    constexpr std::uint64_t offset = 4096 * 5;
    // One chain: open straight into slot 2, read through the slot, close the slot.
    ring.prepare(op::OpenAt(AT_FDCWD, file.path().c_str(), O_RDONLY).into_slot(kSlot))
        .user_data(1)
        .link();
    ring.prepare(op::Read(Fixed{kSlot}, buf, sizeof buf, offset)).user_data(2).link();
    ring.prepare(op::Close(Fixed{kSlot})).user_data(3);
    Completion c[3];
    if (const int r = collect(ring, c); r < 0)
        return set_from_result(t, r, "waiting for the chain");
    Completion by_step[3] = {};
    for (const Completion& x : c)
        if (x.user_data >= 1 && x.user_data <= 3) by_step[x.user_data - 1] = x;
    if (by_step[0].res != 0) return set_from_result(t, by_step[0].res, "openat into a fixed slot");
    if (!check_read(t, by_step[1], buf, sizeof buf, offset, "read through the fixed slot")) return;
    if (by_step[2].res != 0) return set_from_result(t, by_step[2].res, "close of the fixed slot");
    set_ok(t, "openat -> read -> close chained on fixed slot 2, no descriptor; data matches");
}

}  // namespace

}  // namespace uringkit::probe::detail

namespace uringkit::probe {

int check_dir(const std::string& dir) {
    detail::ProbeFile f;  // the same file the trials make, removed on return
    return f.create(dir);
}

}  // namespace uringkit::probe

namespace uringkit::probe::detail {

void run_trials(const std::string& dir, std::vector<Trial>& out) {
    out.push_back(attempt("nop", "a NOP round trip on a plain ring", nop));
    out.push_back(attempt("sqpoll", "SQPOLL: the kernel thread submits, no system call", sqpoll));
    out.push_back(attempt("iopoll", "IOPOLL: polled O_DIRECT read of a file in the trial directory",
                          [&](Trial& t) { iopoll(t, dir); }));
    out.push_back(attempt("defer_taskrun", "SINGLE_ISSUER + DEFER_TASKRUN ring runs a read",
                          [&](Trial& t) { defer_taskrun(t, dir); }));
    registered_buffers(out, dir);
    out.push_back(attempt("multishot_accept", "multishot accept of two loopback connections",
                          multishot_accept));
    buffer_ring_and_recv(out, dir);
    out.push_back(attempt("registered_ring_fd", "register the ring fd and enter through it",
                          registered_ring_fd));
    out.push_back(attempt("direct_openat", "openat into a fixed slot, read and close through it",
                          [&](Trial& t) { direct_openat(t, dir); }));
}

}  // namespace uringkit::probe::detail
