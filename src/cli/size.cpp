#include "cli/size.hpp"

#include <array>
#include <cctype>
#include <cstdio>
#include <limits>

namespace uringkit::cli {

std::optional<std::uint64_t> parse_size(std::string_view text) noexcept {
    std::size_t i = 0;
    std::uint64_t value = 0;
    if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
        const std::uint64_t digit = static_cast<std::uint64_t>(text[i] - '0');
        if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return std::nullopt;
        value = value * 10 + digit;
    }
    // A decimal fraction, as fio takes it ("1.5m"): kept as fraction/scale
    // so the result is exact, and only a whole number of bytes is a size.
    std::uint64_t fraction = 0, scale = 1;
    if (i < text.size() && text[i] == '.') {
        ++i;
        const std::size_t first = i;
        for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
            // Seven digits: fraction < 2^24, so fraction << 40 fits in 64 bits.
            if (i - first >= 7) return std::nullopt;
            fraction = fraction * 10 + static_cast<std::uint64_t>(text[i] - '0');
            scale *= 10;
        }
        if (i == first) return std::nullopt;  // "1." is a typo, not a size
    }
    std::string_view suffix = text.substr(i);
    unsigned shift = 0;
    if (!suffix.empty()) {
        switch (std::tolower(static_cast<unsigned char>(suffix[0]))) {
            case 'k':
                shift = 10;
                break;
            case 'm':
                shift = 20;
                break;
            case 'g':
                shift = 30;
                break;
            case 't':
                shift = 40;
                break;
            case 'b':
                shift = 0;
                break;
            default:
                return std::nullopt;
        }
        if (std::tolower(static_cast<unsigned char>(suffix[0])) != 'b') suffix.remove_prefix(1);
        // Accept "", "b", "ib" after the multiplier.
        if (suffix == "iB" || suffix == "ib" || suffix == "IB" || suffix == "Ib")
            suffix = {};
        else if (suffix == "b" || suffix == "B")
            suffix = {};
        if (!suffix.empty()) return std::nullopt;
    }
    if (shift && value > (std::numeric_limits<std::uint64_t>::max() >> shift)) return std::nullopt;
    const std::uint64_t part = fraction << shift;
    if (part % scale != 0) return std::nullopt;  // 0.1k is 102.4 bytes
    const std::uint64_t extra = part / scale;
    const std::uint64_t whole = value << shift;
    if (whole > std::numeric_limits<std::uint64_t>::max() - extra) return std::nullopt;
    return whole + extra;
}

std::string format_bytes(std::uint64_t bytes) {
    static constexpr std::array<const char*, 5> units = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    std::size_t u = 0;
    while (v >= 1024.0 && u + 1 < units.size()) {
        v /= 1024.0;
        ++u;
    }
    char out[32];
    if (u == 0 || v == static_cast<double>(static_cast<std::uint64_t>(v)))
        std::snprintf(out, sizeof out, "%llu %s", static_cast<unsigned long long>(v), units[u]);
    else
        std::snprintf(out, sizeof out, "%.1f %s", v, units[u]);
    return out;
}

}  // namespace uringkit::cli
