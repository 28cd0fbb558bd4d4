#include "engines/stats.hpp"

#include <algorithm>
#include <cmath>

namespace uringkit::engines {

double order_interval_coverage(unsigned n, unsigned k) noexcept {
    if (k == 0 || 2 * k > n + 1) return 0;
    // P(Binomial(n, 1/2) <= k-1), summed in logs so that n in the thousands
    // neither overflows the binomial coefficients nor underflows 2^-n.
    double tail = 0;
    for (unsigned i = 0; i < k; ++i)
        tail += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) -
                         n * std::log(2.0));
    return std::max(0.0, 1 - 2 * tail);
}

unsigned order_interval_rank(unsigned n, double confidence) noexcept {
    unsigned best = 0;
    for (unsigned k = 1; 2 * k <= n + 1; ++k) {
        if (order_interval_coverage(n, k) < confidence) break;
        best = k;
    }
    return best;
}

unsigned samples_needed(double confidence) noexcept {
    unsigned n = 1;
    while (order_interval_coverage(n, 1) < confidence && n < 4096) ++n;
    return n;
}

double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

Estimate median_interval(std::vector<double> v, double confidence) {
    Estimate e;
    e.n = static_cast<unsigned>(v.size());
    if (v.empty()) return e;
    std::sort(v.begin(), v.end());
    e.median = median_of(v);
    const unsigned k = order_interval_rank(e.n, confidence);
    e.covered = k > 0;
    const unsigned rank = k ? k : 1;
    e.low = v[rank - 1];
    e.high = v[e.n - rank];
    return e;
}

}  // namespace uringkit::engines

namespace uringkit::engines {

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

}  // namespace uringkit::engines
