// What a tool wrote on stderr, as a test counts it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

// The lines of `err` that say something: the "Try 'uringkit CMD --help'
// for more information." hint after a usage error is not counted, so "one
// line" means one line naming the problem.
inline std::size_t diagnostic_lines(std::string_view err) {
    std::size_t lines = 0;
    while (!err.empty()) {
        const std::size_t end = err.find('\n');
        const std::string_view line = err.substr(0, end);
        if (line.rfind("Try 'uringkit", 0) != 0) ++lines;
        if (end == std::string_view::npos) break;
        err.remove_prefix(end + 1);
    }
    return lines;
}
