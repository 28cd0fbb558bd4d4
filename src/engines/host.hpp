// The machine and the file's storage, recorded with every result: a figure
// means little without the kernel, the CPU and the filesystem it came from.
#pragma once

#include <string>

namespace uringkit::engines {

struct Host {
    std::string kernel;          // uname -r
    std::string cpu_model;       // /proc/cpuinfo "model name"
    unsigned cores = 0;          // online CPUs
    int io_uring_disabled = -1;  // /proc/sys/kernel/io_uring_disabled (6.6+); -1: not present
    std::string filesystem;      // of the benchmarked file, from /proc/self/mountinfo
    std::string device;          // the mount's source, e.g. /dev/vda
    std::string mount_point;
    std::string loadavg;  // /proc/loadavg's 1, 5 and 15 minute figures when the run started
};

Host describe_host(const std::string& path);

}  // namespace uringkit::engines
