// How bench writes a figure in its text outputs (the table, the progress
// line): short, and with the digits that the run's noise leaves meaningful.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace uringkit::engines::detail {

// Three significant figures: 0.412, 4.12, 41.2, 412, 4120.
inline std::string sig3(double v) {
    if (v == 0) return "0";
    const double a = std::fabs(v);
    if (a < 1) return fmt::format("{:.3f}", v);
    if (a < 10) return fmt::format("{:.2f}", v);
    if (a < 100) return fmt::format("{:.1f}", v);
    return fmt::format("{:.0f}", v);
}

// A count: 812, 81.2k, 1.20M.
inline std::string count(double v) {
    if (v >= 1e6) return fmt::format("{:.2f}M", v / 1e6);
    if (v >= 1e4) return fmt::format("{:.1f}k", v / 1e3);
    return fmt::format("{:.0f}", v);
}

}  // namespace uringkit::engines::detail
