// The engine registry, buffers, the clock and error text shared by every engine.
#include "internal.hpp"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <system_error>

namespace uringkit::engines {

namespace {
using namespace detail;
constexpr EngineInfo kEngines[] = {
    {"pread", "one blocking pread/pwrite per I/O (fio's psync); depth has no effect", start_pread,
     1, "block", "blocking"},
    {"threadpool",
     "worker threads doing blocking pread/pwrite for one submitter (the POSIX AIO model)",
     start_threadpool, 0, "block", "blocking"},
    {"libaio",
     "io_submit/io_getevents (Linux native AIO); synchronous in io_submit for buffered files",
     start_libaio},
    {"uring", "io_uring reads/writes, a batch per io_uring_enter (submit and wait in one call)",
     start_uring},
    {"uring-async", "uring with IOSQE_ASYNC on every I/O: each one goes to an io-wq worker thread",
     start_uring_async},
    {"uring-reg", "io_uring with registered file and buffers (read_fixed/write_fixed)",
     start_uring_reg},
    {"uring-sqpoll", "io_uring with a kernel SQ polling thread (its CPU is counted)",
     start_uring_sqpoll},
    {"uring-iopoll",
     "io_uring polling for completions (IOPOLL; O_DIRECT on devices with poll queues)",
     start_uring_iopoll, 0, "block", "polled"},
    {"uring-hybrid",
     "uring-iopoll that sleeps for part of each request's latency before polling "
     "(HYBRID_IOPOLL, Linux 6.13)",
     start_uring_hybrid, 0, "block", "polled"},
    {"uring-cmd",
     "NVMe passthrough: each I/O an NVMe command to /dev/ngXnY on 128-byte SQEs (fio's "
     "io_uring_cmd); --filename /dev/nvmeXnY, never the page cache",
     start_uring_cmd, 0, "nvme-passthrough"},
    {"uring-cmd-reg", "uring-cmd with the data in one registered buffer (fio's fixedbufs)",
     start_uring_cmd_reg, 0, "nvme-passthrough"},
    {"liburing", "the uring loop written on liburing, as a peer", start_liburing},
    {"auto", "pread for a lone waited-on I/O (depth 1), the ring once several are in flight",
     start_auto},
};
constexpr std::string_view kDefault[] = {"pread",    "threadpool", "libaio",
                                         "uring",    "uring-reg",  "uring-sqpoll",
#ifdef URINGKIT_HAVE_LIBURING
                                         "liburing",
#endif
                                         "auto"};
}  // namespace

std::span<const EngineInfo> all_engines() noexcept {
    return kEngines;
}
std::span<const std::string_view> default_engines() noexcept {
    return kDefault;
}

const EngineInfo* find_engine(std::string_view name) noexcept {
    for (const EngineInfo& e : kEngines)
        if (e.name == name) return &e;
    return nullptr;
}

std::uint64_t now_ns() noexcept {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

BufferArena::BufferArena(unsigned slots, std::uint32_t size, std::uint32_t align) {
    align = std::max<std::uint32_t>(align, 64);
    stride_ = (std::size_t{size} + align - 1) / align * align;
    bytes_ = std::max<std::size_t>(stride_ * slots, 1);
    // mmap gives page alignment (enough for O_DIRECT on any logical block
    // size up to 4 KiB); MAP_POPULATE takes the page faults now, not in the loop.
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED)
        throw std::system_error(errno, std::system_category(), "mmap of the I/O buffers");
    base_ = static_cast<unsigned char*>(p);
    // Distinct non-zero contents, so nothing can short-cut zero pages.
    for (std::size_t i = 0; i < bytes_; i += 64) base_[i] = static_cast<unsigned char>(i / 64 + 1);
}

BufferArena::~BufferArena() {
    if (base_) ::munmap(base_, bytes_);
}

std::string describe_error(const PhaseResult& r, std::uint32_t bs) {
    if (r.error < 0)
        return fmt::format("I/O at offset {} failed: {}", r.error_offset, std::strerror(-r.error));
    if (r.error == 1)
        return fmt::format("short transfer at offset {}: {} of {} bytes", r.error_offset,
                           r.error_res, bs);
    if (r.error == 2)
        return fmt::format("wrong data at offset {}: the block read does not carry its offset",
                           r.error_offset);
    return {};
}

}  // namespace uringkit::engines

namespace uringkit::engines {

namespace {
constexpr std::pair<RwMode, std::string_view> kRw[] = {
    {RwMode::randread, "randread"}, {RwMode::read, "read"},     {RwMode::randwrite, "randwrite"},
    {RwMode::write, "write"},       {RwMode::randrw, "randrw"},
};
}  // namespace

std::string_view rw_name(RwMode m) noexcept {
    for (const auto& [mode, name] : kRw)
        if (mode == m) return name;
    return "?";
}

std::optional<RwMode> parse_rw(std::string_view text) noexcept {
    for (const auto& [mode, name] : kRw)
        if (name == text) return mode;
    return std::nullopt;
}

}  // namespace uringkit::engines
