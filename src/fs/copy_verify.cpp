// --verify: once a file is copied, the source and the copy are read again
// and compared 1 MiB at a time by XXH3-128 (libxxhash, as `xxhsum -H2`).
// A chunk whose hashes differ names the range, and the first differing
// byte in it is found by comparing the two buffers, which are both at hand.
//
// The copy is read with O_DIRECT where its file system allows it: a direct
// read writes back the range's dirty pages and then reads the device, so
// what is compared is what the file system stored, not the page cache the
// copy just filled (which would match whatever went wrong below it).  Where
// O_DIRECT is refused the copy is read through the cache, and a note says
// so once.  The source is read through the cache (its pages were read a
// moment ago, so this costs memory bandwidth, not the device).
//
// Both files are read with one blocking read each per chunk
// (read_full, shared with readfiles' blocking engine); the buffers are
// allocated once per copy() and reused, so verifying allocates nothing per
// chunk.  The cost is in CopyResult::verify_bytes and verify_seconds.
#include "copy_internal.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace uringkit::fs::detail {
namespace {

constexpr std::size_t kVerifyChunk = std::size_t{1} << 20;

std::string hex(const XXH128_hash_t& h) {
    XXH128_canonical_t canon;
    XXH128_canonicalFromHash(&canon, h);  // big-endian, as xxhsum -H2 prints it
    char out[33];
    for (int i = 0; i < 16; ++i) std::snprintf(out + 2 * i, 3, "%02x", canon.digest[i]);
    return std::string(out, 32);
}

// "DST: verify: bytes at offsets 1048576-2097151 differ from 'SRC' (first
// at offset 1500000; XXH3-128 of the source's ..., of the copy's ...); the
// copy is left as it is".  Offsets count from 0, as in the I/O errors.
std::string mismatch_message(const std::string& dst, const char* src, std::uint64_t off,
                             const char* a, std::size_t na, const char* b, std::size_t nb) {
    const std::size_t common = std::min(na, nb);
    const auto diff = std::mismatch(a, a + common, b);
    const std::uint64_t first = off + static_cast<std::uint64_t>(diff.first - a);
    const std::uint64_t last = off + std::max(na, nb) - 1;
    std::string m = dst + ": verify: bytes at offsets " + std::to_string(off) + "-" +
                    std::to_string(last) + " differ from '" + src + "' (first at offset " +
                    std::to_string(first);
    // A read short of the chunk is that file's end.
    if (na != nb && na < kVerifyChunk)
        m += "; the source ends at offset " + std::to_string(off + na);
    if (na != nb && nb < kVerifyChunk) m += "; the copy ends at offset " + std::to_string(off + nb);
    m += "; XXH3-128 of the source's " + hex(XXH3_128bits(a, na)) + ", of the copy's " +
         hex(XXH3_128bits(b, nb)) + "); the copy is left as it is";
    return m;
}

}  // namespace

std::optional<Failure> verify_copy(Ctx& c, const char* src, const Where& at,
                                   const struct stat* written) {
    const std::string& dst = at.path;
    if (c.o.before_verify) c.o.before_verify(src, dst);
    const auto t0 = std::chrono::steady_clock::now();
    struct Seconds {  // counted on every way out
        Ctx& c;
        std::chrono::steady_clock::time_point t0;
        ~Seconds() {
            c.result.verify_seconds +=
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
    } seconds{c, t0};

    ++c.syscalls();
    util::UniqueFd s(::open(src, O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!s) return Failure{CopyStatus::failure, quoted_message("verify: cannot open", src, errno)};
    ++c.syscalls();
    bool direct = true;
    const int nofollow = at.in_tree ? O_NOFOLLOW : 0;
    util::UniqueFd d(
        ::openat(at.dir, at.name.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_DIRECT | nofollow));
    if (!d && errno == EINVAL) {  // no O_DIRECT on this file system: through the cache
        direct = false;
        ++c.syscalls();
        d.reset(::openat(at.dir, at.name.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | nofollow));
    }
    if (!d) return Failure{CopyStatus::failure, quoted_message("verify: cannot open", dst, errno)};
    if (written) {
        struct stat now {};
        ++c.syscalls();
        if (::fstat(d.get(), &now) != 0 || now.st_ino != written->st_ino ||
            now.st_dev != written->st_dev)
            return Failure{
                CopyStatus::failure,
                dst + ": verify: not the file this copy wrote (replaced since); not verified"};
    }
    ++c.syscalls();
    ::posix_fadvise(s.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
    if (!c.verify_buf) c.verify_buf = aligned_buffer(2 * kVerifyChunk);
    char* const a = c.verify_buf.get();
    char* const b = a + kVerifyChunk;

    for (std::uint64_t off = 0;; off += kVerifyChunk) {
        if (c.stop_requested()) return Failure{CopyStatus::interrupted, "interrupted"};
        const ssize_t na = read_full(s.get(), a, kVerifyChunk, off, false, c.syscalls());
        if (na < 0)
            return Failure{CopyStatus::failure,
                           io_message(src, "verify: read", off, static_cast<int>(na))};
        ssize_t nb = read_full(d.get(), b, kVerifyChunk, off, direct, c.syscalls());
        if (nb == -EINVAL && direct) {
            // Opened, but the file system refuses this direct read (an
            // alignment it wants larger than 4 KiB): read it through the cache.
            direct = false;
            ++c.syscalls();
            if (::fcntl(d.get(), F_SETFL, 0) != 0)
                return Failure{CopyStatus::failure, errno_message(dst, "verify: fcntl", errno)};
            nb = read_full(d.get(), b, kVerifyChunk, off, false, c.syscalls());
        }
        if (nb < 0)
            return Failure{CopyStatus::failure,
                           io_message(dst, "verify: read", off, static_cast<int>(nb))};
        c.result.verify_bytes += static_cast<std::uint64_t>(na + nb);
        const auto la = static_cast<std::size_t>(na), lb = static_cast<std::size_t>(nb);
        if (la != lb || !XXH128_isEqual(XXH3_128bits(a, la), XXH3_128bits(b, lb)))
            return Failure{CopyStatus::failure, mismatch_message(dst, src, off, a, la, b, lb)};
        if (la < kVerifyChunk) break;  // both ended here
    }
    if (!direct && !c.said_verify_cached) {
        c.said_verify_cached = true;
        c.note(
            "--verify: " + dst +
            " does not allow O_DIRECT; it and any like it were read back through the page cache");
    }
    ++c.result.verified_files;
    if (direct) ++c.result.verified_direct;
    return std::nullopt;
}

}  // namespace uringkit::fs::detail
