#include "measure/interval.hpp"

#include <algorithm>
#include <cmath>

namespace uringkit::measure {

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

Spread spread_of(std::vector<double> v) {
    Spread s;
    s.n = static_cast<unsigned>(v.size());
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    s.min = v.front();
    s.max = v.back();
    s.median = median_of(std::move(v));
    return s;
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

}  // namespace uringkit::measure
