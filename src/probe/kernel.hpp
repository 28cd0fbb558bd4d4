// The kernels uringkit supports: the stated minimum and, per io_uring feature
// the library and tools use, the kernel release that brought it and what
// happens without it.  The README's feature table and `probe --json`'s
// `needs` come from this one list.
//
// The minimum is 6.1, Debian 12's kernel: the oldest long-term kernel of a
// current distribution, and the oldest the suite runs on (`make
// test-kernels`).  Everything the fast paths are built around is in it
// (sparse file tables 5.19, multishot recv 6.0, DEFER_TASKRUN 6.1); every
// feature newer than it is tried before use and has a fallback.  Below 6.1
// the tools still run where their fallbacks reach, untested, and say so.
#pragma once

#include <compare>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace uringkit::probe {

struct KernelVersion {
    unsigned major = 0;
    unsigned minor = 0;
    auto operator<=>(const KernelVersion&) const = default;
    std::string str() const;  // "6.1"
};

inline constexpr KernelVersion kMinKernel{6, 1};

// "6.1.0-57-amd64" -> 6.1; empty when the release does not start with MAJOR.MINOR.
std::optional<KernelVersion> parse_kernel_release(std::string_view release) noexcept;

// uname -r of the running kernel.
std::string running_kernel_release();

struct FeatureNeed {
    const char* name;     // a probe trial's name where one tries it, else the feature
    KernelVersion needs;  // the release that brought it
    const char* used_by;  // who relies on it
    const char* without;  // what happens on a kernel without it
};

// Every io_uring feature the library and tools use, oldest first.
std::span<const FeatureNeed> feature_needs() noexcept;

// The release a named feature (or probe trial) needs; empty for unknown names.
std::optional<KernelVersion> feature_need(std::string_view name) noexcept;

// One line for a kernel older than kMinKernel ("kernel 5.15.0 is older than
// 6.1, ..."); empty when the release is at least the minimum or unparsable.
std::string below_minimum_notice(std::string_view release);

}  // namespace uringkit::probe
