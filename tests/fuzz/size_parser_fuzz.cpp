// libFuzzer target for cli::parse_size (every --bs/--size/--body-size
// option).  Beyond memory safety: a size it accepts starts with a digit,
// reads back the same from its decimal form and from the largest binary
// suffix that divides it, and format_bytes never fails on it.
#include "cli/size.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using uringkit::cli::parse_size;
    const std::string_view in(reinterpret_cast<const char*>(data), size);
    const auto v = parse_size(in);
    if (!v) return 0;
    if (in.empty() || in[0] < '0' || in[0] > '9') std::abort();
    if (parse_size(std::to_string(*v)) != v) std::abort();
    static const char suffix[] = {'t', 'g', 'm', 'k'};
    for (int i = 0; i < 4; ++i) {
        const unsigned shift = 40u - 10u * static_cast<unsigned>(i);
        if (*v != 0 && (*v & ((std::uint64_t{1} << shift) - 1)) == 0) {
            if (parse_size(std::to_string(*v >> shift) + suffix[i]) != v) std::abort();
            if (parse_size(std::to_string(*v >> shift) + static_cast<char>(suffix[i] - 32) +
                           "iB") != v)
                std::abort();
            break;
        }
    }
    if (uringkit::cli::format_bytes(*v).empty()) std::abort();
    return 0;
}
