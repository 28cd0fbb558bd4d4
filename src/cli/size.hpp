// Sizes as people write them on a command line ("4k", "256m", "1g", "512"):
// binary multiples, as fio and dd read them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace uringkit::cli {

// Parses a non-negative size with an optional k/m/g/t suffix (any case,
// optional trailing "b"/"ib": 4k, 4K, 4KiB) and an optional decimal fraction
// as fio takes it (1.5m = 1572864).  nullopt for anything else: overflow, or
// a fraction that is not a whole number of bytes (0.1k).
std::optional<std::uint64_t> parse_size(std::string_view text) noexcept;

// 4096 -> "4 KiB", 1610612736 -> "1.5 GiB", 100 -> "100 B".
std::string format_bytes(std::uint64_t bytes);

}  // namespace uringkit::cli
