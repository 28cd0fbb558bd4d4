// copy(): checks the options, sets up the ring and its buffers, and copies
// each operand (copy_tree.cpp for -r, copy_destination.cpp for a file).
#include "copy_internal.hpp"

#include "uringkit/fs/walk.hpp"
#include "uringkit/ring/kernel_owned.hpp"
#include "uringkit/sys/error.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace uringkit::fs {
namespace detail {

Ctx::~Ctx() {
    // An operation the kernel may still complete names these buffers: keep
    // them for the rest of the process rather than let it write freed memory.
    if (kernel_holds_buffers) {
        keep_for_kernel(big.release());
        keep_for_kernel(small.release());
    }
}

void Ctx::report(const Failure& f) {
    if (f.status == CopyStatus::interrupted) {
        interrupted = true;
        return;
    }
    if (result.failures++ == 0) {
        result.status = f.status;
        result.message = f.message;
    } else if (f.status == CopyStatus::bad_input && result.status == CopyStatus::failure) {
        result.status = f.status;  // the README's rule: a path that cannot be used (4) wins over a refused write (1)
    }
    if (sink.error) sink.error(f.message);
}

CopyStatus status_of_write(int err) noexcept {
    err = err < 0 ? -err : err;
    return err == ENOSPC || err == EFBIG || err == EDQUOT ? CopyStatus::no_space : CopyStatus::failure;
}

CopyStatus status_of_create(int err) noexcept {
    err = err < 0 ? -err : err;
    return err == ENOENT || err == ENOTDIR ? CopyStatus::bad_input : status_of_write(err);
}

std::string io_message(std::string_view path, const char* what, std::uint64_t offset, int err) {
    err = err < 0 ? -err : err;
    char tail[160];
    std::snprintf(tail, sizeof tail, ": %s at offset %llu: %s (errno %d)", what,
                  static_cast<unsigned long long>(offset), std::strerror(err), err);
    return std::string(path) + tail;
}
std::string errno_message(std::string_view path, const char* what, int err) {
    err = err < 0 ? -err : err;
    char tail[160];
    std::snprintf(tail, sizeof tail, ": %s: %s (errno %d)", what, std::strerror(err), err);
    return std::string(path) + tail;
}
std::string quoted_message(const char* what, std::string_view path, int err) {
    err = err < 0 ? -err : err;
    return std::string(what) + " '" + std::string(path) + "': " + std::strerror(err);
}

std::string shrank_message(std::string_view path, std::uint64_t offset) {
    return std::string(path) + ": end of file at offset " + std::to_string(offset) +
           ", before the size it had when the copy started (the file shrank while being copied)";
}

std::string dirname_of(const std::string& path) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}
std::string basename_of(std::string path) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}
std::string join(const std::string& dir, std::string_view name) {
    std::string p = dir;
    if (!p.empty() && p.back() != '/') p += '/';
    p += name;
    return p;
}

std::string temp_name_for(const std::string& final_path) {
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    unsigned char random[12];
    std::size_t got = 0;
    while (got < sizeof random) {
        const ssize_t n = ::getrandom(random + got, sizeof random - got, 0);
        if (n > 0) got += static_cast<std::size_t>(n);
        else if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "getrandom");
    }
    std::string suffix(sizeof random, 'x');
    for (std::size_t i = 0; i < sizeof random; ++i) suffix[i] = alphabet[random[i] % 62];
    return join(dirname_of(final_path), "." + basename_of(final_path) + ".uringkit-" + suffix);
}

std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace detail

namespace {

using namespace detail;
using Clock = std::chrono::steady_clock;

// ---- the job -------------------------------------------------------------------

// Registers both buffers (0: large files, 1: small files).  Without
// CAP_IPC_LOCK pinned pages count against RLIMIT_MEMLOCK (8 MiB by default
// on Debian), which the large one may exceed: then only the small one is
// registered, index 0 left empty, and large files use plain reads and writes.
void register_buffers(Ctx& c) {
    const iovec small{c.small.get(), std::size_t{c.o.inflight} * kSmallBlock};
    const iovec both[2] = {{c.big.get(), c.big_size}, small};
    const iovec only_small[2] = {{nullptr, 0}, small};
    for (const auto* iov : {both, only_small}) {
        ++c.syscalls();
        try {
            c.ring->register_buffers(std::span<const iovec>(iov, 2));
            c.fixed_big = iov[0].iov_base != nullptr;
            c.fixed_small = true;
            return;
        } catch (const RingError&) {
        }
    }
}

// Opens, creates and buffered writes to ext4 block, so the kernel runs them
// on io-wq worker threads ("bounded" work), by default up to 4 per CPU.
// Creates in one directory serialize on its lock, and the extra workers spin
// on it: with 64 files in flight, a third of the CPU went to
// rwsem_spin_on_owner.  One worker per CPU made cp -r of 10,000 files in one
// directory ~15% faster warm and ~10% cold on a 2-CPU machine; 4 per CPU was
// no better than the default.  Only -r creates many files, so only -r sets
// it.  Kernels before 5.15 lack the call: no limit.
//
// The limit belongs to the calling thread's io-wq, which all of that
// thread's rings share, not to this ring: the destructor puts back what the
// thread had, so a library caller's own rings are not capped afterwards.
class KernelWorkerLimit {
public:
    explicit KernelWorkerLimit(Ctx& c) {
        unsigned n = c.o.kernel_workers;
        if (n == 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            n = ::sched_getaffinity(0, sizeof set, &set) == 0 ? static_cast<unsigned>(CPU_COUNT(&set)) : 0;
        }
        if (n == 0) return;
        ++c.syscalls();
        try {
            previous_ = c.ring->set_iowq_max_workers(n, 0);
            ring_ = &*c.ring;
            ++c.syscalls();  // the restore
        } catch (const RingError&) {
            if (c.o.kernel_workers) c.note("--kernel-workers: this kernel cannot limit io_uring's workers (needs 5.15)");
        }
    }
    ~KernelWorkerLimit() {
        if (!ring_) return;
        try {
            ring_->set_iowq_max_workers(previous_[0], previous_[1]);  // 0 (none had been set): left as it is
        } catch (const RingError&) {
        }
    }
    KernelWorkerLimit(const KernelWorkerLimit&) = delete;
    KernelWorkerLimit& operator=(const KernelWorkerLimit&) = delete;

private:
    Ring* ring_ = nullptr;
    std::array<unsigned, 2> previous_{};
};

unsigned pow2_at_least(unsigned v) {
    unsigned p = 1;
    while (p < v) p <<= 1;
    return p;
}

// realpath, or empty when it cannot be resolved.
std::string resolved(const std::string& p) {
    char buf[PATH_MAX];
    return ::realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

std::optional<Failure> copy_one(Ctx& c, const std::string& src, const std::string& target) {
    struct stat st {};
    ++c.syscalls();
    const int r = c.o.recursive || c.o.no_dereference ? ::lstat(src.c_str(), &st) : ::stat(src.c_str(), &st);
    if (r != 0) return Failure{CopyStatus::bad_input, quoted_message("cannot stat", src, errno)};
    if (S_ISDIR(st.st_mode)) {
        if (!c.o.recursive) return Failure{CopyStatus::bad_input, "-r not specified; omitting directory '" + src + "'"};
        const std::string rs = resolved(src), rt = resolved(dirname_of(target));
        if (!rs.empty() && !rt.empty() && (rt == rs || rt.rfind(rs + "/", 0) == 0 || rs == "/"))
            return Failure{CopyStatus::bad_input, "cannot copy a directory, '" + src + "', into itself, '" + target + "'"};
        copy_tree(c, src, target);
        return std::nullopt;
    }
    struct stat tst {};
    if (::stat(target.c_str(), &tst) == 0 && tst.st_dev == st.st_dev && tst.st_ino == st.st_ino)
        return Failure{CopyStatus::bad_input, "'" + src + "' and '" + target + "' are the same file"};
    if (S_ISLNK(st.st_mode)) return copy_symlink(c, src.c_str(), target, false);
    // -r makes a FIFO or a device again; without it its contents are read.
    if (c.o.recursive && !S_ISREG(st.st_mode)) return copy_special(c, target, st);
    std::optional<Failure> link_failure;
    if (link_to_first_copy(c, st, target, false, link_failure)) return link_failure;
    const std::uint64_t skipped = c.result.skipped;
    auto failure = copy_file(c, src.c_str(), target, false, std::nullopt);
    if (!failure && c.result.skipped == skipped) remember_first_copy(c, st, target);
    return failure;
}

}  // namespace

CopyResult copy(std::span<const std::string> sources, const std::string& dest, const CopyOptions& o,
                const CopySink& sink) {
    CopyResult result;
    auto usage = [&](std::string m) {
        result.status = CopyStatus::usage;
        result.message = std::move(m);
        return result;
    };
    if (sources.empty()) return usage("nothing to copy: name at least one source and a destination");
    for (const std::size_t bs : {o.block_size, o.direct_read_block_size})
        if (bs < kDirectAlign || bs % kDirectAlign || bs > (1u << 30))
            return usage("block size must be a multiple of 4 KiB, at most 1 GiB");
    for (const unsigned qd : {o.qd, o.direct_read_qd})
        if (qd == 0 || qd > 1024) return usage("queue depth must be 1..1024");
    if (o.inflight == 0 || o.inflight > 1024) return usage("files in flight must be 1..1024");
    if (o.kernel_workers > 1024) return usage("kernel workers must be 0 (one per CPU) to 1024");

    Ctx c(o, sink, result);
    c.small_slots = o.inflight;
    c.root = ::geteuid() == 0;
    c.umask = ::umask(0);
    ::umask(c.umask);
    c.syscalls() += 3;

    struct stat dst_st {};
    const bool dest_is_dir = ::stat(dest.c_str(), &dst_st) == 0 && S_ISDIR(dst_st.st_mode);
    ++c.syscalls();
    if (sources.size() > 1 && !dest_is_dir)
        return usage("target '" + dest + "' is not a directory (several sources need an existing directory)");

    const auto t0 = Clock::now();
    c.big_size = std::max(std::size_t{o.qd} * o.block_size, std::size_t{o.direct_read_qd} * o.direct_read_block_size);
    c.big = aligned_buffer(c.big_size);
    if (!o.force_fallback) {
        std::string why;
        c.ring = make_ring(pow2_at_least(std::max(std::max(o.qd, o.direct_read_qd) * 2, o.inflight * 10)), why);
        if (!c.ring) c.note("io_uring unavailable (" + why + "); copying with read/write instead");
    }
    if (c.ring) {
        ++c.syscalls();
        try {
            c.ring->register_files_sparse(2 * o.inflight);
        } catch (const RingError& e) {  // no sparse file table (5.19): EINVAL on older kernels
            c.note(std::string("io_uring unusable (") + e.what() + "); copying with read/write instead");
            c.ring.reset();
        }
    }
    if (c.ring) {
        c.small = aligned_buffer(std::size_t{o.inflight} * kSmallBlock);
        register_buffers(c);
    }
    result.used_ring = c.ring.has_value();
    std::optional<KernelWorkerLimit> worker_limit;
    if (c.ring && o.recursive) worker_limit.emplace(c);

    for (const std::string& src : sources) {
        if (c.stop_requested()) c.interrupted = true;
        if (c.interrupted || c.ring_unusable()) break;
        const std::string target = dest_is_dir ? join(dest, basename_of(src)) : dest;
        if (auto f = copy_one(c, src, target)) c.report(*f);
    }
    if (c.interrupted) result.status = CopyStatus::interrupted;
    result.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (c.ring) result.syscalls += c.ring->enter_calls();
    return result;
}

}  // namespace uringkit::fs
