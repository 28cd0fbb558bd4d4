#include "net/http_response.hpp"

#include "http_text.hpp"

#include <algorithm>

namespace uringkit::net {
namespace {

// Chunked response bodies are framed, not stored: the limit only bounds a
// chunk-size line and the trailer section.
HttpLimits response_limits() noexcept {
    HttpLimits l;
    l.max_body_bytes = std::uint64_t{1} << 62;
    l.max_head_bytes = ResponseReader::kMaxHead;
    return l;
}

}  // namespace

HeadStatus parse_response_head(std::string_view data, ResponseHead& out,
                               const char** why) noexcept {
    using namespace detail;
    const std::size_t end = find_head_end(data);
    if (end == 0) {
        // Fail early on garbage: a response starts with "HTTP/".
        const std::size_t n = data.size() < 5 ? data.size() : 5;
        if (data.substr(0, n) != std::string_view("HTTP/").substr(0, n)) {
            *why = "not an HTTP response (no HTTP/ status line)";
            return HeadStatus::Bad;
        }
        if (data.size() >= ResponseReader::kMaxHead) {
            *why = "response head over 16 KiB";
            return HeadStatus::Bad;
        }
        return HeadStatus::Incomplete;
    }
    out = ResponseHead{};
    out.head_bytes = end;
    std::string_view rest = data.substr(0, end), line;
    *why = "malformed status line";
    // status-line = HTTP-version SP status-code SP [ reason-phrase ]  (RFC 9112 4)
    if (next_line(rest, line) != Line::Ok) return HeadStatus::Bad;
    if (line.size() < 12 || line.substr(0, 5) != "HTTP/" || line[5] != '1' || line[6] != '.' ||
        line[7] < '0' || line[7] > '9' || line[8] != ' ' || (line.size() > 12 && line[12] != ' '))
        return HeadStatus::Bad;
    for (int i = 9; i < 12; ++i)
        if (line[static_cast<std::size_t>(i)] < '0' || line[static_cast<std::size_t>(i)] > '9')
            return HeadStatus::Bad;
    out.minor_version = line[7] - '0';
    out.status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
    if (out.status < 100) return HeadStatus::Bad;
    bool keep = false, close = false, te_other = false;
    unsigned codings = 0;
    *why = "malformed header field";
    for (;;) {
        const Line l = next_line(rest, line);
        if (l == Line::Bad) return HeadStatus::Bad;
        if (l == Line::End || line.empty()) break;
        if (line.front() == ' ' || line.front() == '\t') return HeadStatus::Bad;  // obs-fold
        const std::size_t colon = line.find(':');
        if (colon == 0 || colon == std::string_view::npos) return HeadStatus::Bad;
        const std::string_view name = line.substr(0, colon);
        for (char c : name)
            if (!is_tchar(static_cast<unsigned char>(c))) return HeadStatus::Bad;
        const std::string_view value = trim(line.substr(colon + 1));
        for (char c : value)
            if (!is_value_char(static_cast<unsigned char>(c))) return HeadStatus::Bad;
        if (iequals(name, "content-length")) {
            std::uint64_t n = 0;
            if (!parse_u64(value, n) || (out.has_length && n != out.content_length)) {
                *why = "invalid or conflicting Content-Length";
                return HeadStatus::Bad;
            }
            out.has_length = true;
            out.content_length = n;
        } else if (iequals(name, "transfer-encoding")) {
            for_each_token(value, [&](std::string_view tok) {
                ++codings;
                if (!iequals(tok, "chunked")) te_other = true;
            });
        } else if (iequals(name, "connection")) {
            for_each_token(value, [&](std::string_view tok) {
                if (iequals(tok, "close"))
                    close = true;
                else if (iequals(tok, "keep-alive"))
                    keep = true;
            });
        }
    }
    if (codings > 0) {
        // RFC 9112 6.1, 6.3: chunked must be the last coding; anything else
        // is delimited by the close, which a keep-alive client cannot frame.
        if (te_other || codings != 1) {
            *why = "a transfer coding other than chunked";
            return HeadStatus::Bad;
        }
        out.chunked = true;
        out.has_length = false;  // Transfer-Encoding overrides Content-Length (RFC 9112 6.3)
    }
    out.close = close || (out.minor_version == 0 && !keep);
    return HeadStatus::Complete;
}

ResponseReader::ResponseReader() : chunked_(response_limits()) {
    buffer_.reserve(kMaxHead);
}

void ResponseReader::reset() noexcept {
    state_ = State::Head;
    head_ = ResponseHead{};
    body_left_ = 0;
    buffer_.clear();
    error_ = "";
}

ResponseReader::Status ResponseReader::begin_body() noexcept {
    const int s = head_.status;
    // RFC 9112 6.3: 1xx, 204 and 304 responses end with their head.
    if ((s >= 100 && s < 200) || s == 204 || s == 304 || head_requests_) return Status::Complete;
    if (head_.chunked) {
        chunked_ = ChunkedBody(response_limits());
        state_ = State::Chunked;
        return Status::NeedMore;
    }
    if (!head_.has_length) {
        error_ = "no Content-Length or chunked coding (a body delimited by the close)";
        return Status::Bad;
    }
    if (head_.content_length == 0) return Status::Complete;
    body_left_ = head_.content_length;
    state_ = State::Body;
    return Status::NeedMore;
}

ResponseReader::Status ResponseReader::next(std::string_view& data) noexcept {
    while (!data.empty()) {
        switch (state_) {
            case State::Head: {
                HeadStatus h;
                if (buffer_.empty()) {
                    // The usual case: the whole head inside this read.
                    h = parse_response_head(data, head_, &error_);
                    if (h == HeadStatus::Complete) {
                        data.remove_prefix(head_.head_bytes);
                    } else if (h == HeadStatus::Incomplete) {
                        buffer_.append(data.data(), data.size());
                        data = {};
                        return Status::NeedMore;
                    }
                } else {
                    const std::size_t had = buffer_.size();
                    const std::size_t take = std::min(data.size(), kMaxHead - had);
                    buffer_.append(data.data(), take);
                    h = parse_response_head(buffer_, head_, &error_);
                    if (h == HeadStatus::Complete) {
                        data.remove_prefix(head_.head_bytes - had);
                        buffer_.clear();
                    } else if (h == HeadStatus::Incomplete) {
                        data.remove_prefix(take);
                        if (buffer_.size() >= kMaxHead) {
                            error_ = "response head over 16 KiB";
                            return Status::Bad;
                        }
                        return Status::NeedMore;
                    }
                }
                if (h == HeadStatus::Bad) return Status::Bad;
                const Status s = begin_body();
                if (s != Status::NeedMore) return s;
                break;
            }
            case State::Body: {
                const std::size_t n =
                    data.size() < body_left_ ? data.size() : static_cast<std::size_t>(body_left_);
                if (sink_ != nullptr) sink_->on_body(head_, data.substr(0, n));
                data.remove_prefix(n);
                body_left_ -= n;
                if (body_left_ == 0) {
                    state_ = State::Head;
                    return Status::Complete;
                }
                break;
            }
            case State::Chunked:
                switch (chunked_.consume(data)) {
                    case ChunkedBody::Status::Done:
                        state_ = State::Head;
                        return Status::Complete;
                    case ChunkedBody::Status::NeedMore:
                        break;
                    case ChunkedBody::Status::Bad:
                    case ChunkedBody::Status::TooLarge:
                        error_ = "malformed chunked body";
                        return Status::Bad;
                }
                break;
        }
    }
    return Status::NeedMore;
}

}  // namespace uringkit::net
