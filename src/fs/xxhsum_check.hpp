// The lines of an xxhsum checksum list, as `xxhsum -c` 0.8.1 reads them
// (`readfiles --check`):
//
//   <8, 16 or 32 hex digits><space><any character><name>        GNU style
//   <TAG>[_LE] (<name>) = <hex digits>                           BSD style
//
// GNU lines are told apart by the length of the hash (XXH32, XXH64,
// XXH128); a BSD line by its tag: XXH32..., XXH128..., XXH3... (XXH3, 64
// bits), anything else XXH64, and the length must match.  A tag holding
// "_LE" means the digits are little-endian; GNU lines are when the list was
// made with --little-endian (the caller says).  Upper-case digits are fine.
// Accepted beyond 0.8.1, as xxhsum 0.8.2 writes them: a GNU hash
// "XXH3_<16 digits>" (XXH3), and a line that starts with a backslash, whose
// name has "\\", "\n" (and "\r") escaped.
#pragma once

#include "fs/readfiles_hash.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace uringkit::fs {

struct CheckLine {
    HashAlgo algo = HashAlgo::xxh64;
    HashValue expected;
    std::string name;
};

// One line, without its '\n'.  nullopt: improperly formatted.
std::optional<CheckLine> parse_check_line(std::string_view line, bool little_endian);

}  // namespace uringkit::fs
