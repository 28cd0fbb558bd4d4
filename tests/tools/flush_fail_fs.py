#!/usr/bin/python3
# flush_fail_fs.py MOUNTPOINT ERRNO
#
# A FUSE file system in memory whose every flush fails with ERRNO: what NFS,
# CIFS or FUSE file systems report at close(2) when a write-back failed or
# the quota is exceeded (ENOSPC, EDQUOT, EIO).  Writes themselves succeed.
# Runs in the foreground until unmounted.  Needs Debian's python3-fusepy
# (libfuse2) and /dev/fuse.
import errno
import stat
import sys
import time

from fusepy import FUSE, FuseOSError, Operations


class FlushFails(Operations):
    def __init__(self, err):
        self.err = err
        now = time.time()
        self.nodes = {"/": dict(st_mode=stat.S_IFDIR | 0o755, st_nlink=2, st_size=0,
                                st_ctime=now, st_mtime=now, st_atime=now, st_uid=0, st_gid=0)}
        self.data = {}

    def _node(self, path):
        if path not in self.nodes:
            raise FuseOSError(errno.ENOENT)
        return self.nodes[path]

    def getattr(self, path, fh=None):
        return dict(self._node(path))

    def readdir(self, path, fh):
        prefix = path.rstrip("/") + "/"
        names = [p[len(prefix):] for p in self.nodes if p != path and p.startswith(prefix)
                 and "/" not in p[len(prefix):]]
        return [".", ".."] + names

    def _new(self, path, mode):
        parent = path.rsplit("/", 1)[0] or "/"
        if not stat.S_ISDIR(self._node(parent)["st_mode"]):
            raise FuseOSError(errno.ENOTDIR)
        if path in self.nodes:
            raise FuseOSError(errno.EEXIST)
        now = time.time()
        self.nodes[path] = dict(st_mode=mode, st_nlink=1, st_size=0, st_ctime=now, st_mtime=now,
                                st_atime=now, st_uid=0, st_gid=0)

    def mkdir(self, path, mode):
        self._new(path, stat.S_IFDIR | mode)

    def rmdir(self, path):
        self._node(path)
        del self.nodes[path]

    def create(self, path, mode, fi=None):
        self._new(path, stat.S_IFREG | mode)
        self.data[path] = bytearray()
        return 0

    def open(self, path, flags):
        self._node(path)
        return 0

    def read(self, path, size, offset, fh):
        return bytes(self.data.get(path, b"")[offset:offset + size])

    def write(self, path, buf, offset, fh):
        d = self.data.setdefault(path, bytearray())
        if len(d) < offset:
            d.extend(b"\0" * (offset - len(d)))
        d[offset:offset + len(buf)] = buf
        self.nodes[path]["st_size"] = len(d)
        return len(buf)

    def truncate(self, path, length, fh=None):
        d = self.data.setdefault(path, bytearray())
        del d[length:]
        d.extend(b"\0" * (length - len(d)))
        self._node(path)["st_size"] = length

    def flush(self, path, fh):
        raise FuseOSError(self.err)

    def release(self, path, fh):
        return 0

    def fsync(self, path, datasync, fh):
        return 0

    def unlink(self, path):
        self._node(path)
        del self.nodes[path]
        self.data.pop(path, None)

    def rename(self, old, new):
        self.nodes[new] = self._node(old)
        del self.nodes[old]
        if old in self.data:
            self.data[new] = self.data.pop(old)

    def chmod(self, path, mode):
        n = self._node(path)
        n["st_mode"] = (n["st_mode"] & ~0o7777) | (mode & 0o7777)

    def chown(self, path, uid, gid):
        n = self._node(path)
        if uid != -1 and uid != 0xFFFFFFFF:
            n["st_uid"] = uid
        if gid != -1 and gid != 0xFFFFFFFF:
            n["st_gid"] = gid

    def utimens(self, path, times=None):
        n = self._node(path)
        n["st_atime"], n["st_mtime"] = times if times else (time.time(), time.time())

    def statfs(self, path):
        return dict(f_bsize=4096, f_frsize=4096, f_blocks=1 << 20, f_bfree=1 << 19, f_bavail=1 << 19,
                    f_files=1 << 16, f_ffree=1 << 15, f_favail=1 << 15, f_namemax=255)


if __name__ == "__main__":
    FUSE(FlushFails(int(sys.argv[2])), sys.argv[1], foreground=True, nothreads=True)
