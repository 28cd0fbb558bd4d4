#include "probe/kernel.hpp"

#include <sys/utsname.h>

#include <array>
#include <charconv>

namespace uringkit::probe {
namespace {

// Oldest first.  `name` is the probe trial that tries the feature where there
// is one, so `probe --json` can give each trial its `needs`.  The releases are
// those of the kernel's io_uring history (liburing's man pages name them).
constexpr std::array<FeatureNeed, 20> kNeeds{{
    {"nop",
     {5, 1},
     "every io_uring path",
     "io_uring_setup fails: probe exits 3 naming the cause; cp and readfiles use read/write; "
     "bench reports the io_uring engines unavailable; serve --engine auto uses epoll"},
    {"iopoll",
     {5, 1},
     "bench uring-iopoll",
     "the engine is reported unavailable with the errno (it also needs a device with poll queues)"},
    {"iopoll_device",
     {5, 1},
     "bench uring-iopoll --filename DEV",
     "as iopoll: the device needs poll queues (nvme poll_queues=N, virtio_blk poll_queues=N)"},
    {"registered_buffers",
     {5, 1},
     "bench uring-reg, cp, readfiles",
     "cp and readfiles read into plain buffers; uring-reg is reported unavailable"},
    {"read_fixed", {5, 1}, "bench uring-reg, cp, readfiles", "as registered_buffers"},
    {"opcode_probe",
     {5, 6},
     "probe",
     "probe lists no opcodes and says IORING_REGISTER_PROBE needs 5.6"},
    {"sqpoll",
     {5, 11},
     "bench uring-sqpoll (unprivileged SQPOLL)",
     "the engine is reported unavailable with the errno"},
    {"ext_arg",
     {5, 11},
     "timed waits (Ring::submit_and_wait_for)",
     "the call returns -EOPNOTSUPP; the probe's trials then wait without a timeout"},
    {"iowq_max_workers",
     {5, 15},
     "cp -r (one io-wq worker per CPU)",
     "no limit; --kernel-workers says the kernel cannot limit the workers"},
    {"registered_ring_fd",
     {5, 18},
     "single_thread_options(): cp, readfiles, bench uring",
     "the ring is entered through its plain fd"},
    {"direct_openat",
     {5, 19},
     "readfiles, cp (sparse file table, open/read/close chains)",
     "io_uring_register(REGISTER_FILES2) fails with EINVAL: readfiles and cp use read/write, "
     "cp saying why"},
    {"provided_buffer_ring",
     {5, 19},
     "serve --engine uring",
     "serve --engine auto falls back to epoll saying why; --engine uring exits 3 naming it"},
    {"multishot_accept", {5, 19}, "serve --engine uring", "as provided_buffer_ring"},
    {"big_ring",
     {5, 19},
     "BigRing: NVMe passthrough (op::NvmeCmd)",
     "io_uring_setup refuses SQE128|CQE32 with EINVAL; BigRing throws RingError"},
    {"nvme_passthrough",
     {5, 19},
     "op::NvmeCmd on /dev/ngXnY",
     "no /dev/ngXnY char device: only the block device's paths (pread, the ring, IOPOLL)"},
    {"multishot_recv",
     {6, 0},
     "serve --engine uring",
     "serve --engine auto falls back to epoll saying \"needs Linux 6.0\"; --engine uring exits 3"},
    {"single_issuer",
     {6, 0},
     "Ring::create with single_thread_options(), bench liburing",
     "the same ring is set up without the flag (it changes speed, not meaning)"},
    {"defer_taskrun",
     {6, 1},
     "Ring::create with single_thread_options(), bench liburing",
     "the same ring is set up without the flag"},
    {"batch_wait",
     {6, 12},
     "serve --batch-wait (IORING_FEAT_MIN_TIMEOUT)",
     "plain waits; serve says so once"},
    {"hybrid_iopoll",
     {6, 13},
     "RingOptions::extra_flags = IORING_SETUP_HYBRID_IOPOLL",
     "io_uring_setup refuses it with EINVAL: plain IOPOLL polls from the start"},
}};

}  // namespace

std::string KernelVersion::str() const {
    return std::to_string(major) + "." + std::to_string(minor);
}

std::optional<KernelVersion> parse_kernel_release(std::string_view release) noexcept {
    KernelVersion v;
    const char* p = release.data();
    const char* end = p + release.size();
    auto r = std::from_chars(p, end, v.major);
    if (r.ec != std::errc{} || r.ptr == end || *r.ptr != '.') return std::nullopt;
    r = std::from_chars(r.ptr + 1, end, v.minor);
    if (r.ec != std::errc{}) return std::nullopt;
    return v;
}

std::string running_kernel_release() {
    utsname u{};
    return ::uname(&u) == 0 ? std::string(u.release) : std::string();
}

std::span<const FeatureNeed> feature_needs() noexcept {
    return kNeeds;
}

std::optional<KernelVersion> feature_need(std::string_view name) noexcept {
    for (const FeatureNeed& f : kNeeds)
        if (name == f.name) return f.needs;
    return std::nullopt;
}

std::string below_minimum_notice(std::string_view release) {
    const auto v = parse_kernel_release(release);
    if (!v || *v >= kMinKernel) return {};
    return "kernel " + std::string(release) + " is older than " + kMinKernel.str() +
           ", the oldest uringkit supports: features it lacks fall back to plain system calls "
           "where a tool has a fallback, and fail naming the feature where not";
}

}  // namespace uringkit::probe
