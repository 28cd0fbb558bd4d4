#include "net/file_response.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <optional>

namespace uringkit::net {
namespace {

// One pread at most this long, so a connection with a large cap still
// interleaves with the others on the thread.
constexpr std::uint64_t kMaxRead = 256 * 1024;

int answer_text(std::string& out, int status, std::string_view body, std::string_view connection,
                bool head_only) {
    append_response(out, status, "text/plain", body, connection, head_only);
    return status;
}

int answer_open_error(std::string& out, int err, std::string_view connection, bool head_only) {
    const int status = open_error_status(err);
    return answer_text(out, status, status == 403 ? "forbidden\n" : "not found\n", connection,
                       head_only);
}

void close_counted(int fd, ServerStats& stats) noexcept {
    ::close(fd);
    stats.syscalls.add();
}

}  // namespace

void FileBody::start(int fd, std::uint64_t offset, std::uint64_t length) noexcept {
    close();
    fd_ = fd;
    offset_ = offset;
    left_ = length;
}

void FileBody::close() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    left_ = 0;
}

FileBody::Pump FileBody::pump(std::string& out, std::size_t stop, ServerStats& stats) {
    while (left_ > 0) {
        if (out.size() >= stop) return Pump::More;
        const std::uint64_t room = stop - out.size();
        const auto want = static_cast<std::size_t>(std::min({left_, room, kMaxRead}));
        const std::size_t at = out.size();
        out.resize(at + want);
        ssize_t n;
        do {
            n = ::pread(fd_, out.data() + at, want, static_cast<off_t>(offset_));
            stats.syscalls.add();
        } while (n < 0 && errno == EINTR);
        const std::size_t got = n > 0 ? static_cast<std::size_t>(n) : 0;
        out.resize(at + got);
        if (got == 0) {
            // EOF before the range's end (the file was truncated after its
            // stat) or EIO: the Content-Length already sent cannot be met,
            // so the connection ends after the bytes the file still had.
            close();
            stats.syscalls.add();
            return Pump::Ended;
        }
        offset_ += got;
        left_ -= got;
    }
    close();
    stats.syscalls.add();
    return Pump::Done;
}

int answer_file(const StaticRoot& root, const HttpRequest& req, std::string_view head,
                std::string_view connection, std::string& out, FileBody& body, ServerStats& stats) {
    if (req.method != Method::Get && req.method != Method::Head) {
        out += method_not_allowed_response(connection);
        return 405;
    }
    const bool head_only = req.method == Method::Head;
    std::optional<std::string> path = decode_target(req.target);
    if (!path) return answer_text(out, 400, "bad request target\n", connection, head_only);

    OpenedFile f = open_beneath(root.fd, *path, root.resolve);
    stats.syscalls.add(f.fd >= 0 ? 2 : 1);
    if (f.fd < 0) return answer_open_error(out, f.error, connection, head_only);
    if (f.kind == FileKind::Directory) {
        close_counted(f.fd, stats);
        if (!path->empty() && path->back() != '/') {
            // The slash form, so the page's relative links resolve inside it.
            const std::string_view target = req.target;
            const auto q = target.find('?');
            std::string location(target.substr(0, q));
            location += '/';
            if (q != std::string_view::npos) location += target.substr(q);
            out += redirect_response(location, connection, head_only);
            return 301;
        }
        *path += "index.html";
        f = open_beneath(root.fd, *path, root.resolve);
        stats.syscalls.add(f.fd >= 0 ? 2 : 1);
        if (f.fd < 0) return answer_open_error(out, f.error, connection, head_only);
        if (f.kind == FileKind::Directory) {
            close_counted(f.fd, stats);
            return answer_text(out, 404, "not found\n", connection, head_only);
        }
    }
    if (f.kind != FileKind::Regular) {
        // A FIFO, a device: opened without blocking, never read.
        close_counted(f.fd, stats);
        return answer_text(out, 403, "forbidden\n", connection, head_only);
    }
    const FilePlan plan = plan_file_response(req.method, f.meta, file_request_headers(head),
                                             root.mime.lookup(*path), connection);
    out += plan.head;
    if (plan.length > 0)
        body.start(f.fd, plan.offset, plan.length);
    else
        close_counted(f.fd, stats);
    return plan.status;
}

}  // namespace uringkit::net
