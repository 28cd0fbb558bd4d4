// A small real file system for a test: an image file made with mkfs.TYPE,
// mounted on a loop device (mount -o loop, whose device is freed at umount),
// or a tmpfs.  Unmounted and removed by the destructor on every path, a
// failed assertion included.  When it cannot be made (not root, no loop
// devices, no mkfs.TYPE, a kernel without the file system) `why` says so and
// the test skips with it.
#pragma once

#include "files_test_support.hpp"

#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/statfs.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace files_test {

class LoopFs {
public:
    // type: "xfs", "btrfs", "ext4" (an image), or "tmpfs".  mkfs_args are
    // passed to mkfs.TYPE before the image (e.g. {"-m", "reflink=0"}).
    LoopFs(const std::string& type, std::uint64_t size_mib,
           std::vector<std::string> mkfs_args = {}) {
        if (::geteuid() != 0) {
            why = "needs root to mount a " + type + " file system";
            return;
        }
        char tmpl[] = "/tmp/uringkit-fs-XXXXXX";
        if (!::mkdtemp(tmpl)) {
            why = "mkdtemp failed";
            return;
        }
        base = tmpl;
        mnt = base + "/mnt";
        stdfs::create_directory(mnt);
        if (type == "tmpfs") {
            const Child m = run({"mount", "-t", "tmpfs", "-o",
                                 "size=" + std::to_string(size_mib) + "m", "tmpfs", mnt});
            if (m.status != 0)
                why = "mount -t tmpfs failed: " + m.err;
            else
                mounted = true;
            return;
        }
        if (!stdfs::exists("/dev/loop-control")) {
            why = "no loop devices here (/dev/loop-control missing)";
            return;
        }
        const std::string mkfs = "mkfs." + type;
        if (!have_program(mkfs.c_str())) {
            why = mkfs + " not installed (Debian: " +
                  (type == "xfs"     ? "xfsprogs"
                   : type == "btrfs" ? "btrfs-progs"
                                     : "e2fsprogs") +
                  ")";
            return;
        }
        image = base + "/image";
        std::ofstream(image).close();
        stdfs::resize_file(image, size_mib << 20);  // sparse: costs what the file system writes
        std::vector<std::string> cmd{mkfs, "-q"};
        if (type == "xfs" || type == "btrfs") cmd.push_back("-f");
        if (type == "ext4") cmd.push_back("-F");
        cmd.insert(cmd.end(), mkfs_args.begin(), mkfs_args.end());
        cmd.push_back(image);
        const Child f = run(cmd);
        if (f.status != 0) {
            why = mkfs + " failed: " + f.out + f.err;
            return;
        }
        const Child m = run({"mount", "-o", "loop", "-t", type, image, mnt});
        if (m.status != 0) {
            why = "mount -o loop -t " + type +
                  " failed (a kernel or container without it?): " + m.err;
            return;
        }
        mounted = true;
    }
    ~LoopFs() {
        if (mounted && run({"umount", mnt}).status != 0)
            run({"umount", "-l", mnt});  // -l: even if still busy
        std::error_code ec;
        if (!base.empty()) stdfs::remove_all(base, ec);
    }
    LoopFs(const LoopFs&) = delete;
    LoopFs& operator=(const LoopFs&) = delete;

    bool ok() const { return mounted; }
    std::string operator/(const std::string& name) const { return mnt + "/" + name; }

    // Blocks in use, after the file system wrote out what it held (so
    // delayed allocation has happened), in bytes.
    std::uint64_t used_bytes() const {
        const int fd = ::open(mnt.c_str(), O_RDONLY | O_DIRECTORY);
        ::syncfs(fd);
        struct statfs sf {};
        ::fstatfs(fd, &sf);
        ::close(fd);
        return (sf.f_blocks - sf.f_bfree) * static_cast<std::uint64_t>(sf.f_bsize);
    }

    std::string why;
    std::string base, mnt, image;
    bool mounted = false;
};

struct ExtentMap {
    std::uint64_t extents = 0, shared = 0;  // extents, and those flagged FIEMAP_EXTENT_SHARED
    std::uint64_t bytes = 0;                // bytes mapped (data, not holes)
};

// FS_IOC_FIEMAP of a whole file (synced first, so delayed allocations show).
inline ExtentMap extent_map(const std::string& path) {
    ExtentMap m;
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) return m;
    constexpr unsigned kMax = 512;
    auto buf = std::make_unique<char[]>(sizeof(fiemap) + kMax * sizeof(fiemap_extent));
    auto* fm = reinterpret_cast<fiemap*>(buf.get());
    std::uint64_t start = 0;
    for (;;) {
        std::memset(fm, 0, sizeof(fiemap));
        fm->fm_start = start;
        fm->fm_length = ~0ULL - start;
        fm->fm_flags = FIEMAP_FLAG_SYNC;
        fm->fm_extent_count = kMax;
        if (::ioctl(fd, FS_IOC_FIEMAP, fm) != 0 || fm->fm_mapped_extents == 0) break;
        bool last = false;
        for (unsigned i = 0; i < fm->fm_mapped_extents; ++i) {
            const fiemap_extent& e = fm->fm_extents[i];
            ++m.extents;
            if (e.fe_flags & FIEMAP_EXTENT_SHARED) ++m.shared;
            m.bytes += e.fe_length;
            start = e.fe_logical + e.fe_length;
            if (e.fe_flags & FIEMAP_EXTENT_LAST) last = true;
        }
        if (last || fm->fm_mapped_extents < kMax) break;
    }
    ::close(fd);
    return m;
}

}  // namespace files_test
