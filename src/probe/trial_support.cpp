// The probe trials' shared parts (trial_support.hpp).
#include "trial_support.hpp"

#include "cli/size.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <system_error>
#include <utility>

namespace uringkit::probe::detail {

using Clock = std::chrono::steady_clock;

unsigned char pattern(std::uint64_t offset) noexcept {
    return static_cast<unsigned char>((offset * 131 + (offset >> 8) * 7 + 0x5a) & 0xff);
}

long mismatch(const unsigned char* data, std::size_t len, std::uint64_t offset) noexcept {
    for (std::size_t i = 0; i < len; ++i)
        if (data[i] != pattern(offset + i)) return static_cast<long>(i);
    return -1;
}

int ProbeFile::create(const std::string& dir) {
    path_ = dir + "/.uringkit-probe-XXXXXX";
    const int fd = ::mkostemp(path_.data(), O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        path_.clear();
        return err;
    }
    fd_ = util::UniqueFd(fd);
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

ProbeFile::~ProbeFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
}

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
    return fmt::format("RLIMIT_MEMLOCK {}", cli::format_bytes(rl.rlim_cur));
}

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
    } catch (const std::system_error& e) {
        // Not io_uring's (a socket, a file): the call's own failure, no advice.
        set_failed(t, e.code().value(), e.what());
    } catch (const std::exception& e) {
        set_failed(t, 0, e.what());
    }
    return t;
}

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

}  // namespace uringkit::probe::detail
