// Durations and lists as people write them on a command line: serve's
// --idle-timeout ("30", "30s", "500ms", "2m"), bench's --runtime and --ramp
// ("2", "1.5", "500ms", "1m") and its comma lists ("1,8,32").
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace uringkit::cli {

// Whole numbers with an optional unit: none or "s" (seconds), "ms", "m".
// nullopt for anything else: no digits, another unit, a sign, a fraction,
// or more than 10^9 of the unit.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) noexcept;

// Seconds as a decimal, with an optional unit: none or "s", "ms", "m".
// nullopt for anything else: no number, a sign, another unit, NaN or
// infinity, or more than a day (86400 s).
std::optional<double> parse_seconds(std::string_view text) noexcept;

// "1,8,32" -> {"1", "8", "32"}.  nullopt when an item is empty ("", "1,,2",
// ",1", "1,"): such an item is a mistake to report, never one to skip.
std::optional<std::vector<std::string>> split_list(std::string_view text);

}  // namespace uringkit::cli
