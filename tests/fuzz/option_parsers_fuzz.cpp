// libFuzzer target for the duration and list parsers of serve and bench
// (util/duration.hpp).  Each answer is checked against what the input says:
// an accepted duration is digits and a known unit and has that value; an
// accepted number of seconds is finite, between 0 and a day; a list
// accepted joins back to the input and has no empty item, a refused one has.
#include "cli/duration.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    if (const auto d = uringkit::cli::parse_duration(text)) {
        std::size_t digits = 0;
        std::uint64_t v = 0;
        while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
            v = v * 10 + static_cast<std::uint64_t>(text[digits++] - '0');
            if (v > 1'000'000'000) std::abort();  // leading zeros are fine, a large value is not
        }
        const std::string_view unit = text.substr(digits);
        if (digits == 0) std::abort();
        const std::uint64_t per = unit == "ms"                    ? 1
                                  : unit == "m"                   ? 60000
                                  : (unit.empty() || unit == "s") ? 1000
                                                                  : 0;
        if (per == 0 || static_cast<std::uint64_t>(d->count()) != v * per) std::abort();
    }

    if (const auto s = uringkit::cli::parse_seconds(text)) {
        if (!(*s >= 0 && *s <= 86400)) std::abort();
        if (text.empty() || text.front() == '-' || text.front() == '+' || text.front() == ' ')
            std::abort();
    }

    const auto list = uringkit::cli::split_list(text);
    bool empty_item = text.empty() || text.front() == ',' || text.back() == ',' ||
                      text.find(",,") != std::string_view::npos;
    if (list.has_value() == empty_item) std::abort();
    if (list) {
        std::string joined;
        for (const std::string& item : *list) {
            if (item.empty() || item.find(',') != std::string::npos) std::abort();
            if (!joined.empty() || &item != &list->front()) joined += ',';
            joined += item;
        }
        if (joined != text) std::abort();
    }
    return 0;
}
