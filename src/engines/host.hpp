// The machine and the file's storage, recorded with every result: a figure
// means little without the kernel, the CPU and the filesystem it came from.
// The machine part is every tool's (document/header.hpp); the storage is
// bench's own.
#pragma once

#include "document/header.hpp"
#include "engines/ceiling.hpp"

#include <string>

namespace uringkit::engines {

struct Host : document::Machine {
    std::string filesystem;  // of the benchmarked file, from /proc/self/mountinfo
    std::string device;      // the mount's source, e.g. /dev/vda
    std::string mount_point;
    // What removing system calls could give here (measure_ceiling, at the
    // start of the run); unmeasured until bench sets it.
    Ceiling ceiling;
};

// The machine as the run starts (its load average then), and where `path` lives.
Host describe_host(const std::string& path);

}  // namespace uringkit::engines
