#include "fs/xxhsum_check.hpp"

namespace uringkit::fs {
namespace {

int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// The digits as xxhsum's canonical form (big-endian bytes; reversed when
// `little_endian`), into the value print_hash_line() would print them from.
bool parse_hex(std::string_view hex, HashAlgo algo, bool little_endian, HashValue& out) {
    const std::size_t n = hex.size() / 2;
    if (hex.size() != hash_hex_digits(algo)) return false;
    unsigned char bytes[16];
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t j = little_endian ? n - 1 - i : i;
        const int h0 = hex_value(hex[2 * j]), h1 = hex_value(hex[2 * j + 1]);
        if (h0 < 0 || h1 < 0) return false;
        bytes[i] = static_cast<unsigned char>(h0 << 4 | h1);
    }
    const auto be = [&](std::size_t from, std::size_t len) {
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < len; ++i) v = v << 8 | bytes[from + i];
        return v;
    };
    if (algo == HashAlgo::xxh128)
        out = {be(8, 8), be(0, 8)};
    else
        out = {be(0, n), 0};
    return true;
}

// xxhsum 0.8.2's escaped names: "\\" and "\n" (and "\r", as coreutils).
bool unescape(std::string& name) {
    std::string out;
    out.reserve(name.size());
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (name[i] != '\\') {
            out += name[i];
            continue;
        }
        if (++i == name.size()) return false;
        switch (name[i]) {
            case '\\':
                out += '\\';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            default:
                return false;
        }
    }
    name = std::move(out);
    return true;
}

}  // namespace

std::optional<CheckLine> parse_check_line(std::string_view line, bool little_endian) {
    const bool escaped = !line.empty() && line[0] == '\\';
    if (escaped) line.remove_prefix(1);
    if (line.find('\0') != std::string_view::npos) return std::nullopt;
    const std::size_t first = line.find(' ');
    if (first == std::string_view::npos || first + 1 == line.size()) return std::nullopt;
    CheckLine c;
    std::string_view hex;
    bool rev = little_endian;
    if (line[first + 1] == '(') {
        const std::size_t last = line.rfind(' ');
        if (last - first < 5 || line[last - 1] != '=' || line[last - 2] != ' ' ||
            line[last - 3] != ')')
            return std::nullopt;
        const std::string_view tag = line.substr(0, first);
        rev = tag.find("_LE") != std::string_view::npos;
        c.algo = tag.starts_with("XXH32")    ? HashAlgo::xxh32
                 : tag.starts_with("XXH128") ? HashAlgo::xxh128
                 : tag.starts_with("XXH3")   ? HashAlgo::xxh3
                                             : HashAlgo::xxh64;
        c.name = line.substr(first + 2, last - 3 - (first + 2));
        hex = line.substr(last + 1);
    } else {
        hex = line.substr(0, first);
        if (hex.size() == 21 && hex.starts_with("XXH3_")) {
            c.algo = HashAlgo::xxh3;
            hex.remove_prefix(5);
        } else {
            c.algo = hex.size() == 8    ? HashAlgo::xxh32
                     : hex.size() == 32 ? HashAlgo::xxh128
                                        : HashAlgo::xxh64;
        }
        // The character after the space may be anything ('*' for binary, as
        // coreutils writes): the name starts after it.
        c.name = line.substr(first + 2);
    }
    if (!parse_hex(hex, c.algo, rev, c.expected)) return std::nullopt;
    if (escaped && !unescape(c.name)) return std::nullopt;
    return c;
}

}  // namespace uringkit::fs
