#include "net/uring_files.hpp"

#include "uringkit/ops/ops.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
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

RingFile::~RingFile() {
    if (pipe_r >= 0) ::close(pipe_r);
    if (pipe_w >= 0) ::close(pipe_w);
}

// OPENAT2 runs inline for a path in the dentry cache, else on an io-wq
// worker; the READ lands in the output's end, where the body goes.
bool RingFiles::start(RingFile& f, const Session& s, std::string& out, int sock, const Tags& tags) {
    const Session::FileWant w = s.file_want();
    if (w.kind == Session::FileWant::Kind::Open) {
        sqes_.prepare(op::OpenAt2(root_fd_, w.name, &how_)).user_data(tags.open);
    } else if (w.kind == Session::FileWant::Kind::Read) {
        f.read_at = out.size();
        out.resize(f.read_at + w.length);
        sqes_
            .prepare(op::Read(Fd{w.fd}, out.data() + f.read_at,
                              static_cast<std::uint32_t>(w.length), w.offset))
            .user_data(tags.read);
        f.read_inflight = true;
    } else if (w.kind == Session::FileWant::Kind::Send) {
        if (f.in_pipe != 0) {  // what a short send left in the pipe goes first
            splice_out(f, sock, tags.splice);
            return true;
        }
        if (f.pipe_r < 0 && !make_pipe(f)) return false;
        // file -> pipe, then pipe -> socket, linked: one submission moves a
        // pipe's worth.  A short first splice (the file ended, or the pipe
        // took less) breaks the chain, and the second completes -ECANCELED
        // (on_splice).  Both SQEs are reserved first: a chain must not be
        // split across two submissions.
        const auto len = static_cast<std::uint32_t>(std::min<std::size_t>(w.length, f.pipe_size));
        f.in_result = 0;
        sqes_.reserve(2);  // a failure is recorded; the engine ends after the batch
        sqes_
            .prepare(op::Splice(w.fd, static_cast<std::int64_t>(w.offset), Fd{f.pipe_w}, -1, len,
                                SPLICE_F_MOVE))
            .link()
            .user_data(tags.splice);
        sqes_
            .prepare(op::Splice(f.pipe_r, -1, Fd{sock}, -1, len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK))
            .user_data(tags.splice);
        f.stages[0] = RingFile::Stage::In;
        f.stages[1] = RingFile::Stage::Out;
        f.splicing = 2;
        return true;
    } else {
        return true;
    }
    f.inflight = true;
    return true;
}

// 256 KiB, the most one READ takes (file_response.cpp): a 1 MiB body moves
// in 4 chains instead of the default pipe's 16.  A user over its pipe
// allowance (fs.pipe-user-pages-soft) keeps what the kernel gave.
bool RingFiles::make_pipe(RingFile& f) {
    int p[2];
    stats_.syscalls.add();
    if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) return false;  // EMFILE, ENFILE
    f.pipe_r = p[0];
    f.pipe_w = p[1];
    stats_.syscalls.add();
    int size = ::fcntl(p[1], F_SETPIPE_SZ, 256 * 1024);
    if (size <= 0) {
        stats_.syscalls.add();
        size = ::fcntl(p[1], F_GETPIPE_SZ);
    }
    f.pipe_size = static_cast<std::uint32_t>(size > 0 ? size : 4096);
    return true;
}

// SPLICE_F_NONBLOCK makes the pipe side non-blocking; the socket is
// blocking, so on a full socket the io-wq worker sleeps until the client
// reads, or until cancel() interrupts it (a kernel that answers -EAGAIN
// instead gets a POLLOUT wait, on_splice()).
void RingFiles::splice_out(RingFile& f, int sock, std::uint64_t ud) {
    sqes_
        .prepare(
            op::Splice(f.pipe_r, -1, Fd{sock}, -1, f.in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK))
        .user_data(ud);
    f.stages[0] = RingFile::Stage::Out;
    f.splicing = 1;
    f.in_result = 0;
}

bool RingFiles::on_splice(RingFile& f, int res, int sock, std::uint64_t ud, bool go_on, long& got) {
    const RingFile::Stage stage = f.stages[0];
    // The last cancel may not have reached what runs now: a chain's second
    // splice is issued only when the first completes.
    f.cancel_sent = false;
    f.stages[0] = f.stages[1];
    --f.splicing;
    got = res;
    switch (stage) {
        case RingFile::Stage::In:
            f.in_result = res;
            if (res > 0) f.in_pipe = static_cast<std::uint32_t>(res);
            return false;  // the linked Out's CQE follows
        case RingFile::Stage::Poll:
            if (res < 0) return true;  // cancelled (aborting), or the poll failed
            if (!go_on) return true;
            splice_out(f, sock, ud);  // room now, or an error the splice will name
            return false;
        case RingFile::Stage::Out:
            break;
    }
    if (res == -ECANCELED) {
        if (f.in_result > 0) {
            // The chain broke after a short splice in: send what it brought.
            if (!go_on) return true;
            splice_out(f, sock, ud);
            return false;
        }
        got = f.in_result;  // 0: the file ended (truncated); < 0: its error
        return true;
    }
    if (res == -EAGAIN) {
        if (!go_on) return true;
        sqes_.prepare(op::PollAdd(Fd{sock}, POLLOUT)).user_data(ud);
        f.stages[0] = RingFile::Stage::Poll;
        f.splicing = 1;
        return false;
    }
    if (res > 0) {
        f.in_pipe -= static_cast<std::uint32_t>(res);
        stats_.bytes_out.add(static_cast<std::uint64_t>(res));
        stats_.bytes_spliced.add(static_cast<std::uint64_t>(res));
        return true;
    }
    if (res == 0) got = -EPIPE;  // a pipe with bytes in it moved none: the socket is gone
    return true;
}

// Whatever is in flight: a POLLOUT wait, or a splice, which on a full
// socket holds its io-wq worker asleep (SPLICE_F_NONBLOCK covers the pipe,
// not the blocking socket); cancelling running work interrupts the worker,
// so a client that neither reads nor leaves does not keep it.
void RingFiles::cancel(RingFile& f, std::uint64_t ud) {
    if (f.splicing == 0 || f.cancel_sent) return;
    sqes_.prepare(op::AsyncCancel(ud).all()).user_data(0);
    f.cancel_sent = true;
}

void RingFiles::recycle(RingFile& f) {
    if (f.in_pipe != 0 && f.pipe_r >= 0) {
        // close(2), not a CLOSE on the ring: pipe2(2) made it, and a number
        // a system call opened but the ring closed looks still open to
        // ThreadSanitizer, which then reports its reuse by another thread
        // as a race.  Nothing names the pipe now (the connection is idle).
        ::close(f.pipe_r);
        ::close(f.pipe_w);
        stats_.syscalls.add(2);
        f.pipe_r = f.pipe_w = -1;
    }
    f.in_pipe = 0;
    f.in_result = 0;
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
