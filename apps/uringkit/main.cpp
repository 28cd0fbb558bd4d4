// uringkit: one binary, one file per subcommand (see command.hpp).
#include "command.hpp"
#include "uringkit/probe/kernel.hpp"
#include "uringkit/version.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <exception>

namespace uringkit::cli {
std::vector<Command>& registry() {
    static std::vector<Command> commands;
    return commands;
}
}  // namespace uringkit::cli

int main(int argc, char** argv) {
    using namespace uringkit::cli;
    CLI::App app{
        "uringkit: Linux io_uring, measured.\n"
        "Probe what io_uring can do here, benchmark it against pread, threads and libaio\n"
        "on your own files, and use it for copying, reading trees and serving.",
        "uringkit"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("uringkit ") + uringkit::version_string);
    auto& commands = registry();
    std::sort(commands.begin(), commands.end(),
              [](const Command& a, const Command& b) { return a.order < b.order; });
    std::vector<std::pair<CLI::App*, std::function<int()>>> actions;
    for (const Command& c : commands) {
        CLI::App* sub = app.add_subcommand(c.name, c.summary);
        actions.emplace_back(sub, c.setup(*sub));
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? kOk : kUsage;
    }
    // Below the minimum every tool still runs where its fallbacks reach; say once that it is untested ground.
    if (const std::string notice = uringkit::probe::below_minimum_notice(uringkit::probe::running_kernel_release());
        !notice.empty())
        fmt::print(stderr, "uringkit: {}\n", notice);
    try {
        for (auto& [sub, action] : actions)
            if (sub->parsed()) return action();
    } catch (const std::exception& e) {
        fmt::print(stderr, "uringkit: {}\n", e.what());
        return kFailure;
    }
    return kUsage;
}
