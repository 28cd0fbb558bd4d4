#!/usr/bin/python3
# held_read_fs.py MOUNTPOINT SIZE READING RELEASE
#
# A read-only FUSE file system holding one file, /src, of SIZE bytes (byte i
# is i * 131 + 7 mod 256).  Its first read is held: the file READING is made
# (on another file system) and the read answers only once RELEASE exists,
# so a test can have the kernel hold a read for as long as it wants, as a
# slow network file system would.  Runs in the foreground until unmounted.
# Needs Debian's python3-fusepy (libfuse2) and /dev/fuse.
import errno
import os
import stat
import sys
import time

from fusepy import FUSE, FuseOSError, Operations


class HeldRead(Operations):
    def __init__(self, size, reading, release):
        self.data = bytes((i * 131 + 7) & 0xFF for i in range(size))
        self.reading, self.release = reading, release
        now = time.time()
        common = dict(st_ctime=now, st_mtime=now, st_atime=now, st_uid=0, st_gid=0)
        self.nodes = {"/": dict(st_mode=stat.S_IFDIR | 0o755, st_nlink=2, st_size=0, **common),
                      "/src": dict(st_mode=stat.S_IFREG | 0o644, st_nlink=1, st_size=size,
                                   st_blocks=(size + 511) // 512, **common)}

    def getattr(self, path, fh=None):
        if path not in self.nodes:
            raise FuseOSError(errno.ENOENT)
        return dict(self.nodes[path])

    def readdir(self, path, fh):
        return [".", "..", "src"] if path == "/" else []

    def open(self, path, flags):
        if path != "/src":
            raise FuseOSError(errno.ENOENT)
        if flags & (os.O_WRONLY | os.O_RDWR):
            raise FuseOSError(errno.EROFS)
        return 0

    def read(self, path, size, offset, fh):
        if not os.path.exists(self.reading):
            with open(self.reading, "w"):
                pass
        while not os.path.exists(self.release):
            time.sleep(0.01)
        return self.data[offset:offset + size]

    def statfs(self, path):
        return dict(f_bsize=4096, f_frsize=4096, f_blocks=1 << 20, f_bfree=0, f_bavail=0,
                    f_files=2, f_ffree=0, f_favail=0, f_namemax=255)


if __name__ == "__main__":
    FUSE(HeldRead(int(sys.argv[2]), sys.argv[3], sys.argv[4]), sys.argv[1], foreground=True, nothreads=True,
         ro=True)
