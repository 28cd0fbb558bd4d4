#include "trials.hpp"
#include "trial_support.hpp"

#include "cli/size.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/buffer_ring.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/error.hpp"
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

using util::UniqueFd;

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
    const auto until = std::chrono::steady_clock::now() + 1s;
    while (ring.cq_ready() == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(200us);
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

void run_trials(const std::string& dir, const std::string& dev, std::vector<Trial>& out) {
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
    run_block_trials(dev, out);
}

}  // namespace uringkit::probe::detail
