#include "measure/histogram.hpp"

#include <algorithm>
#include <cmath>

namespace uringkit::measure {

void LatencyHistogram::merge(const LatencyHistogram& o) noexcept {
    for (unsigned i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
    count_ += o.count_;
    sum_ += o.sum_;
    max_ = std::max(max_, o.max_);
    min_ = std::min(min_, o.min_);
}

void LatencyHistogram::reset() noexcept {
    std::fill(counts_.get(), counts_.get() + kBuckets, 0);
    count_ = sum_ = max_ = 0;
    min_ = UINT64_MAX;
}

double LatencyHistogram::quantile(double q) const noexcept {
    if (count_ == 0) return 0.0;
    q = std::clamp(q, 0.0, 1.0);
    // The rank of the wanted value, 1-based: the smallest value with at least
    // q of all values at or below it.
    const auto rank = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_))));
    std::uint64_t seen = 0;
    for (unsigned i = 0; i < kBuckets; ++i) {
        seen += counts_[i];
        if (seen >= rank) {
            const double mid = i < kSub ? static_cast<double>(i)
                                        : (static_cast<double>(bucket_low(i)) +
                                           static_cast<double>(bucket_high(i) - 1)) /
                                              2.0;
            return std::clamp(mid, static_cast<double>(min()), static_cast<double>(max_));
        }
    }
    return static_cast<double>(max_);
}

}  // namespace uringkit::measure
