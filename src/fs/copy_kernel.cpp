// The paths that move no bytes through user memory: FICLONE, which makes the
// destination share the source's extents (XFS with reflink, btrfs, ...),
// and copy_file_range, which copies page cache to page cache within one file
// system, or on the server for NFS and SMB.  io_uring has neither as an
// opcode, so these are plain (blocking) system calls.
#include "copy_internal.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace uringkit::fs::detail {

int clone_file(Ctx& c, int src, int dst) {
    ++c.syscalls();
    return ::ioctl(dst, FICLONE, src) == 0 ? 0 : -errno;
}

std::optional<Failure> copy_in_kernel(Ctx& c, int src, int dst, std::string_view src_name,
                                      std::string_view dst_name, const std::vector<Extent>& extents,
                                      std::uint64_t& bytes, bool& refused) {
    refused = false;
    // One call per chunk, so progress is reported and a stop request is seen
    // between chunks: qd x block size (2 MiB by default), at least 1 MiB.  A
    // 1 GiB copy makes ~512 calls; the kernel splices in pages either way.
    const std::uint64_t chunk =
        std::max<std::uint64_t>(std::uint64_t{c.o.qd} * c.o.block_size, 1 << 20);
    if (!extents.empty() && extents.back().end > chunk) {
        // As coreutils does: a wide readahead window for a cold source.
        ++c.syscalls();
        ::posix_fadvise(src, 0, 0, POSIX_FADV_SEQUENTIAL);
    }
    for (const Extent& e : extents) {
        for (std::uint64_t pos = e.begin; pos < e.end;) {
            if (c.stop_requested()) return Failure{CopyStatus::interrupted, "interrupted"};
            // Explicit offsets on both sides: the holes between extents stay
            // holes (copy_file_range itself would write them as zeros on
            // file systems that splice), and the final ftruncate sets the size.
            loff_t in = static_cast<loff_t>(pos), out = static_cast<loff_t>(pos);
            ++c.syscalls();
            const ssize_t n =
                ::copy_file_range(src, &in, dst, &out, std::min(chunk, e.end - pos), 0);
            if (n < 0) {
                const int err = errno;
                if (err == EINTR || err == EAGAIN) continue;
                // Declined before anything was written: another path copies it.
                if (bytes == 0 && (err == EXDEV || err == EOPNOTSUPP || err == EINVAL ||
                                   err == ENOSYS || err == EBADF || err == ETXTBSY)) {
                    refused = true;
                    return std::nullopt;
                }
                // No room, a file size limit: the writing side's, named as a
                // write is on the other paths.  Anything else may be either side's.
                if (status_of_write(err) == CopyStatus::no_space)
                    return Failure{CopyStatus::no_space, io_message(dst_name, "write", pos, err)};
                return Failure{CopyStatus::failure,
                               io_message(dst_name, "copy_file_range", pos, err) + " (from " +
                                   std::string(src_name) + ")"};
            }
            if (n == 0) return Failure{CopyStatus::failure, shrank_message(src_name, pos)};
            pos += static_cast<std::uint64_t>(n);
            bytes += static_cast<std::uint64_t>(n);
            if (c.o.on_progress) c.o.on_progress(bytes);
        }
    }
    return std::nullopt;
}

}  // namespace uringkit::fs::detail
