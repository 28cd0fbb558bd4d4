#include "net/uring_files.hpp"

#include "uringkit/ops/ops.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace uringkit::net::detail {

RingFiles::RingFiles(SqeSupply& sqes, ServerStats& stats, const ServerConfig& cfg,
                     const Responder& r, std::uint64_t close_ud)
    : sqes_(sqes),
      stats_(stats),
      enabled_(r.engine_file_io()),
      statx_on_ring_(cfg.file_io == FileIo::RingStatx),
      root_fd_(enabled_ ? r.root()->fd : -1),
      close_ud_(close_ud),
      how_(enabled_ ? file_open_how(r.root()->resolve) : open_how{}) {}

// Counted until their CQEs, so the loop never ends with a close prepared
// but not submitted.
void RingFiles::close_done(std::vector<int>& fds) {
    for (const int fd : fds) close(fd);
    fds.clear();
}

void RingFiles::close(int fd) {
    sqes_.prepare(op::Close(Fd{fd})).user_data(close_ud_);
    ++closing_;
}

// OPENAT2 runs inline for a path in the dentry cache, else on an io-wq
// worker; the READ lands in the output's end, where the body goes.
void RingFiles::start(RingFile& f, const Session& s, std::string& out, std::uint64_t open_ud,
                      std::uint64_t read_ud) {
    const Session::FileWant w = s.file_want();
    if (w.kind == Session::FileWant::Kind::Open) {
        sqes_.prepare(op::OpenAt2(root_fd_, w.name, &how_)).user_data(open_ud);
    } else if (w.kind == Session::FileWant::Kind::Read) {
        f.read_at = out.size();
        out.resize(f.read_at + w.length);
        sqes_
            .prepare(op::Read(Fd{w.fd}, out.data() + f.read_at,
                              static_cast<std::uint32_t>(w.length), w.offset))
            .user_data(read_ud);
        f.read_inflight = true;
    } else {
        return;
    }
    f.inflight = true;
}

bool RingFiles::on_open(RingFile& f, int res, bool go_on, std::uint64_t statx_ud, OpenedFile& out) {
    out = OpenedFile{};
    if (res < 0) {
        out.error = -res;
    } else if (statx_on_ring_ && go_on) {
        f.statx_fd = res;
        sqes_.prepare(op::Statx(res, "", AT_EMPTY_PATH, kFileStatxMask, &f.stx))
            .user_data(statx_ud);
        return false;  // still in flight
    } else {
        // statx(2) on the descriptor: on the ring it would always go to a
        // worker thread (bench/results/serve_files.md).
        struct statx stx {};
        stats_.syscalls.add();
        if (::statx(res, "", AT_EMPTY_PATH, kFileStatxMask, &stx) == 0) {
            out = opened_file(res, stx);
        } else {
            out.error = errno;
            close(res);
        }
    }
    f.inflight = false;
    return true;
}

OpenedFile RingFiles::on_statx(RingFile& f, int res) {
    const int fd = std::exchange(f.statx_fd, -1);
    f.inflight = false;
    if (res >= 0) return opened_file(fd, f.stx);
    OpenedFile out;
    out.error = -res;
    close(fd);
    return out;
}

long RingFiles::on_read(RingFile& f, const Session& s, std::string& out, int res) {
    f.inflight = f.read_inflight = false;
    long got = res;
    if (got == -EAGAIN) {
        // The file was opened O_NONBLOCK (a FIFO must not block the open)
        // and its file system cannot wait for the page cache on the ring's
        // behalf: read it here, as --file-io calls does.
        const Session::FileWant w = s.file_want();
        got = ::pread(w.fd, out.data() + f.read_at, w.length, static_cast<off_t>(w.offset));
        stats_.syscalls.add();
        if (got < 0) got = -errno;
    }
    out.resize(f.read_at + static_cast<std::size_t>(got > 0 ? got : 0));
    return got;
}

}  // namespace uringkit::net::detail
