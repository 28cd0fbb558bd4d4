// The block-device trials: the 128-byte-SQE ring NVMe passthrough needs,
// hybrid IOPOLL, and, on the device named with `probe --dev`, a polled read
// and an NVMe passthrough read, each checked against a plain O_DIRECT read
// of the same bytes.  Every trial only reads the device.
#include "trial_support.hpp"
#include "trials.hpp"

#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/big_ring.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/nvme.hpp"
#include "uringkit/util/unique_fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cerrno>
#include <cstring>

namespace uringkit::probe::detail {
namespace {

using util::UniqueFd;
constexpr std::uint32_t kBytes = 4096;  // a multiple of every LBA size in use

// The first kBytes of `dev` through the page-cache-free path, or -errno.
int reference_read(const std::string& dev, unsigned char* out) {
    UniqueFd fd(::open(dev.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
    if (!fd) return -errno;
    const ssize_t n = ::pread(fd.get(), out, kBytes, 0);
    if (n < 0) return -errno;
    return n == kBytes ? 0 : -EIO;
}

void big_ring(Trial& t) {
    BigRing big(8);
    big.prepare(op::Nop{}).user_data(42);
    Completion c[1];
    if (const int r = collect(big.ring(), c); r < 0) return set_from_result(t, r, "the NOP");
    if (c[0].user_data != 42 || c[0].res != 0)
        return set_failed(
            t, EIO,
            fmt::format("the NOP came back as user_data {} res {}", c[0].user_data, c[0].res));
    set_ok(t, "a NOP round trip through 128-byte SQEs and 32-byte CQEs");
}

// A polled read of `dev` on a ring set up with `options`, compared with the
// reference bytes.  The buffer is made before the ring, so on every return
// (a timed-out read included) the ring is gone, and its request with it,
// before the buffer the request names.
void polled_read(Trial& t, const RingOptions& options, const std::string& dev, const char* what) {
    Pages want(kBytes), got(kBytes);
    // First, so a ring the kernel refuses (HYBRID_IOPOLL before 6.13) is
    // what the trial says: attempt() reports the throw.
    Ring ring(8, options);
    if (const int r = reference_read(dev, want.data()); r < 0)
        return set_unsupported(t, -r, fmt::format("{}: O_DIRECT read: {}", dev, err_text(-r)));
    UniqueFd fd(::open(dev.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
    if (!fd) return set_unsupported(t, errno, fmt::format("{}: {}", dev, err_text(errno)));
    ring.prepare(op::Read(Fd{fd.get()}, got.data(), kBytes, 0)).user_data(1);
    Completion c[1];
    if (const int r = collect(ring, c); r < 0) return set_from_result(t, r, "the polled read");
    if (c[0].res == -EOPNOTSUPP)
        return set_unsupported(t, EOPNOTSUPP,
                               fmt::format("{} has no poll queues (NVMe: nvme.poll_queues > 0; "
                                           "virtio-blk: virtio_blk.poll_queues, 5.18)",
                                           dev));
    if (c[0].res != static_cast<int>(kBytes))
        return set_from_result(t, c[0].res, "the polled read");
    if (std::memcmp(got.data(), want.data(), kBytes) != 0)
        return set_failed(t, EIO, fmt::format("{}: the polled read's bytes differ", dev));
    set_ok(t, fmt::format("{} read 4 KiB of {} by polling; the bytes match an O_DIRECT pread", what,
                          dev));
}

void hybrid_iopoll(Trial& t, const std::string& dev) {
    RingOptions o;
    o.iopoll = true;
    o.extra_flags = IORING_SETUP_HYBRID_IOPOLL;
    if (dev.empty()) {
        Ring ring(8, o);  // EINVAL before 6.13: attempt() reports it unsupported
        return set_ok(t, "the ring is set up (a read needs a device with poll queues: --dev)");
    }
    polled_read(t, o, dev, "a hybrid IOPOLL ring");
}

void iopoll_device(Trial& t, const std::string& dev) {
    RingOptions o;
    o.iopoll = true;
    polled_read(t, o, dev, "an IOPOLL ring");
}

void nvme_passthrough(Trial& t, const std::string& dev) {
    std::string why;
    const auto ns = nvme::find_namespace(dev, why);
    if (!ns) return set_unsupported(t, ENODEV, why);
    Pages want(kBytes), got(kBytes);
    if (const int r = reference_read(dev, want.data()); r < 0)
        return set_unsupported(t, -r, fmt::format("{}: O_DIRECT read: {}", dev, err_text(-r)));
    UniqueFd ng(::open(ns->char_device.c_str(), O_RDONLY | O_CLOEXEC));
    if (!ng)
        return set_unsupported(t, errno, fmt::format("{}: {}", ns->char_device, err_text(errno)));
    BigRing big(8);
    big.prepare(
           op::NvmeCmd::read(Fd{ng.get()}, ns->nsid, 0, kBytes / ns->lba_size, got.data(), kBytes))
        .user_data(1);
    Completion c[1];
    if (const int r = collect(big.ring(), c); r < 0)
        return set_from_result(t, r, "the passthrough read");
    if (c[0].res < 0) return set_from_result(t, c[0].res, "the passthrough read");
    if (c[0].res > 0)
        return set_failed(
            t, EIO,
            fmt::format("{}: NVMe status {}", ns->char_device, nvme::status_text(c[0].res)));
    if (std::memcmp(got.data(), want.data(), kBytes) != 0)
        return set_failed(
            t, EIO,
            fmt::format("{}: the passthrough read's bytes differ from {}'s", ns->char_device, dev));
    set_ok(t, fmt::format("an NVMe Read of 4 KiB through {} (namespace {}, {}-byte blocks) "
                          "matches an O_DIRECT pread of {}",
                          ns->char_device, ns->nsid, ns->lba_size, dev));
}

}  // namespace

void run_block_trials(const std::string& dev, std::vector<Trial>& out) {
    out.push_back(attempt("big_ring", "128-byte SQEs and 32-byte CQEs (NVMe passthrough's layout)",
                          big_ring));
    out.push_back(attempt("hybrid_iopoll", "IOPOLL that sleeps before polling (HYBRID_IOPOLL)",
                          [&](Trial& t) { hybrid_iopoll(t, dev); }));
    if (dev.empty()) return;
    out.push_back(attempt("iopoll_device", "IOPOLL: polled O_DIRECT read of --dev",
                          [&](Trial& t) { iopoll_device(t, dev); }));
    out.push_back(attempt("nvme_passthrough", "NVMe Read through the char device of --dev",
                          [&](Trial& t) { nvme_passthrough(t, dev); }));
}

}  // namespace uringkit::probe::detail
