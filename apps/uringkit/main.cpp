// uringkit: one binary, one file per subcommand (see command.hpp).
#include "command.hpp"
#include "console.hpp"
#include "probe/kernel.hpp"
#include "uringkit/version.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <sstream>
#include <string_view>

namespace uringkit::cli {
std::vector<Command>& registry() {
    static std::vector<Command> commands;
    return commands;
}
}  // namespace uringkit::cli

namespace {
// The first argument that is not an option: the subcommand, if any (the
// top level has only --help and --version, which take no value).
std::string_view named_subcommand(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (argv[i][0] != '-') return argv[i];
    return {};
}
}  // namespace

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
    // Only the subcommand named on the command line gets its options: the
    // others are a name and a summary for `uringkit --help`.  Building every
    // option of every subcommand (CLI11 checks each new name against all the
    // others) was half of the process's own start-up time, and a copy of a
    // small file or a reflink is mostly start-up (cp --version: 1.9 ms
    // against coreutils' 1.2 ms, measured with perf stat -r 200).
    const std::string_view chosen = named_subcommand(argc, argv);
    std::vector<std::pair<CLI::App*, std::function<int()>>> actions;
    for (const Command& c : commands) {
        CLI::App* sub = app.add_subcommand(c.name, c.summary);
        if (chosen == c.name) {
            set_tool_name(c.name);
            actions.emplace_back(sub, c.setup(*sub));
        }
    }
    // Every way out goes through finish_output(): --help and --version
    // write to standard output too, and a failed write is not a success.
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // Gathered and written through the console, so that a failed write
        // of --help names its errno like any other.
        std::ostringstream out, err;
        const int code = app.exit(e, out, err);
        put(stdout, out.str());
        put(stderr, err.str());
        return finish_output(code == 0 ? kOk : kUsage);
    }
    // Below the minimum every tool still runs where its fallbacks reach; say once that it is
    // untested ground.
    if (const std::string notice =
            uringkit::probe::below_minimum_notice(uringkit::probe::running_kernel_release());
        !notice.empty())
        emit(stderr, "uringkit: {}\n", notice);
    int status = kUsage;
    try {
        for (auto& [sub, action] : actions)
            if (sub->parsed()) {
                status = action();
                break;
            }
    } catch (const std::bad_alloc&) {
        emit(stderr, "uringkit {}: out of memory\n", chosen);
        status = kFailure;
    } catch (const std::exception& e) {
        emit(stderr, "uringkit {}: {}\n", chosen, e.what());
        status = kFailure;
    }
    return finish_output(status);
}
