#include "net/file_response.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <optional>
#include <utility>

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

void close_counted(int fd, ServerStats& stats) noexcept {
    ::close(fd);
    stats.syscalls.add();
}

}  // namespace

void FileBody::start(int fd, std::uint64_t offset, std::uint64_t length) noexcept {
    close();
    fd_ = fd;
    offset_ = offset;
    left_ = length_ = length;
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

std::size_t FileBody::next_read(std::size_t out_size, std::size_t stop) const noexcept {
    if (left_ == 0 || out_size >= stop) return 0;
    return static_cast<std::size_t>(std::min({left_, std::uint64_t{stop - out_size}, kMaxRead}));
}

std::size_t FileBody::next_send() const noexcept {
    constexpr std::uint64_t kMaxSend = 2 * 1024 * 1024;
    return static_cast<std::size_t>(std::min(left_, kMaxSend));
}

FileBody::Pump FileBody::consumed(long got) noexcept {
    if (got <= 0) {
        left_ = 0;
        return Pump::Ended;  // see pump(): truncated after its stat, or EIO
    }
    const auto n = std::min(static_cast<std::uint64_t>(got), left_);
    offset_ += n;
    left_ -= n;
    return left_ == 0 ? Pump::Done : Pump::More;
}

int FileBody::release() noexcept {
    left_ = 0;
    return std::exchange(fd_, -1);
}

FileAnswer::Step FileAnswer::answer(int status, std::string_view body, std::string& out) {
    status_ = answer_text(out, status, body, connection_, head_only_);
    return Step::Answered;
}

FileAnswer::Step FileAnswer::begin(const HttpRequest& req, std::string_view head,
                                   std::string_view connection, std::string& out) {
    connection_ = connection;
    head_only_ = req.method == Method::Head;
    index_ = false;
    if (req.method != Method::Get && req.method != Method::Head) {
        out += method_not_allowed_response(connection);
        status_ = 405;
        return Step::Answered;
    }
    std::optional<std::string> path = decode_target(req.target);
    if (!path) return answer(400, "bad request target\n", out);
    path_ = std::move(*path);
    head_.assign(head);
    target_at_ = static_cast<std::size_t>(req.target.data() - head.data());
    target_size_ = req.target.size();
    return Step::Open;
}

FileAnswer::Step FileAnswer::opened(const StaticRoot& root, OpenedFile& f, std::string& out,
                                    FileBody& body) {
    if (f.fd < 0) {
        const int status = open_error_status(f.error);
        return answer(status, status == 403 ? "forbidden\n" : "not found\n", out);
    }
    if (f.kind == FileKind::Directory) {
        if (index_) return answer(404, "not found\n", out);  // index.html is a directory
        if (!path_.empty() && path_.back() != '/') {
            // The slash form, so the page's relative links resolve inside it.
            const std::string_view target =
                std::string_view(head_).substr(target_at_, target_size_);
            const auto q = target.find('?');
            std::string location(target.substr(0, q));
            location += '/';
            if (q != std::string_view::npos) location += target.substr(q);
            out += redirect_response(location, connection_, head_only_);
            status_ = 301;
            return Step::Answered;
        }
        path_ += "index.html";
        index_ = true;
        return Step::Open;
    }
    // A FIFO, a device: opened without blocking, never read.
    if (f.kind != FileKind::Regular) return answer(403, "forbidden\n", out);
    const FilePlan plan =
        plan_file_response(head_only_ ? Method::Head : Method::Get, f.meta,
                           file_request_headers(head_), root.mime.lookup(path_), connection_);
    out += plan.head;
    status_ = plan.status;
    if (plan.length > 0) body.start(std::exchange(f.fd, -1), plan.offset, plan.length);
    return Step::Answered;
}

int answer_file(const StaticRoot& root, const HttpRequest& req, std::string_view head,
                std::string_view connection, std::string& out, FileBody& body, ServerStats& stats,
                FileAnswer& answer) {
    FileAnswer::Step step = answer.begin(req, head, connection, out);
    while (step == FileAnswer::Step::Open) {
        OpenedFile f = open_beneath(root.fd, answer.open_name(), root.resolve);
        stats.syscalls.add(f.fd >= 0 ? 2 : 1);
        step = answer.opened(root, f, out, body);
        if (f.fd >= 0) close_counted(f.fd, stats);
    }
    return answer.status();
}

}  // namespace uringkit::net
