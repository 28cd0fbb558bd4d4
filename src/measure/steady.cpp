#include "measure/steady.hpp"

#include <cmath>

namespace uringkit::measure {

Steadiness assess_steadiness(const std::vector<Window>& windows) {
    Steadiness s;
    if (windows.size() < kSteadyMinWindows) {
        s.why = "shorter than " + std::to_string(kSteadyMinWindows) + " windows of " +
                std::to_string(static_cast<int>(kSteadyWindowS * 1000)) + " ms";
        return s;
    }
    for (const Window& w : windows)
        if (w.ios < kSteadyMinWindowIos || w.seconds <= 0) {
            s.why = "with fewer than " + std::to_string(kSteadyMinWindowIos) + " I/Os in a window";
            return s;
        }
    // Least squares of rate against the window's mid-time.
    const double n = static_cast<double>(windows.size());
    std::vector<double> t, y;
    double at = 0;
    for (const Window& w : windows) {
        t.push_back(at + w.seconds / 2);
        y.push_back(static_cast<double>(w.ios) / w.seconds);
        at += w.seconds;
    }
    double mt = 0, my = 0;
    for (std::size_t i = 0; i < t.size(); ++i) mt += t[i], my += y[i];
    mt /= n;
    my /= n;
    double sxx = 0, sxy = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
        sxx += (t[i] - mt) * (t[i] - mt);
        sxy += (t[i] - mt) * (y[i] - my);
    }
    const double b = sxx > 0 ? sxy / sxx : 0;
    double sse = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
        const double r = y[i] - (my + b * (t[i] - mt));
        sse += r * r;
    }
    const double se = sxx > 0 ? std::sqrt(sse / (n - 2) / sxx) : 0;
    s.slope = my > 0 ? b / my : 0;
    s.change = s.slope * at;
    const bool significant = se == 0 ? b != 0 : std::fabs(b) >= 4 * se;
    s.kind = std::fabs(s.change) >= kSteadyMaxChange && significant ? Steadiness::trending
                                                                    : Steadiness::steady;
    return s;
}

}  // namespace uringkit::measure
