// `uringkit bench net`, a subcommand of bench (bench.cpp adds it).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace uringkit::cli {

// Adds bench net's options to `app` and returns its action.
std::function<int()> setup_bench_net(CLI::App& app);

}  // namespace uringkit::cli
