// `uringkit readfiles --check LIST...`: verify the lines of xxhsum checksum
// lists, reading the files they name on the ring, output as xxhsum 0.8.1 -c.
#pragma once

#include "fs/readfiles.hpp"

#include <string>
#include <vector>

namespace uringkit::cli {

struct CheckFlags {
    bool quiet = false;              // no "name: OK" lines
    bool status = false;             // nothing printed: the exit status says it
    bool strict = false;             // a badly formatted line makes the status 1
    bool warn = false;               // a line on stderr for each badly formatted line
    bool ignore_missing = false;     // a missing file is neither reported nor a failure
    bool little_endian = false;      // GNU-style lines hold little-endian digits
    const char* tool = "readfiles";  // "uringkit TOOL: " before a list that cannot be read
};

// Checks each list ("-": stdin, named "stdin" in messages as xxhsum does)
// with `read` (algo and walk are set per group of lines).  Returns 0 when
// every list had a properly formatted line and every file read and matched,
// 1 otherwise.
int run_check(const std::vector<std::string>& lists, const CheckFlags& flags,
              fs::ReadFilesOptions read);

}  // namespace uringkit::cli
