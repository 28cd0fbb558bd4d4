// Steady state of a run: were its completions still speeding up or slowing
// down (page cache filling, a device's write cliff) while it was measured?
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace uringkit::measure {

// Steady state.  A run's completions are counted in windows of
// kSteadyWindowS; a least-squares line through the windows' IOPS says whether
// the rate was still moving (page cache filling, a device's write cliff).
// Judged only for runs long enough that the windows' own scatter cannot pass
// for a trend: at least kSteadyMinWindows windows of at least
// kSteadyMinWindowIos I/Os each.  Trending means the fitted line moves by at
// least kSteadyMaxChange of the mean over the run AND its slope is at least
// 4 standard errors from zero.
constexpr double kSteadyWindowS = 0.05;
constexpr unsigned kSteadyMinWindows = 8;
constexpr std::uint64_t kSteadyMinWindowIos = 100;
constexpr double kSteadyMaxChange = 0.10;

struct Window {
    double seconds = 0;  // length of the window
    std::uint64_t ios = 0;
};

struct Steadiness {
    enum Kind { not_assessed, steady, trending } kind = not_assessed;
    double slope = 0;  // change of IOPS per second, as a fraction of the mean (trending and steady)
    double change = 0;  // change of the fitted line over the run, as a fraction of the mean
    std::string why;    // not_assessed: why
};

Steadiness assess_steadiness(const std::vector<Window>& windows);

}  // namespace uringkit::measure
