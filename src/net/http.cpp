#include "uringkit/net/http.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace uringkit::net {
namespace {

// RFC 9110 5.6.2 tchar.
constexpr bool is_tchar(unsigned char c) noexcept {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    switch (c) {
        case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+':
        case '-': case '.': case '^': case '_': case '`': case '|': case '~':
            return true;
        default:
            return false;
    }
}

// Field values: visible characters, space, tab and obs-text; no other controls.
constexpr bool is_value_char(unsigned char c) noexcept { return c == '\t' || (c >= 0x20 && c != 0x7f); }

bool iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        unsigned char x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
        if (x >= 'A' && x <= 'Z') x = static_cast<unsigned char>(x + 32);
        if (y >= 'A' && y <= 'Z') y = static_cast<unsigned char>(y + 32);
        if (x != y) return false;
    }
    return true;
}

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// The end of the head: the offset just past the empty line, or 0 when absent.
// A line ends in CRLF or a bare LF (RFC 9112 2.2 lets a recipient accept LF).
std::size_t find_head_end(std::string_view d) noexcept {
    std::size_t pos = 0;
    while (pos < d.size()) {
        const void* nl = std::memchr(d.data() + pos, '\n', d.size() - pos);
        if (!nl) return 0;
        std::size_t i = static_cast<std::size_t>(static_cast<const char*>(nl) - d.data()) + 1;
        if (i < d.size() && d[i] == '\n') return i + 1;
        if (i + 1 < d.size() && d[i] == '\r' && d[i + 1] == '\n') return i + 2;
        pos = i;
    }
    return 0;
}

// Splits off one line (without its CRLF/LF).  A lone CR inside a line is
// refused (RFC 9112 2.2: a bare CR is invalid outside the line ending).
enum class Line { Ok, End, Bad };
Line next_line(std::string_view& rest, std::string_view& line) noexcept {
    const std::size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) return Line::End;
    line = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line.find('\r') == std::string_view::npos ? Line::Ok : Line::Bad;
}

bool parse_u64(std::string_view s, std::uint64_t& out) noexcept {
    if (s.empty() || s.size() > 19) return false;  // 19 digits always fit
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    out = v;
    return true;
}

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
    const std::string_view version = line.substr(sp2 + 1);
    if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' || version[5] < '0' ||
        version[5] > '9' || version[7] < '0' || version[7] > '9')
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
    bool chunked_or_te = false;
    bool close = false, keep = false;
    for (;;) {
        const Line l = next_line(rest, line);
        if (l == Line::Bad) return r;
        if (l == Line::End || line.empty()) break;  // the blank line that ends the head
        if (line.front() == ' ' || line.front() == '\t') return r;  // obs-fold: RFC 9112 5.2 allows 400
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
            chunked_or_te = true;
        } else if (iequals(name, "connection")) {
            std::string_view v = value;
            while (!v.empty()) {
                const std::size_t comma = v.find(',');
                const std::string_view tok = trim(v.substr(0, comma));
                if (iequals(tok, "close")) close = true;
                else if (iequals(tok, "keep-alive")) keep = true;
                if (comma == std::string_view::npos) break;
                v.remove_prefix(comma + 1);
            }
        }
    }
    if (chunked_or_te) {
        // Transfer-Encoding together with Content-Length is a smuggling vector
        // (RFC 9112 6.1): refuse it outright; alone, chunked is not supported.
        r.status = have_length ? ParseStatus::BadRequest : ParseStatus::NotImplemented;
        return r;
    }
    if (close) q.keep_alive = false;
    else if (keep) q.keep_alive = true;
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
        case 200: return "OK";
        case 400: return "Bad Request";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 413: return "Content Too Large";
        case 431: return "Request Header Fields Too Large";
        case 501: return "Not Implemented";
        case 503: return "Service Unavailable";
        case 505: return "HTTP Version Not Supported";
        default: return "Unknown";
    }
}

void append_response(std::string& out, int status, std::string_view content_type, std::string_view body,
                     std::string_view connection, bool head_only) {
    char num[24];
    out += "HTTP/1.1 ";
    out += std::to_string(status);
    out += ' ';
    out += reason_phrase(status);
    out += "\r\nServer: uringkit\r\nContent-Type: ";
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

std::string make_body(std::size_t size) {
    static constexpr std::string_view pattern = "uringkit-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    std::string body(size, ' ');
    for (std::size_t i = 0; i < size; ++i) body[i] = pattern[i % pattern.size()];
    if (size > 0) body[size - 1] = '\n';
    return body;
}

}  // namespace uringkit::net
