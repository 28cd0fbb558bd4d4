#include "document/header.hpp"

#include "uringkit/version.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>

namespace uringkit::document {

Machine describe_machine() {
    Machine m;
    utsname u{};
    if (::uname(&u) == 0) {
        m.kernel = u.release;
        m.arch = u.machine;
    }
    const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
    m.cores = online > 0 ? static_cast<unsigned>(online) : 0;
    {
        std::ifstream in("/proc/cpuinfo");
        std::string line;
        while (std::getline(in, line))
            if (line.rfind("model name", 0) == 0) {
                const auto colon = line.find(':');
                const auto start = line.find_first_not_of(' ', colon + 1);
                if (colon != std::string::npos && start != std::string::npos)
                    m.cpu_model = line.substr(start);
                break;
            }
    }
    {
        std::ifstream in("/proc/sys/kernel/io_uring_disabled");
        int v;
        if (in >> v) m.io_uring_disabled = v;
    }
    {
        std::ifstream in("/proc/loadavg");
        std::string a, b, c;
        if (in >> a >> b >> c) m.loadavg = a + " " + b + " " + c;
    }
    return m;
}

nlohmann::ordered_json machine_json(const Machine& m) {
    using nlohmann::ordered_json;
    ordered_json j;
    j["kernel"] = m.kernel;
    j["arch"] = m.arch;
    j["cpu_model"] = m.cpu_model;
    j["cores"] = m.cores;
    j["io_uring_disabled"] =
        m.io_uring_disabled < 0 ? ordered_json(nullptr) : ordered_json(m.io_uring_disabled);
    j["loadavg"] = m.loadavg;
    return j;
}

nlohmann::ordered_json header(std::string_view tool, int schema, const Machine& m) {
    nlohmann::ordered_json j;
    j["schema"] = schema;
    j["tool"] = std::string(tool);
    j["version"] = std::string(version_string);
    j["host"] = machine_json(m);
    return j;
}

nlohmann::ordered_json header(std::string_view tool, int schema) {
    return header(tool, schema, describe_machine());
}

}  // namespace uringkit::document
