#include "strace_line.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

#include "source.hpp"

namespace uringkit::replay::strace {
namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    return s;
}

bool all_digits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!is_digit(c)) return false;
    return true;
}

std::optional<std::uint64_t> parse_unsigned(std::string_view s) {
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
    return v;
}

// "SECONDS[.FRACTION]" to nanoseconds; the fraction has 6 digits by default
// and 9 with --timestamps=ns.
std::optional<std::int64_t> seconds_to_ns(std::string_view whole, std::string_view frac) {
    const auto s = parse_unsigned(whole);
    if (!s || frac.size() > 9 || (!frac.empty() && !all_digits(frac))) return std::nullopt;
    std::int64_t ns = 0;
    for (std::size_t i = 0; i < 9; ++i) ns = ns * 10 + (i < frac.size() ? frac[i] - '0' : 0);
    return static_cast<std::int64_t>(*s) * 1'000'000'000 + ns;
}

// -ttt "1700000000.123456", -tt "14:02:03.123456" or -t "14:02:03" (since
// midnight: a trace across midnight goes backwards, which only the span sees).
std::optional<std::int64_t> parse_timestamp(std::string_view t) {
    const std::size_t dot = t.find('.');
    const std::string_view whole = t.substr(0, dot);
    const std::string_view frac =
        dot == std::string_view::npos ? std::string_view{} : t.substr(dot + 1);
    if (whole.find(':') == std::string_view::npos)
        return dot == std::string_view::npos ? std::nullopt : seconds_to_ns(whole, frac);
    if (whole.size() != 8 || whole[2] != ':' || whole[5] != ':') return std::nullopt;
    const auto h = parse_unsigned(whole.substr(0, 2)), m = parse_unsigned(whole.substr(3, 2)),
               s = parse_unsigned(whole.substr(6, 2));
    if (!h || !m || !s) return std::nullopt;
    const auto sub = seconds_to_ns("0", frac);
    if (!sub) return std::nullopt;
    return static_cast<std::int64_t>((*h * 3600 + *m * 60 + *s)) * 1'000'000'000 + *sub;
}

// Skips a quoted string starting at s[i] == '"'; returns the index after the
// closing quote.
std::size_t skip_string(std::string_view s, std::size_t i) {
    for (++i; i < s.size(); ++i) {
        if (s[i] == '\\')
            ++i;
        else if (s[i] == '"')
            return i + 1;
    }
    throw LineError("a string without its closing quote");
}

// Skips a -y annotation starting at s[i] == '<'.  -yy socket details hold
// "->" inside brackets, so '>' closes it only outside them.
std::size_t skip_annotation(std::string_view s, std::size_t i) {
    int brackets = 0;
    for (++i; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '\\')
            ++i;
        else if (c == '[')
            ++brackets;
        else if (c == ']')
            --brackets;
        else if (c == '>' && brackets <= 0)
            return i + 1;
    }
    throw LineError("a <...> annotation without its closing '>'");
}

// strace's escapes: \\ \" \n \t \r \v \f, \xHH and octal \NNN.
std::string unescape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '\\' || i + 1 == s.size()) {
            out += s[i];
            continue;
        }
        const char c = s[++i];
        switch (c) {
            case 'n':
                out += '\n';
                break;
            case 't':
                out += '\t';
                break;
            case 'r':
                out += '\r';
                break;
            case 'v':
                out += '\v';
                break;
            case 'f':
                out += '\f';
                break;
            case 'x': {
                unsigned v = 0;
                std::size_t k = 0;
                for (; k < 2 && i + 1 < s.size() &&
                       std::isxdigit(static_cast<unsigned char>(s[i + 1]));
                     ++k, ++i)
                    v = v * 16 +
                        static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(s[i + 1]))
                                                  ? s[i + 1] - '0'
                                                  : (s[i + 1] | 0x20) - 'a' + 10);
                if (k == 0) throw LineError("\\x without hex digits");
                out += static_cast<char>(v);
                break;
            }
            default:
                if (c >= '0' && c <= '7') {
                    unsigned v = static_cast<unsigned>(c - '0');
                    for (int k = 0; k < 2 && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7';
                         ++k)
                        v = v * 8 + static_cast<unsigned>(s[++i] - '0');
                    out += static_cast<char>(v);
                } else {
                    out += c;  // \\ and \" and anything strace adds later
                }
        }
    }
    return out;
}

}  // namespace

Line split_line(std::string_view line) {
    Line l;
    std::string_view rest = trim(line);
    if (rest.starts_with("[pid ")) {
        // The form strace uses when its output is not split by -o.
        const std::size_t close = rest.find(']');
        const auto pid = close == std::string_view::npos
                             ? std::nullopt
                             : parse_unsigned(trim(rest.substr(5, close - 5)));
        if (!pid) throw LineError("a [pid N] prefix without a pid");
        l.pid = static_cast<std::uint32_t>(*pid);
        rest = trim(rest.substr(close + 1));
    }
    auto token = [&] { return rest.substr(0, rest.find(' ')); };
    if (!l.pid && all_digits(token()) && token().size() < rest.size()) {
        l.pid = static_cast<std::uint32_t>(*parse_unsigned(token()));
        rest = trim(rest.substr(token().size()));
    }
    if (!rest.empty() && is_digit(rest.front())) {
        const auto t = parse_timestamp(token());
        if (!t) throw LineError(fmt::format("'{}' is neither a pid nor a timestamp", token()));
        l.time_ns = t;
        rest = trim(rest.substr(token().size()));
    }
    // -T: " <0.000012>" at the end.
    if (rest.ends_with('>')) {
        const std::size_t open = rest.rfind('<');
        const std::string_view d = open == std::string_view::npos
                                       ? std::string_view{}
                                       : rest.substr(open + 1, rest.size() - open - 2);
        const std::size_t dot = d.find('.');
        if (dot != std::string_view::npos && all_digits(d.substr(0, dot))) {
            l.duration_ns = seconds_to_ns(d.substr(0, dot), d.substr(dot + 1));
            if (l.duration_ns) rest = trim(rest.substr(0, open));
        }
    }
    if (rest.starts_with("+++")) {
        l.kind = Line::exited;
    } else if (rest.starts_with("---")) {
        l.kind = Line::signal;
    } else if (rest.starts_with("<... ")) {
        const std::size_t r = rest.find(" resumed>");
        if (r == std::string_view::npos) throw LineError("'<...' without 'resumed>'");
        l.kind = Line::resumed;
        l.name = rest.substr(5, r - 5);
        l.text = rest.substr(r + 9);
    } else {
        constexpr std::string_view unfinished = "<unfinished ...>";
        const std::size_t paren = rest.find('(');
        if (paren == std::string_view::npos || paren == 0)
            throw LineError("not a system call, signal or exit line");
        l.name = rest.substr(0, paren);
        for (char c : l.name)
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '?'))
                throw LineError(fmt::format("'{}' is not a system call name", l.name));
        if (rest.ends_with(unfinished)) {
            l.kind = Line::unfinished;
            l.text = rest.substr(0, rest.size() - unfinished.size());
        } else {
            l.text = rest;
        }
    }
    return l;
}

void parse_call(std::string_view text, Call& out) {
    out.args.clear();
    const std::size_t open = text.find('(');
    if (open == std::string_view::npos) throw LineError("no '(' after the call's name");
    out.name = text.substr(0, open);
    int depth = 0;
    std::size_t arg_start = open + 1;
    std::size_t i = open + 1;
    for (;;) {
        if (i >= text.size()) throw LineError("the argument list has no closing ')'");
        const char c = text[i];
        if (c == '"') {
            i = skip_string(text, i);
            continue;
        }
        if (c == '<') {
            i = skip_annotation(text, i);
            continue;
        }
        if (c == '{' || c == '[' || c == '(')
            ++depth;
        else if ((c == '}' || c == ']') && depth > 0)
            --depth;
        else if (c == ')' && depth > 0)
            --depth;
        else if (depth == 0 && (c == ',' || c == ')')) {
            const std::string_view a = trim(text.substr(arg_start, i - arg_start));
            if (!a.empty() || c == ',') out.args.push_back(a);
            arg_start = i + 1;
            if (c == ')') break;
        }
        ++i;
    }
    std::string_view rest = trim(text.substr(i + 1));
    if (!rest.starts_with('=')) throw LineError("no '= result' after the arguments");
    out.result = trim(rest.substr(1));
    if (out.result.empty()) throw LineError("an empty result");
}

std::optional<std::int64_t> parse_number(std::string_view s) {
    s = trim(s);
    bool negative = false;
    if (s.starts_with('-')) {
        negative = true;
        s.remove_prefix(1);
    }
    int base = 10;
    if (s.starts_with("0x")) {
        base = 16;
        s.remove_prefix(2);
    } else if (s.size() > 1 && s.front() == '0') {
        base = 8;
    }
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (s.empty() || ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
    return negative ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
}

std::optional<FdArg> parse_fd(std::string_view arg) {
    arg = trim(arg);
    FdArg f;
    std::size_t n = 0;
    if (arg.starts_with("AT_FDCWD")) {
        f.fd = -100;  // AT_FDCWD
        n = 8;
    } else {
        while (n < arg.size() && (is_digit(arg[n]) || (n == 0 && arg[n] == '-'))) ++n;
        const auto v = parse_number(arg.substr(0, n));
        if (!v) return std::nullopt;
        f.fd = static_cast<int>(*v);
    }
    if (n < arg.size()) {
        if (arg[n] != '<' || !arg.ends_with('>')) return std::nullopt;
        f.annotation = unescape(arg.substr(n + 1, arg.size() - n - 2));
    }
    return f;
}

Result parse_result(std::string_view s) {
    Result r;
    s = trim(s);
    if (s.starts_with('?')) return r;
    std::size_t n = 0;
    while (n < s.size() && (is_digit(s[n]) || s[n] == 'x' || (s[n] >= 'a' && s[n] <= 'f') ||
                            (n == 0 && s[n] == '-')))
        ++n;
    const auto v = parse_number(s.substr(0, n));
    if (!v) throw LineError(fmt::format("the result '{}' is not a number", s));
    r.value = *v;
    std::string_view rest = s.substr(n);
    if (r.value < 0) {
        rest = trim(rest);
        r.error = rest.substr(0, rest.find(' '));
        return r;
    }
    r.ok = true;
    if (rest.starts_with('<')) {
        const std::size_t end = skip_annotation(rest, 0);
        r.annotation = unescape(rest.substr(1, end - 2));
    }
    return r;
}

std::optional<std::string> parse_string(std::string_view arg, bool* truncated) {
    arg = trim(arg);
    if (!arg.starts_with('"')) return std::nullopt;
    const std::size_t end = skip_string(arg, 0);
    if (truncated) *truncated = arg.substr(end).starts_with("...");
    return unescape(arg.substr(1, end - 2));
}

std::optional<std::uint32_t> parse_flags(std::string_view arg, const FlagName* table,
                                         std::size_t n) {
    arg = trim(arg);
    if (arg.empty()) return std::nullopt;
    std::uint32_t v = 0;
    while (!arg.empty()) {
        const std::size_t bar = arg.find('|');
        const std::string_view part = trim(arg.substr(0, bar));
        arg = bar == std::string_view::npos ? std::string_view{} : arg.substr(bar + 1);
        if (const auto num = parse_number(part)) {
            v |= static_cast<std::uint32_t>(*num);
            continue;
        }
        bool known = false;
        for (std::size_t i = 0; i < n && !known; ++i)
            if (table[i].name == part) {
                v |= table[i].value;
                known = true;
            }
        // A name this table lacks (a newer kernel's flag) is not a reason to
        // refuse the line; only text that is no name at all is.
        if (!known)
            for (char c : part)
                if (!(std::isupper(static_cast<unsigned char>(c)) || is_digit(c) || c == '_'))
                    return std::nullopt;
    }
    return v;
}

std::optional<std::string_view> field(std::string_view text, std::string_view key) {
    std::size_t pos = 0;
    while ((pos = text.find(key, pos)) != std::string_view::npos) {
        const bool starts =
            pos == 0 || text[pos - 1] == '{' || text[pos - 1] == ' ' || text[pos - 1] == ',';
        if (starts && pos + key.size() < text.size() && text[pos + key.size()] == '=') {
            const std::size_t v = pos + key.size() + 1;
            std::size_t end = v;
            while (end < text.size() && text[end] != ',' && text[end] != '}' && text[end] != ')')
                ++end;
            return trim(text.substr(v, end - v));
        }
        pos += key.size();
    }
    return std::nullopt;
}

std::optional<std::uint64_t> iovec_length(std::string_view arg) {
    std::uint64_t total = 0;
    bool any = false;
    constexpr std::string_view key = "iov_len=";
    for (std::size_t i = 0; i < arg.size();) {
        if (arg[i] == '"') {
            i = skip_string(arg, i);
            if (arg.substr(i).starts_with("...")) i += 3;  // a cut string, not a cut array
            continue;
        }
        if (arg.substr(i).starts_with("...")) return std::nullopt;  // strace abbreviated the array
        if (arg.substr(i).starts_with(key)) {
            i += key.size();
            std::size_t end = i;
            while (end < arg.size() && arg[end] != '}' && arg[end] != ',') ++end;
            const auto v = parse_number(arg.substr(i, end - i));
            if (!v || *v < 0) return std::nullopt;
            total += static_cast<std::uint64_t>(*v);
            any = true;
            i = end;
            continue;
        }
        ++i;
    }
    if (!any && trim(arg) != "[]") return std::nullopt;
    return total;
}

}  // namespace uringkit::replay::strace
