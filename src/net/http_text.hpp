// Byte-level helpers of HTTP/1.1 message syntax (RFC 9110, RFC 9112),
// shared by the request parser (http.cpp) and the response reader
// (http_response.cpp), so both read heads by the same rules.  Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace uringkit::net::detail {

// RFC 9110 5.6.2 tchar.
constexpr bool is_tchar(unsigned char c) noexcept {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    switch (c) {
        case '!':
        case '#':
        case '$':
        case '%':
        case '&':
        case '\'':
        case '*':
        case '+':
        case '-':
        case '.':
        case '^':
        case '_':
        case '`':
        case '|':
        case '~':
            return true;
        default:
            return false;
    }
}

// Field values: visible characters, space, tab and obs-text; no other controls.
constexpr bool is_value_char(unsigned char c) noexcept {
    return c == '\t' || (c >= 0x20 && c != 0x7f);
}

inline bool iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        unsigned char x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
        if (x >= 'A' && x <= 'Z') x = static_cast<unsigned char>(x + 32);
        if (y >= 'A' && y <= 'Z') y = static_cast<unsigned char>(y + 32);
        if (x != y) return false;
    }
    return true;
}

inline std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// The end of the head: the offset just past the empty line, or 0 when absent.
// A line ends in CRLF or a bare LF (RFC 9112 2.2 lets a recipient accept LF).
inline std::size_t find_head_end(std::string_view d) noexcept {
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
inline Line next_line(std::string_view& rest, std::string_view& line) noexcept {
    const std::size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) return Line::End;
    line = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line.find('\r') == std::string_view::npos ? Line::Ok : Line::Bad;
}

inline bool parse_u64(std::string_view s, std::uint64_t& out) noexcept {
    if (s.empty() || s.size() > 19) return false;  // 19 digits always fit
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    out = v;
    return true;
}

// Calls f(token) for each comma-separated, trimmed, non-empty token of a
// list-valued field (Connection, Transfer-Encoding).
template <class F>
void for_each_token(std::string_view v, F&& f) {
    while (!v.empty()) {
        const std::size_t comma = v.find(',');
        const std::string_view tok = trim(v.substr(0, comma));
        if (!tok.empty()) f(tok);
        if (comma == std::string_view::npos) break;
        v.remove_prefix(comma + 1);
    }
}

}  // namespace uringkit::net::detail
