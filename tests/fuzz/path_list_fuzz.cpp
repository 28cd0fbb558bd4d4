// libFuzzer target for the path-list reader (`readfiles -` and `-0`) and
// the PathList arena the walkers keep names in.  The first byte picks the
// separator (odd: NUL, even: newline).  Beyond memory safety: no entry is
// empty or holds the separator, the entries joined with it give the input
// without its empty entries, and the arena gives every name back intact.
#include "fs/path_list.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const char sep = (data[0] & 1) ? '\0' : '\n';
    const std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
    uringkit::fs::PathList list;
    uringkit::fs::append_path_list(in, sep, list);
    std::vector<std::string> paths;
    for (std::size_t i = 0; i < list.size(); ++i) {
        // The arena gives every name back intact and NUL-terminated.
        if (list.c_str(i)[list[i].size()] != '\0') std::abort();
        paths.emplace_back(list[i]);
    }

    std::string joined, expected;
    for (const std::string& p : paths) {
        if (p.empty() || p.find(sep) != std::string::npos) std::abort();
        joined += p;
        joined += sep;
    }
    // The input with runs of separators squeezed, leading ones dropped and
    // one at the end.
    bool at_start = true;
    for (char c : in) {
        if (c == sep) {
            if (!at_start) expected += sep;
            at_start = true;
        } else {
            expected += c;
            at_start = false;
        }
    }
    if (!at_start) expected += sep;
    if (joined != expected) std::abort();
    return 0;
}
