#include "net/session.hpp"

#include <algorithm>

namespace uringkit::net {
namespace {
constexpr int kConnNone = 0, kConnClose = 1, kConnKeep = 2;
constexpr std::string_view kConnValue[3] = {"", "close", "keep-alive"};

int connection_variant(const HttpRequest& req) noexcept {
    if (!req.keep_alive) return kConnClose;
    return req.minor_version == 0 ? kConnKeep : kConnNone;  // 1.0 keeps alive only when asked
}

bool is_path(std::string_view target, std::string_view path) noexcept {
    if (target.substr(0, path.size()) != path) return false;
    return target.size() == path.size() || target[path.size()] == '?';
}
}  // namespace

Responder::Responder(Mode mode, std::size_t body_size, HttpLimits limits, ServerStats& stats,
                     std::function<std::string()> stats_json)
    : mode_(mode), limits_(limits), stats_(&stats), stats_json_(std::move(stats_json)) {
    const std::string body = make_body(body_size);
    root_date_ = std::time(nullptr);
    for (int head = 0; head < 2; ++head)
        for (int c = 0; c < 3; ++c)
            append_response(root_[head][c], 200, "text/plain", body, kConnValue[c], head == 1,
                            root_date_);
    date_offset_ = root_[0][0].find("\r\nDate: ") + 8;
}

Responder::Responder(const StaticRoot& root, HttpLimits limits, ServerStats& stats,
                     FileServing serving)
    : mode_(Mode::Http), files_(&root), serving_(serving), limits_(limits), stats_(&stats) {}

void Responder::count_status(int status) const noexcept {
    (status >= 500   ? stats_->status_5xx
     : status >= 400 ? stats_->status_4xx
                     : stats_->status_2xx)
        .add();
}

void Responder::respond_file(const HttpRequest& req, std::string_view head, std::string& out,
                             FileBody& body, FileAnswer& answer) const {
    count_status(answer_file(*files_, req, head, kConnValue[connection_variant(req)], out, body,
                             *stats_, answer));
}

void Responder::refresh_date(std::time_t now) const noexcept {
    if (now == root_date_) return;
    root_date_ = now;
    char date[kHttpDateBytes];
    format_http_date(now, date);
    for (auto& by_conn : root_)
        for (std::string& r : by_conn)
            r.replace(date_offset_, kHttpDateBytes, date, kHttpDateBytes);
}

void Responder::respond(const HttpRequest& req, std::string& out) const {
    refresh_date(std::time(nullptr));  // a vDSO read
    const int conn = connection_variant(req);
    const bool head = req.method == Method::Head;
    if (is_path(req.target, "/")) {
        out += root_[head][conn];
        stats_->status_2xx.add();
    } else if (is_path(req.target, "/stats")) {
        append_response(out, 200, "application/json",
                        stats_json_ ? stats_json_() : std::string("{}"), kConnValue[conn], head);
        stats_->status_2xx.add();
    } else {
        append_response(out, 404, "text/plain", "not found\n", kConnValue[conn], head);
        stats_->status_4xx.add();
    }
}

void Responder::respond_error(ParseStatus status, std::string& out) const {
    int code = 400;
    std::string_view body = "malformed request\n";
    switch (status) {
        case ParseStatus::UriTooLong:
            code = 414;
            body = "request line over the limit\n";
            break;
        case ParseStatus::HeadTooLarge:
            code = 431;
            body = "request head over the limit\n";
            break;
        case ParseStatus::BodyTooLarge:
            code = 413;
            body = "request body over the limit\n";
            break;
        case ParseStatus::NotImplemented:
            code = 501;
            body = "method or transfer coding not implemented\n";
            break;
        case ParseStatus::VersionNotSupported:
            code = 505;
            body = "HTTP/1.x only\n";
            break;
        default:
            break;
    }
    append_response(out, code, "text/plain", body, "close", false);
    (code >= 500 ? stats_->status_5xx : stats_->status_4xx).add();
}

bool Session::feed(std::string_view data, std::string& out, std::size_t room) {
    if (close_) return false;
    held_ = false;
    // Where appending stops: `room` past the current end (kNoLimit: never).
    const std::size_t stop = room > kNoLimit - out.size() ? kNoLimit : out.size() + room;
    if (r_->mode() == Mode::Echo) return echo(data, out, stop);
    bool keep;
    if (pending_.empty()) {
        // The common case: whole requests in this chunk, parsed where they lie.
        keep = process(data, out, stop);
        if (keep && !data.empty()) pending_.assign(data);
    } else {
        pending_.append(data);
        std::string_view rest = pending_;
        keep = process(rest, out, stop);
        if (keep)
            pending_.erase(0, pending_.size() - rest.size());
        else
            pending_.clear();
    }
    // Waiting for a file operation, input beyond a buffer's worth stops
    // the reading, as a full output does.
    if (waiting_ != FileWant::Kind::None && pending_.size() > kKeptCapacity) held_ = true;
    return keep;
}

// Echo has no requests to stop between: it sends back up to the room, and
// the rest waits in pending_ behind what already waits there.
bool Session::echo(std::string_view data, std::string& out, std::size_t stop) {
    if (!data.empty()) r_->stats().requests.add();
    const std::size_t room = stop > out.size() ? stop - out.size() : 0;
    std::size_t n = 0;
    if (pending_.empty()) {
        n = std::min(room, data.size());
        out.append(data.substr(0, n));
        if (n < data.size()) pending_.assign(data.substr(n));
    } else {
        pending_.append(data);
        n = std::min(room, pending_.size());
        out.append(pending_, 0, n);
        pending_.erase(0, n);
    }
    if (n > 0) progress_ = true;
    held_ = !pending_.empty();
    return true;
}

void Session::answer(const HttpRequest& req, std::string_view head, std::string& out) {
    if (r_->root() == nullptr) {
        r_->respond(req, out);
        return;
    }
    if (r_->engine_file_io()) {
        // The engine opens the file; until then nothing more is answered,
        // and a Connection: close waits for the answer (after_file_step()).
        if (answer_.begin(req, head, kConnValue[connection_variant(req)], out) ==
            FileAnswer::Step::Open) {
            waiting_ = FileWant::Kind::Open;
            close_after_file_ = !req.keep_alive;
        } else {
            r_->count_status(answer_.status());
            close_after_file_ = false;
        }
        return;
    }
    read_body_ = false;
    r_->respond_file(req, head, out, file_, answer_);
    // Its body goes out before anything else is answered (process()), and
    // a Connection: close waits for the body's end.
    close_after_file_ = file_.active() && !req.keep_alive;
}

Session::FileWant Session::file_want() const noexcept {
    FileWant w;
    w.kind = waiting_;
    if (waiting_ == FileWant::Kind::Open) {
        w.name = answer_.open_name();
    } else if (waiting_ == FileWant::Kind::Read || waiting_ == FileWant::Kind::Send) {
        w.fd = file_.fd();
        w.offset = file_.offset();
        w.length = read_length_;
    }
    return w;
}

bool Session::after_file_step(std::string& out, std::size_t room) {
    if (!file_.active() && close_after_file_) {
        // Connection: close, and the answer (or the body) is complete.
        pending_.clear();
        close_ = true;
        return false;
    }
    return feed({}, out, room);
}

bool Session::file_opened(OpenedFile& f, std::string& out, std::size_t room) {
    waiting_ = FileWant::Kind::None;
    const FileAnswer::Step step = answer_.opened(*r_->root(), f, out, file_);
    if (f.fd >= 0) done_fds_.push_back(std::exchange(f.fd, -1));
    if (step == FileAnswer::Step::Open) {
        waiting_ = FileWant::Kind::Open;  // a directory's index.html
        return true;
    }
    r_->count_status(answer_.status());
    return after_file_step(out, room);
}

bool Session::file_read(long got, std::string& out, std::size_t room) {
    return body_step(got, out, room);
}

bool Session::file_sent(long got, std::string& out, std::size_t room) {
    return body_step(got, out, room);
}

bool Session::file_send_unavailable(std::string& out, std::size_t room) {
    waiting_ = FileWant::Kind::None;
    read_body_ = true;
    return feed({}, out, room);
}

bool Session::body_step(long got, std::string& out, std::size_t room) {
    waiting_ = FileWant::Kind::None;
    const FileBody::Pump pump = file_.consumed(got);
    if (pump == FileBody::Pump::More) return feed({}, out, room);
    const int fd = file_.release();
    if (r_->engine_file_io()) {
        done_fds_.push_back(fd);
    } else {
        ::close(fd);  // the session opened it (answer_file())
        r_->stats().syscalls.add();
    }
    if (pump == FileBody::Pump::Ended) {
        // The Content-Length sent cannot be met: end after the bytes there were.
        pending_.clear();
        close_ = true;
        return false;
    }
    return after_file_step(out, room);
}

bool Session::finish_chunked(std::string& out) {
    chunked_.reset();
    r_->stats().requests.add();
    progress_ = true;
    answer(chunked_request_, chunked_head_, out);
    if (chunked_request_.keep_alive || close_after_file_) return true;
    close_ = true;
    return false;
}

bool Session::process(std::string_view& data, std::string& out, std::size_t stop) {
    const HttpLimits& limits = r_->limits();
    for (;;) {
        // Waiting for the engine's open or read: the rest stays, in order.
        if (waiting_ != FileWant::Kind::None) [[unlikely]]
            return true;
        if (file_.active() && !read_body_ && r_->engine_sends(file_.length())) [[unlikely]] {
            // No output room needed: the bytes go from the page cache to the
            // socket, whose buffer is the bound.
            read_length_ = file_.next_send();
            waiting_ = FileWant::Kind::Send;
            return true;
        }
        if (file_.active() && r_->engine_file_io()) [[unlikely]] {
            read_length_ = file_.next_read(out.size(), stop);
            if (read_length_ == 0) {
                held_ = true;  // no room: the engine feeds again once the output drains
                return true;
            }
            waiting_ = FileWant::Kind::Read;
            return true;
        }
        if (file_.active()) [[unlikely]] {
            const FileBody::Pump pump = file_.pump(out, stop, r_->stats());
            if (pump == FileBody::Pump::More) {
                held_ = true;  // the engine feeds again once the output drains
                return true;
            }
            if (pump == FileBody::Pump::Ended || close_after_file_) {
                data = {};
                close_ = true;
                return false;
            }
        }
        // Out of room: what is left waits (feed() keeps it), whatever it is,
        // so nothing after this point is parsed twice.
        if (out.size() >= stop && !data.empty()) [[unlikely]] {
            held_ = true;
            return true;
        }
        if (chunked_) {
            const ChunkedBody::Status st = chunked_->consume(data);
            if (st == ChunkedBody::Status::NeedMore) return true;
            if (st != ChunkedBody::Status::Done) {
                r_->respond_error(st == ChunkedBody::Status::TooLarge ? ParseStatus::BodyTooLarge
                                                                      : ParseStatus::BadRequest,
                                  out);
                chunked_.reset();
                data = {};
                close_ = true;
                return false;
            }
            if (!finish_chunked(out)) {
                data = {};
                return false;
            }
        }
        if (body_left_ != 0) {
            const std::size_t n =
                static_cast<std::size_t>(std::min<std::uint64_t>(body_left_, data.size()));
            data.remove_prefix(n);
            body_left_ -= n;
            if (body_left_ != 0) return true;
        }
        if (data.empty()) return true;
        const ParseResult p = parse_request(data, limits);
        if (p.status == ParseStatus::Incomplete) return true;
        if (p.status != ParseStatus::Complete) {
            r_->respond_error(p.status, out);
            data = {};
            close_ = true;
            return false;
        }
        if (p.request.chunked) {
            chunked_request_ = p.request;
            // The head is gone once the body has been read: keep a copy, and
            // point the target into it (it lies inside the head).
            chunked_head_.assign(data.substr(0, p.request.head_bytes));
            chunked_request_.target =
                std::string_view(chunked_head_)
                    .substr(static_cast<std::size_t>(p.request.target.data() - data.data()),
                            p.request.target.size());
            chunked_.emplace(limits);
            data.remove_prefix(p.request.head_bytes);
            continue;
        }
        r_->stats().requests.add();
        progress_ = true;
        answer(p.request, data.substr(0, p.request.head_bytes), out);
        data.remove_prefix(p.request.head_bytes);
        body_left_ = p.request.content_length;
        if (!p.request.keep_alive && !close_after_file_) {
            data = {};
            close_ = true;
            return false;
        }
    }
}

}  // namespace uringkit::net
