#include "engines/target.hpp"

#include "cli/size.hpp"
#include "engines/workload.hpp"
#include "uringkit/util/unique_fd.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace uringkit::engines {
namespace {

bool space_error(int err) {
    return err == ENOSPC || err == EFBIG || err == EDQUOT;
}

// One aligned buffer for probing and filling.
struct AlignedBuf {
    explicit AlignedBuf(std::size_t n) : size(n) {
        p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::runtime_error("out of memory for a buffer");
    }
    ~AlignedBuf() { ::munmap(p, size); }
    void* p;
    std::size_t size;
};

}  // namespace

Target::Target(const TargetSpec& spec) : direct_(spec.direct), write_(spec.write) {
    if (spec.bs == 0) throw TargetError(TargetError::usage, "--bs must be at least 1 byte");
    if (spec.filename.empty()) {
        create_temporary(spec);
    } else {
        path_ = spec.filename;
        struct stat st;
        if (::stat(path_.c_str(), &st) != 0)
            throw TargetError(
                TargetError::bad_input,
                fmt::format("{}: {} (give an existing file or block device, or leave out "
                            "--filename for a temporary file)",
                            path_, std::strerror(errno)));
        if (S_ISDIR(st.st_mode))
            throw TargetError(
                TargetError::bad_input,
                fmt::format("{}: is a directory (give a file or block device)", path_));
        if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
            throw TargetError(TargetError::bad_input,
                              fmt::format("{}: not a regular file or block device", path_));
        block_device_ = S_ISBLK(st.st_mode);
        if (spec.write && !spec.allow_write)
            throw TargetError(
                TargetError::usage,
                fmt::format("{}: refusing to write to a file you named; add --allow-write if its "
                            "contents may be overwritten",
                            path_));
        const util::UniqueFd f(::open(path_.c_str(), (spec.write ? O_RDWR : O_RDONLY) | O_CLOEXEC));
        if (f.get() < 0)
            throw TargetError(
                TargetError::bad_input,
                fmt::format("{}: cannot open for {}: {}", path_, spec.write ? "writing" : "reading",
                            std::strerror(errno)));
        std::uint64_t bytes = static_cast<std::uint64_t>(st.st_size);
        if (block_device_) {
            if (::ioctl(f.get(), BLKGETSIZE64, &bytes) != 0) bytes = 0;
            int lbs = 0;
            if (::ioctl(f.get(), BLKSSZGET, &lbs) == 0 && lbs > 0)
                direct_align_ = static_cast<std::uint32_t>(lbs);
        }
        // fio lays out a larger file than the one named; a benchmark of
        // someone's file must not grow it, so a --size beyond its end is an
        // error rather than silently measuring less than was asked.
        if (spec.size > bytes)
            throw TargetError(
                TargetError::usage,
                fmt::format("--size {}: larger than {} ({}); give at most its size or leave out "
                            "--size",
                            cli::format_bytes(spec.size), path_, cli::format_bytes(bytes)));
        if (spec.size) bytes = spec.size;
        size_ = bytes / spec.bs * spec.bs;
        if (size_ == 0)
            throw TargetError(TargetError::bad_input,
                              fmt::format("{}: {} is smaller than one block (--bs {})", path_,
                                          cli::format_bytes(bytes), spec.bs));
    }

    if (spec.direct) {
        struct statx sx {};
        if (!block_device_ && ::statx(AT_FDCWD, path_.c_str(), 0, STATX_DIOALIGN, &sx) == 0 &&
            (sx.stx_mask & STATX_DIOALIGN)) {
            if (sx.stx_dio_offset_align == 0) {
                const std::string p = path_;
                remove();
                throw TargetError(
                    TargetError::bad_input,
                    fmt::format("{}: its filesystem refuses O_DIRECT (statx reports no direct I/O "
                                "support); drop --direct or use a file on another filesystem",
                                p));
            }
            direct_align_ = sx.stx_dio_offset_align;
        }
        if (spec.bs % direct_align_ != 0) {
            const std::string p = path_;
            remove();
            throw TargetError(
                TargetError::bad_input,
                fmt::format("--bs {} is not a multiple of {}'s logical block size ({} bytes), "
                            "which O_DIRECT requires",
                            spec.bs, p, direct_align_));
        }
        // Opening is not enough: some filesystems accept O_DIRECT in open()
        // and refuse the I/O, so read one block.
        const int fd = ::open(path_.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
        int err = fd < 0 ? errno : 0;
        if (fd >= 0) {
            AlignedBuf buf(spec.bs);
            if (::pread(fd, buf.p, spec.bs, 0) < 0) err = errno;
            ::close(fd);
        }
        if (err) {
            const std::string p = path_;
            remove();
            throw TargetError(
                TargetError::bad_input,
                fmt::format("{}: O_DIRECT {} failed: {} (its filesystem refuses direct I/O; drop "
                            "--direct or use a file on another filesystem)",
                            p, fd < 0 ? "open" : "read", std::strerror(err)));
        }
    }
}

Target::~Target() {
    remove();
}

void Target::remove() noexcept {
    if (temporary_ && !path_.empty()) ::unlink(path_.c_str());
    temporary_ = false;
}

void Target::create_temporary(const TargetSpec& spec) {
    if (spec.size == 0)
        throw TargetError(TargetError::usage, "--size must be more than 0 for a temporary file");
    size_ = spec.size / spec.bs * spec.bs;
    if (size_ == 0)
        throw TargetError(
            TargetError::usage,
            fmt::format("--size {} is smaller than one block (--bs {})", spec.size, spec.bs));
    std::string dir = spec.tmpdir;
    if (dir.empty()) {
        const char* t = std::getenv("TMPDIR");
        dir = t && *t ? t : "/tmp";
    }
    std::string tmpl = dir + "/uringkit-bench-XXXXXX";
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    const int fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd < 0)
        throw TargetError(
            TargetError::bad_input,
            fmt::format("cannot create a temporary file in {}: {} (set TMPDIR to a writable "
                        "directory, or give --filename)",
                        dir, std::strerror(errno)));
    path_ = name.data();
    temporary_ = true;  // from here on the destructor (or remove()) unlinks it
    const util::UniqueFd f(fd);
    auto fail = [&](int err, const char* what) {
        const std::string p = path_;
        remove();
        if (space_error(err))
            throw TargetError(
                TargetError::no_space,
                fmt::format("{}: no room for a {} temporary file in {} ({} failed: {}); free "
                            "space, set TMPDIR elsewhere or lower --size",
                            p, cli::format_bytes(size_), dir, what, std::strerror(err)));
        throw TargetError(TargetError::bad_input,
                          fmt::format("{}: {} failed: {}", p, what, std::strerror(err)));
    };
    // Reserve first so a full disk fails at once, not after writing gigabytes.
    if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(size_));
        err != 0 && err != EOPNOTSUPP)
        fail(err, "fallocate");
    // Real data, not unwritten extents: reading those costs no device I/O and
    // would flatter every O_DIRECT figure.  Each sector carries its offset
    // (see stamp_block) and the rest is pseudo-random.
    constexpr std::size_t kChunk = 1 << 20;
    AlignedBuf buf(kChunk);
    auto* words = static_cast<std::uint64_t*>(buf.p);
    std::uint64_t rng = 0x5eed;
    for (std::uint64_t off = 0; off < size_; off += kChunk) {
        if (spec.stop && spec.stop->load(std::memory_order_relaxed)) {
            remove();
            throw TargetError(TargetError::interrupted,
                              "interrupted while writing the temporary file");
        }
        const std::size_t n =
            static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, size_ - off));
        for (std::size_t i = 0; i < n / 8; ++i) words[i] = splitmix64(rng);
        stamp_block(buf.p, static_cast<std::uint32_t>(n), off);
        std::size_t done = 0;
        while (done < n) {
            const ssize_t w = ::pwrite(fd, static_cast<char*>(buf.p) + done, n - done,
                                       static_cast<off_t>(off + done));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) fail(w < 0 ? errno : ENOSPC, "write");
            done += static_cast<std::size_t>(w);
        }
    }
    // On disk before any run, so cold-cache and O_DIRECT reads hit the device
    // and dropping the cache can drop every page.
    if (::fsync(fd) != 0) fail(errno, "fsync");
}

int Target::open_job_fd() const {
    const int flags = (write_ ? O_RDWR : O_RDONLY) | (direct_ ? O_DIRECT : 0) | O_CLOEXEC;
    const int fd = ::open(path_.c_str(), flags);
    if (fd < 0)
        throw std::runtime_error(fmt::format("{}: open failed: {}", path_, std::strerror(errno)));
    return fd;
}

void Target::warm_cache() const {
    const util::UniqueFd f(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    if (f.get() < 0) return;
    constexpr std::size_t kChunk = 1 << 20;
    AlignedBuf buf(kChunk);
    for (std::uint64_t off = 0; off < size_; off += kChunk)
        if (::pread(f.get(), buf.p,
                    static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, size_ - off)),
                    static_cast<off_t>(off)) <= 0)
            break;
}

void Target::drop_cache() const {
    const util::UniqueFd f(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    if (f.get() < 0) return;
    ::fdatasync(f.get());  // dirty pages are not dropped; write them back first
    ::posix_fadvise(f.get(), 0, static_cast<off_t>(size_), POSIX_FADV_DONTNEED);
}

}  // namespace uringkit::engines
