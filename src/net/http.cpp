#include "net/http.hpp"

#include "http_text.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace uringkit::net {
namespace {

using detail::find_head_end;
using detail::iequals;
using detail::is_tchar;
using detail::is_value_char;
using detail::Line;
using detail::next_line;
using detail::parse_u64;
using detail::trim;

Method classify(std::string_view m, bool& known) noexcept {
    known = true;
    if (m == "GET") return Method::Get;
    if (m == "HEAD") return Method::Head;
    if (m == "POST") return Method::Post;
    // Every other method, known to RFC 9110 (PUT, DELETE...) or not, is one
    // this server does not implement: 501 (RFC 9110 15.6.2).
    known = false;
    return Method::Other;
}

// RFC 9112 3.2.2: a server must accept the absolute-form ("http://host/a?b"),
// which clients send to proxies, and take its path and query as if they had
// come in origin-form.  Any scheme of RFC 3986's syntax followed by "://"
// counts, as nginx reads it; anything else is left for the router (404).
// With no path ("http://host", "http://host?b") the path is "/": the second
// slash of "//", so the target still lies inside the head as HttpRequest
// promises; the query is dropped then, and nothing here reads one.
std::string_view origin_form(std::string_view t) noexcept {
    auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    if (t.empty() || !alpha(t[0])) return t;
    std::size_t i = 1;
    while (i < t.size() && (alpha(t[i]) || (t[i] >= '0' && t[i] <= '9') || t[i] == '+' ||
                            t[i] == '-' || t[i] == '.'))
        ++i;
    if (t.substr(i, 3) != "://") return t;
    const std::size_t path = t.find_first_of("/?", i + 3);
    if (path == std::string_view::npos || t[path] == '?') return t.substr(i + 2, 1);
    return t.substr(path);
}

}  // namespace

ParseResult parse_request(std::string_view data, const HttpLimits& limits) noexcept {
    ParseResult r{ParseStatus::Incomplete, {}};
    // Leading empty lines before a request are ignored (RFC 9112 2.2).
    std::size_t skip = 0;
    while (skip < data.size() && (data[skip] == '\r' || data[skip] == '\n')) {
        if (data[skip] == '\r' && (skip + 1 >= data.size() || data[skip + 1] != '\n')) break;
        ++skip;
    }
    data.remove_prefix(skip);
    // A request line over its limit is 414 (RFC 9112 3: a server that
    // receives a longer request-target than it wishes to parse responds
    // 414), decided as soon as that many bytes hold no line end.
    const std::size_t first_lf = data.substr(0, limits.max_request_line_bytes + 2).find('\n');
    const std::size_t line_end = first_lf == std::string_view::npos ? data.size() : first_lf;
    const std::size_t line_bytes = line_end - (line_end > 0 && data[line_end - 1] == '\r');
    if (line_bytes > limits.max_request_line_bytes) {
        r.status = ParseStatus::UriTooLong;
        return r;
    }
    const std::size_t end = find_head_end(data);
    if (end == 0) {
        if (data.size() >= limits.max_head_bytes) r.status = ParseStatus::HeadTooLarge;
        // Fail early on garbage: a request line starts with a method token.
        else if (!data.empty() && !is_tchar(static_cast<unsigned char>(data[0])))
            r.status = ParseStatus::BadRequest;
        return r;
    }
    if (end > limits.max_head_bytes) {
        r.status = ParseStatus::HeadTooLarge;
        return r;
    }
    HttpRequest& q = r.request;
    q.head_bytes = skip + end;
    std::string_view rest = data.substr(0, end);
    std::string_view line;
    r.status = ParseStatus::BadRequest;
    if (next_line(rest, line) != Line::Ok) return r;

    // request-line = method SP request-target SP HTTP-version
    const std::size_t sp1 = line.find(' ');
    if (sp1 == 0 || sp1 == std::string_view::npos) return r;
    const std::string_view method = line.substr(0, sp1);
    for (char c : method)
        if (!is_tchar(static_cast<unsigned char>(c))) return r;
    const std::size_t sp2 = line.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos || sp2 == sp1 + 1) return r;
    q.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    for (char c : q.target) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7f) return r;
    }
    q.target = origin_form(q.target);
    const std::string_view version = line.substr(sp2 + 1);
    if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' ||
        version[5] < '0' || version[5] > '9' || version[7] < '0' || version[7] > '9')
        return r;
    if (version[5] != '1') {
        r.status = version[5] == '0' ? ParseStatus::BadRequest : ParseStatus::VersionNotSupported;
        return r;
    }
    q.minor_version = version[7] - '0';
    q.keep_alive = q.minor_version >= 1;
    bool known = false;
    q.method = classify(method, known);

    bool have_length = false;
    bool have_te = false, te_other = false;
    unsigned codings = 0, hosts = 0;
    bool close = false, keep = false;
    for (;;) {
        const Line l = next_line(rest, line);
        if (l == Line::Bad) return r;
        if (l == Line::End || line.empty()) break;  // the blank line that ends the head
        if (line.front() == ' ' || line.front() == '\t')
            return r;  // obs-fold: RFC 9112 5.2 allows 400
        const std::size_t colon = line.find(':');
        if (colon == 0 || colon == std::string_view::npos) return r;
        const std::string_view name = line.substr(0, colon);
        for (char c : name)
            if (!is_tchar(static_cast<unsigned char>(c))) return r;  // also rejects "Name :"
        const std::string_view value = trim(line.substr(colon + 1));
        for (char c : value)
            if (!is_value_char(static_cast<unsigned char>(c))) return r;
        if (iequals(name, "content-length")) {
            std::uint64_t n = 0;
            if (!parse_u64(value, n)) return r;
            if (have_length && n != q.content_length) return r;  // RFC 9112 6.3: differing lengths
            have_length = true;
            q.content_length = n;
        } else if (iequals(name, "transfer-encoding")) {
            // Every coding of every Transfer-Encoding line, in order; only a
            // lone "chunked" is one this server understands.
            have_te = true;
            std::string_view v = value;
            while (!v.empty()) {
                const std::size_t comma = v.find(',');
                const std::string_view tok = trim(v.substr(0, comma));
                if (!tok.empty()) {
                    ++codings;
                    if (!iequals(tok, "chunked")) te_other = true;
                }
                if (comma == std::string_view::npos) break;
                v.remove_prefix(comma + 1);
            }
        } else if (iequals(name, "host")) {
            ++hosts;
        } else if (iequals(name, "connection")) {
            std::string_view v = value;
            while (!v.empty()) {
                const std::size_t comma = v.find(',');
                const std::string_view tok = trim(v.substr(0, comma));
                if (iequals(tok, "close"))
                    close = true;
                else if (iequals(tok, "keep-alive"))
                    keep = true;
                if (comma == std::string_view::npos) break;
                v.remove_prefix(comma + 1);
            }
        }
    }
    // RFC 9112 3.2: a server MUST answer 400 to an HTTP/1.1 request without
    // a Host field or with more than one.
    if (q.minor_version >= 1 && hosts != 1) return r;
    if (have_te) {
        // Transfer-Encoding together with Content-Length is a smuggling vector
        // and in HTTP/1.0 it is faulty (RFC 9112 6.1): refuse both outright.
        if (have_length || q.minor_version == 0 || codings == 0) return r;
        // A coding this server does not know (gzip, or chunked not alone and
        // last): 501 (RFC 9112 6.1).
        if (te_other || codings != 1) {
            r.status = ParseStatus::NotImplemented;
            return r;
        }
        q.chunked = true;
    }
    if (close)
        q.keep_alive = false;
    else if (keep)
        q.keep_alive = true;
    if (!known) {
        r.status = ParseStatus::NotImplemented;
        return r;
    }
    if (q.content_length > limits.max_body_bytes) {
        r.status = ParseStatus::BodyTooLarge;
        return r;
    }
    r.status = ParseStatus::Complete;
    return r;
}

std::string_view reason_phrase(int status) noexcept {
    switch (status) {
        case 200:
            return "OK";
        case 206:
            return "Partial Content";
        case 301:
            return "Moved Permanently";
        case 304:
            return "Not Modified";
        case 400:
            return "Bad Request";
        case 403:
            return "Forbidden";
        case 404:
            return "Not Found";
        case 405:
            return "Method Not Allowed";
        case 413:
            return "Content Too Large";
        case 414:
            return "URI Too Long";
        case 416:
            return "Range Not Satisfiable";
        case 431:
            return "Request Header Fields Too Large";
        case 501:
            return "Not Implemented";
        case 503:
            return "Service Unavailable";
        case 505:
            return "HTTP Version Not Supported";
        default:
            return "Unknown";
    }
}

void format_http_date(std::time_t t, char (&out)[kHttpDateBytes]) noexcept {
    // Fixed English names: strftime's %a and %b follow the locale.
    static constexpr char kDays[] = "SunMonTueWedThuFriSat";
    static constexpr char kMonths[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.3s, %02u %.3s %04u %02u:%02u:%02u GMT",
                  kDays + 3 * (static_cast<unsigned>(tm.tm_wday) % 7),
                  static_cast<unsigned>(tm.tm_mday) % 100,
                  kMonths + 3 * (static_cast<unsigned>(tm.tm_mon) % 12),
                  static_cast<unsigned>(tm.tm_year + 1900) % 10000,
                  static_cast<unsigned>(tm.tm_hour) % 100, static_cast<unsigned>(tm.tm_min) % 100,
                  static_cast<unsigned>(tm.tm_sec) % 100);
    std::memcpy(out, buf, kHttpDateBytes);
}

void append_status_and_date(std::string& out, int status, std::time_t now) {
    char date[kHttpDateBytes];
    format_http_date(now, date);
    out += "HTTP/1.1 ";
    out += std::to_string(status);
    out += ' ';
    out += reason_phrase(status);
    out += "\r\nServer: uringkit\r\nDate: ";
    out.append(date, kHttpDateBytes);
}

void append_response(std::string& out, int status, std::string_view content_type,
                     std::string_view body, std::string_view connection, bool head_only,
                     std::time_t now) {
    char num[24];
    append_status_and_date(out, status, now);
    out += "\r\nContent-Type: ";
    out += content_type;
    out += "\r\nContent-Length: ";
    const int n = std::snprintf(num, sizeof num, "%zu", body.size());
    out.append(num, static_cast<std::size_t>(n));
    if (!connection.empty()) {
        out += "\r\nConnection: ";
        out += connection;
    }
    out += "\r\n\r\n";
    if (!head_only) out += body;
}

ChunkedBody::Status ChunkedBody::consume(std::string_view& data) noexcept {
    while (!data.empty()) {
        if (state_ == State::Data) {
            const std::size_t n =
                static_cast<std::size_t>(std::min<std::uint64_t>(chunk_, data.size()));
            data.remove_prefix(n);
            chunk_ -= n;
            if (chunk_ == 0) state_ = State::DataCr;
            continue;
        }
        const char c = data.front();
        data.remove_prefix(1);
        int hex = -1;
        if (c >= '0' && c <= '9')
            hex = c - '0';
        else if (c >= 'a' && c <= 'f')
            hex = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            hex = c - 'A' + 10;
        bool size_line_done = false;
        switch (state_) {
            case State::SizeStart:
                if (hex < 0) return Status::Bad;
                chunk_ = static_cast<std::uint64_t>(hex);
                line_ = 1;
                state_ = State::Size;
                break;
            case State::Size:
                if (hex >= 0) {
                    // Over the limit as soon as the size says so (and before
                    // it could overflow).
                    if (chunk_ > (max_body_ - total_) / 16) return Status::TooLarge;
                    chunk_ = chunk_ * 16 + static_cast<std::uint64_t>(hex);
                } else if (c == ';' || c == ' ' || c == '\t') {
                    state_ = State::Ext;
                } else if (c == '\r') {
                    state_ = State::SizeLf;
                } else if (c == '\n') {
                    size_line_done = true;
                } else {
                    return Status::Bad;
                }
                break;
            case State::Ext:  // chunk extensions: ignored (RFC 9112 7.1.1)
                if (c == '\r')
                    state_ = State::SizeLf;
                else if (c == '\n')
                    size_line_done = true;
                else if (static_cast<unsigned char>(c) < 0x20 && c != '\t')
                    return Status::Bad;
                break;
            case State::SizeLf:
                if (c != '\n') return Status::Bad;
                size_line_done = true;
                break;
            case State::DataCr:
                if (c == '\r')
                    state_ = State::DataLf;
                else if (c == '\n')
                    state_ = State::SizeStart;
                else
                    return Status::Bad;
                break;
            case State::DataLf:
                if (c != '\n') return Status::Bad;
                state_ = State::SizeStart;
                break;
            case State::TrailerStart:  // a trailer field line, or the blank line that ends the body
                if (c == '\r')
                    state_ = State::EndLf;
                else if (c == '\n')
                    return Status::Done;
                else
                    state_ = State::Trailer;
                break;
            case State::Trailer:
                if (c == '\r')
                    state_ = State::TrailerLf;
                else if (c == '\n')
                    state_ = State::TrailerStart;
                break;
            case State::TrailerLf:
                if (c != '\n') return Status::Bad;
                state_ = State::TrailerStart;
                break;
            case State::EndLf:
                return c == '\n' ? Status::Done : Status::Bad;
            case State::Data:
                break;
        }
        if (size_line_done) {
            if (chunk_ > max_body_ - total_) return Status::TooLarge;
            total_ += chunk_;
            line_ = 0;
            state_ = chunk_ == 0 ? State::TrailerStart : State::Data;
        } else if (++line_ > max_line_) {
            return Status::Bad;  // an endless chunk-size line or trailer section
        }
    }
    return Status::NeedMore;
}

std::string make_body(std::size_t size) {
    static constexpr std::string_view pattern =
        "uringkit-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    std::string body(size, ' ');
    for (std::size_t i = 0; i < size; ++i) body[i] = pattern[i % pattern.size()];
    if (size > 0) body[size - 1] = '\n';
    return body;
}

}  // namespace uringkit::net
