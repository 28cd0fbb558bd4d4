#include "net/static_files.hpp"

#include "http_text.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace uringkit::net {
namespace {

// The HTTP parser's own (http_text.hpp): one header grammar for both.
using detail::iequals;
using detail::trim;

char lower(char c) noexcept {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
}

int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    c = lower(c);
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

std::optional<std::uint64_t> parse_u64(std::string_view s) noexcept {
    std::uint64_t v = 0;
    if (s.empty()) return std::nullopt;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
    return v;
}

// RFC 9110 8.8.3.2: weak comparison for If-None-Match ("W/" ignored on both
// sides; ours is always strong).
bool etag_list_matches(std::string_view list, std::string_view etag) noexcept {
    list = trim(list);
    if (list == "*") return true;
    while (!list.empty()) {
        const auto comma = list.find(',');
        auto item = trim(list.substr(0, comma));
        if (item.starts_with("W/")) item.remove_prefix(2);
        if (item == etag) return true;
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
    }
    return false;
}

struct ByteRange {
    enum Kind { Ignore, Satisfiable, Unsatisfiable } kind = Ignore;
    std::uint64_t first = 0, length = 0;
};

// One "bytes=" range-spec against a file of `size` bytes.  A header this
// does not understand (another unit, several ranges, bad syntax) is ignored.
ByteRange parse_range(std::string_view v, std::uint64_t size) noexcept {
    ByteRange r;
    v = trim(v);
    if (v.size() < 6 || !iequals(v.substr(0, 6), "bytes=")) return r;
    v = trim(v.substr(6));
    if (v.find(',') != std::string_view::npos) return r;
    const auto dash = v.find('-');
    if (dash == std::string_view::npos) return r;
    const auto a = trim(v.substr(0, dash)), b = trim(v.substr(dash + 1));
    if (a.empty()) {  // suffix: the last n bytes
        const auto n = parse_u64(b);
        if (!n) return r;
        if (*n == 0 || size == 0) {
            r.kind = ByteRange::Unsatisfiable;
            return r;
        }
        r.kind = ByteRange::Satisfiable;
        r.length = *n < size ? *n : size;
        r.first = size - r.length;
        return r;
    }
    const auto first = parse_u64(a);
    if (!first) return r;
    std::uint64_t last = size == 0 ? 0 : size - 1;
    if (!b.empty()) {
        const auto l = parse_u64(b);
        if (!l || *l < *first) return r;
        if (*l < last) last = *l;
    }
    if (*first >= size) {
        r.kind = ByteRange::Unsatisfiable;
        return r;
    }
    r.kind = ByteRange::Satisfiable;
    r.first = *first;
    r.length = last - *first + 1;
    return r;
}

void append_common(std::string& out, int status, std::string_view connection, std::time_t now) {
    append_status_and_date(out, status, now);
    out += "\r\n";
    if (!connection.empty()) {
        out += "Connection: ";
        out += connection;
        out += "\r\n";
    }
}

}  // namespace

std::optional<std::string> decode_target(std::string_view target) {
    if (target.empty() || target.front() != '/') return std::nullopt;
    target = target.substr(0, target.find('?'));
    target.remove_prefix(1);
    std::string path;
    path.reserve(target.size());
    for (std::size_t i = 0; i < target.size(); ++i) {
        char c = target[i];
        if (c == '%') {
            if (i + 2 >= target.size()) return std::nullopt;  // "%" or "%x" at the end
            const int hi = hex_value(target[i + 1]), lo = hex_value(target[i + 2]);
            if (hi < 0 || lo < 0) return std::nullopt;
            c = static_cast<char>(hi * 16 + lo);
            i += 2;
        }
        if (c == '\0') return std::nullopt;
        path += c;
    }
    return path;
}

int open_error_status(int err) noexcept {
    if (err < 0) err = -err;
    return err == EACCES || err == EPERM || err == ENXIO ? 403 : 404;
}

MimeTypes MimeTypes::parse(std::string_view text) {
    MimeTypes m;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        auto line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        line = line.substr(0, line.find('#'));
        std::string_view type;
        while (!line.empty()) {
            const auto start = line.find_first_not_of(" \t\r");
            if (start == std::string_view::npos) break;
            line.remove_prefix(start);
            const auto end = line.find_first_of(" \t\r");
            const auto word = line.substr(0, end);
            line.remove_prefix(end == std::string_view::npos ? line.size() : end);
            if (type.empty()) {
                type = word;
                continue;
            }
            std::string ext(word);
            for (auto& ch : ext) ch = lower(ch);
            m.by_ext_.try_emplace(std::move(ext), type);  // the first type named wins
        }
    }
    return m;
}

MimeTypes MimeTypes::load(const char* path) {
    std::ifstream in(path);
    if (!in) return {};
    std::ostringstream s;
    s << in.rdbuf();
    return parse(s.str());
}

std::string_view MimeTypes::lookup(std::string_view file_name) const noexcept {
    const auto slash = file_name.rfind('/');
    if (slash != std::string_view::npos) file_name.remove_prefix(slash + 1);
    const auto dot = file_name.rfind('.');
    if (dot == std::string_view::npos || dot + 1 == file_name.size()) return kDefault;
    std::string ext(file_name.substr(dot + 1));
    for (auto& ch : ext) ch = lower(ch);
    const auto it = by_ext_.find(ext);
    return it == by_ext_.end() ? kDefault : std::string_view(it->second);
}

std::string_view find_header(std::string_view head, std::string_view name) noexcept {
    auto eol = head.find("\r\n");  // skip the request line
    while (eol != std::string_view::npos) {
        head.remove_prefix(eol + 2);
        eol = head.find("\r\n");
        const auto line = head.substr(0, eol);
        if (line.empty()) break;
        const auto colon = line.find(':');
        if (colon != std::string_view::npos && iequals(line.substr(0, colon), name))
            return trim(line.substr(colon + 1));
    }
    return {};
}

FileRequestHeaders file_request_headers(std::string_view head) noexcept {
    return {find_header(head, "If-None-Match"), find_header(head, "If-Modified-Since"),
            find_header(head, "Range"), find_header(head, "If-Range")};
}

std::string make_etag(const FileMeta& m) {
    const auto ns = static_cast<std::uint64_t>(m.mtime_sec) * 1000000000ULL + m.mtime_nsec;
    char buf[64];
    const int n =
        std::snprintf(buf, sizeof buf, "\"%llx-%llx-%llx\"", static_cast<unsigned long long>(m.ino),
                      static_cast<unsigned long long>(m.size), static_cast<unsigned long long>(ns));
    return std::string(buf, static_cast<std::size_t>(n));
}

std::optional<std::time_t> parse_http_date(std::string_view s) noexcept {
    static constexpr std::string_view kMonths = "JanFebMarAprMayJunJulAugSepOctNovDec";
    s = trim(s);
    // "Sun, 06 Nov 1994 08:49:37 GMT"
    if (s.size() != kHttpDateBytes || s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' ||
        s[16] != ' ' || s[19] != ':' || s[22] != ':' || s.substr(25) != " GMT")
        return std::nullopt;
    const auto num = [&](std::size_t at, std::size_t n) -> int {
        int v = 0;
        for (std::size_t i = at; i < at + n; ++i) {
            if (s[i] < '0' || s[i] > '9') return -1;
            v = v * 10 + (s[i] - '0');
        }
        return v;
    };
    const auto mon = kMonths.find(s.substr(8, 3));
    std::tm tm{};
    tm.tm_mday = num(5, 2);
    tm.tm_year = num(12, 4) - 1900;
    tm.tm_hour = num(17, 2);
    tm.tm_min = num(20, 2);
    tm.tm_sec = num(23, 2);
    if (mon == std::string_view::npos || mon % 3 != 0 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
        tm.tm_year < 0 || tm.tm_hour < 0 || tm.tm_hour > 23 || tm.tm_min < 0 || tm.tm_min > 59 ||
        tm.tm_sec < 0 || tm.tm_sec > 60)
        return std::nullopt;
    tm.tm_mon = static_cast<int>(mon / 3);
    return ::timegm(&tm);
}

FilePlan plan_file_response(Method method, const FileMeta& meta, const FileRequestHeaders& h,
                            std::string_view content_type, std::string_view connection,
                            std::time_t now) {
    FilePlan p;
    const std::string etag = make_etag(meta);
    char modified[kHttpDateBytes];
    format_http_date(static_cast<std::time_t>(meta.mtime_sec), modified);
    const std::string_view last_modified(modified, kHttpDateBytes);

    bool not_modified = false;
    if (!h.if_none_match.empty()) {
        not_modified = etag_list_matches(h.if_none_match, etag);
    } else if (!h.if_modified_since.empty()) {
        const auto since = parse_http_date(h.if_modified_since);
        not_modified = since && meta.mtime_sec <= *since;
    }

    ByteRange range;
    if (!not_modified && !h.range.empty()) {
        bool current = true;
        if (!h.if_range.empty()) {
            // A strong comparison (RFC 9110 13.1.5): an ETag equal to ours, or
            // exactly our Last-Modified.
            current = h.if_range.front() == '"' ? h.if_range == etag : h.if_range == last_modified;
        }
        if (current) range = parse_range(h.range, meta.size);
    }

    p.status = not_modified                             ? 304
               : range.kind == ByteRange::Satisfiable   ? 206
               : range.kind == ByteRange::Unsatisfiable ? 416
                                                        : 200;
    append_common(p.head, p.status, connection, now);
    p.head += "Accept-Ranges: bytes\r\nETag: ";
    p.head += etag;
    p.head += "\r\nLast-Modified: ";
    p.head += last_modified;
    p.head += "\r\n";
    if (p.status == 304) {
        p.head += "\r\n";
        return p;
    }
    if (p.status == 416) {
        p.head +=
            "Content-Range: bytes */" + std::to_string(meta.size) + "\r\nContent-Length: 0\r\n\r\n";
        return p;
    }
    p.offset = p.status == 206 ? range.first : 0;
    p.length = p.status == 206 ? range.length : meta.size;
    p.head += "Content-Type: ";
    p.head += content_type;
    p.head += "\r\n";
    if (p.status == 206)
        p.head += "Content-Range: bytes " + std::to_string(p.offset) + '-' +
                  std::to_string(p.offset + p.length - 1) + '/' + std::to_string(meta.size) +
                  "\r\n";
    p.head += "Content-Length: " + std::to_string(p.length) + "\r\n\r\n";
    if (method == Method::Head) p.length = 0;
    return p;
}

std::string redirect_response(std::string_view location, std::string_view connection,
                              bool head_only, std::time_t now) {
    static constexpr std::string_view kBody = "moved\n";
    std::string out;
    append_common(out, 301, connection, now);
    out += "Location: ";
    out += location;
    out += "\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(kBody.size()) +
           "\r\n\r\n";
    if (!head_only) out += kBody;
    return out;
}

std::string method_not_allowed_response(std::string_view connection, std::time_t now) {
    static constexpr std::string_view kBody = "method not allowed\n";
    std::string out;
    append_common(out, 405, connection, now);
    out += "Allow: GET, HEAD\r\nContent-Type: text/plain\r\nContent-Length: " +
           std::to_string(kBody.size()) + "\r\n\r\n";
    out += kBody;
    return out;
}

}  // namespace uringkit::net

namespace uringkit::net {

open_how file_open_how(ResolveOptions o) noexcept {
    std::uint64_t resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    if (o.no_symlinks) resolve |= RESOLVE_NO_SYMLINKS;
    if (o.no_xdev) resolve |= RESOLVE_NO_XDEV;
    open_how how{};
    how.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
    how.resolve = resolve;
    return how;
}

FileKind file_kind(unsigned stx_mode) noexcept {
    return S_ISREG(stx_mode)   ? FileKind::Regular
           : S_ISDIR(stx_mode) ? FileKind::Directory
                               : FileKind::Other;
}

OpenedFile opened_file(int fd, const struct statx& stx) noexcept {
    OpenedFile f;
    f.fd = fd;
    f.kind = file_kind(stx.stx_mode);
    f.meta = {stx.stx_ino, stx.stx_size, stx.stx_mtime.tv_sec, stx.stx_mtime.tv_nsec};
    return f;
}

OpenedFile open_beneath(int root_fd, const char* name, ResolveOptions o) noexcept {
    OpenedFile f;
    const open_how how = file_open_how(o);
    if (*name == '\0') name = ".";  // "" names the root itself: openat2 wants "."
    const long fd = ::syscall(SYS_openat2, root_fd, name, &how, sizeof how);
    if (fd < 0) {
        f.error = errno;
        return f;
    }
    struct statx stx {};
    if (::statx(static_cast<int>(fd), "", AT_EMPTY_PATH, kFileStatxMask, &stx) != 0) {
        f.error = errno;
        ::close(static_cast<int>(fd));
        return f;
    }
    return opened_file(static_cast<int>(fd), stx);
}

OpenedFile open_beneath(int root_fd, const std::string& path, ResolveOptions o) noexcept {
    return open_beneath(root_fd, path.c_str(), o);
}

}  // namespace uringkit::net
