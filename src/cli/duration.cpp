#include "cli/duration.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace uringkit::cli {

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) noexcept {
    std::size_t i = 0;
    std::uint64_t v = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        if (v > 1'000'000'000) return std::nullopt;
        v = v * 10 + static_cast<std::uint64_t>(text[i++] - '0');
    }
    if (i == 0 || v > 1'000'000'000) return std::nullopt;
    const std::string_view unit = text.substr(i);
    const auto ms = static_cast<std::int64_t>(v);
    if (unit.empty() || unit == "s") return std::chrono::milliseconds(ms * 1000);
    if (unit == "ms") return std::chrono::milliseconds(ms);
    if (unit == "m") return std::chrono::milliseconds(ms * 60000);
    return std::nullopt;
}

std::optional<double> parse_seconds(std::string_view text) noexcept {
    // from_chars: no leading blanks or '+', and the same in every locale.
    if (text.empty() || !((text[0] >= '0' && text[0] <= '9') || text[0] == '.'))
        return std::nullopt;
    double v = 0;
    const auto [end, ec] =
        std::from_chars(text.data(), text.data() + text.size(), v, std::chars_format::fixed);
    if (ec != std::errc()) return std::nullopt;
    const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
    double scale = 0;
    if (unit.empty() || unit == "s")
        scale = 1;
    else if (unit == "ms")
        scale = 1e-3;
    else if (unit == "m")
        scale = 60;
    if (scale == 0 || !std::isfinite(v) || !(v >= 0) || v * scale > 86400) return std::nullopt;
    return v * scale;
}

std::optional<std::vector<std::string>> split_list(std::string_view text) {
    std::vector<std::string> out;
    for (std::size_t start = 0;;) {
        const std::size_t comma = text.find(',', start);
        const std::string_view item = text.substr(
            start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        if (item.empty()) return std::nullopt;
        out.emplace_back(item);
        if (comma == std::string_view::npos) return out;
        start = comma + 1;
    }
}

}  // namespace uringkit::cli
