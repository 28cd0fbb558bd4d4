// Each subcommand lives in its own file and registers itself here with a
// static Command object; main.cpp builds the CLI from the registry.
#pragma once

#include "cli/duration.hpp"

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace uringkit::cli {

// Exit statuses shared by every subcommand (documented in the README).
enum Exit : int {
    kOk = 0,
    kFailure = 1,       // the job ran and something failed (a file, an engine, a write)
    kUsage = 2,         // bad option or argument: nothing was done
    kNoUring = 3,       // io_uring is not usable here (probe; a tool that has no fallback)
    kBadInput = 4,      // an input file or directory is missing, unreadable or unsuitable
    kNoSpace = 5,       // ENOSPC/EFBIG/EDQUOT while writing
    kInterrupted = 130  // SIGINT/SIGTERM; what was done so far was reported
};

// A bad option value, found after parsing: the subcommand prints
// "uringkit NAME: MESSAGE" and returns kUsage.
struct UsageError {
    std::string message;
};

// A bad option or value: "uringkit CMD: MESSAGE" and "Try 'uringkit CMD
// --help' ...", the one style of every usage error; returns kUsage.
int usage_error(const std::string& cmd, std::string message);

// "1,8,32" -> {"1", "8", "32"}; an empty item ("1,,2", "1,") is a usage
// error naming `opt`, never skipped.
inline std::vector<std::string> split_option(const char* opt, const std::string& text,
                                             const char* example) {
    auto items = cli::split_list(text);
    if (!items)
        throw UsageError{
            fmt::format("{} {}: an empty item in the list; give items between commas, like {}", opt,
                        text.empty() ? "''" : text, example)};
    return std::move(*items);
}

// A subcommand: `setup` adds its options to `app` and returns the action to run
// when the subcommand is chosen (the action returns an exit status).
struct Command {
    const char* name;
    const char* summary;
    int order;  // position in `uringkit --help`
    std::function<std::function<int()>(CLI::App& app)> setup;
    // The status of a command line it cannot run: kUsage, or 1 for a tool
    // whose scripts expect its peer's (coreutils' cp exits 1).
    int usage_status = kUsage;
    // Long options may be shortened to any unambiguous start (`--parent`,
    // `--b=simple`), as getopt_long allows: for drop-ins of GNU tools.
    bool abbreviations = false;
    // With `abbreviations`: the peer's own long options, space-separated.  A
    // start that fits one of them and options of uringkit's own is taken as
    // the peer's (`cp --b=simple` is --backup, not --bs), as a script written
    // for the peer meant it.
    const char* peer_options = "";
};

std::vector<Command>& registry();

// A subcommand that takes its arguments by another tool's rules, which
// CLI11 cannot express (xxhsum 0.8.1's: options end at the first file name,
// `-H` alone is -H0, `-cq` and `-H3` are single words): its setup still
// declares the options, for --help, the man page and the completions, and
// calls this with where the words go.  main() then puts there the words
// after the subcommand's name instead of parsing them, and leaves
// --version to the subcommand.
void take_own_arguments(std::vector<std::string>* words) noexcept;

struct Register {
    explicit Register(Command c) { registry().push_back(std::move(c)); }
};

}  // namespace uringkit::cli
