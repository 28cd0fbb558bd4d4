// The header of every JSON document the tools write (docs/json.md):
//   {"schema": N, "tool": "uringkit bench", "version": "0.1.0", "host": {...}, ...}
// A figure means little without the kernel and the CPU it came from, and a
// reader should find them in the same place whichever tool wrote it.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace uringkit::document {

// What the machine is, never who it is: no hostname, no user, no address.
struct Machine {
    std::string kernel;          // uname -r
    std::string arch;            // uname -m
    std::string cpu_model;       // /proc/cpuinfo "model name"; empty where it has none
    unsigned cores = 0;          // online CPUs
    int io_uring_disabled = -1;  // /proc/sys/kernel/io_uring_disabled (6.6+); -1: not present
    std::string loadavg;         // /proc/loadavg's 1, 5 and 15 minute figures when read
};

Machine describe_machine();

// The "host" object of the header.
nlohmann::ordered_json machine_json(const Machine& m);

// A document holding only the header, in its order; the tool adds its own
// fields after it.  `schema` is the tool's document version: raised when a
// field changes meaning or goes away, never for an added one.
nlohmann::ordered_json header(std::string_view tool, int schema, const Machine& m);
nlohmann::ordered_json header(std::string_view tool, int schema);

}  // namespace uringkit::document
