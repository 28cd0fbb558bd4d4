// Distribution-free statistics for every tool that measures (bench, bench
// net, bench --replay, load): a median with an
// interval from order statistics, which needs no assumption about the shape
// of the run-to-run noise (a busy machine's noise is anything but normal).
//
// With n independent samples of a quantity whose median is M, the interval
// [x(k), x(n+1-k)] between the k-th smallest and the k-th largest covers M
// with probability 1 - 2 P(Binomial(n, 1/2) <= k-1).  For k = 1 (min-max)
// that is 1 - 2^(1-n): 3 samples 75%, 5 samples 94%, 11 samples 99.9%.
// docs/bench.md states how the benchmark uses these intervals.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace uringkit::measure {

// P(the order-statistic interval of rank k covers the median) for n samples;
// 0 when k is 0 or the interval is empty (2k > n + 1).
double order_interval_coverage(unsigned n, unsigned k) noexcept;

// The widest-ranked (narrowest) interval that still covers the median with
// probability >= confidence: the largest k, or 0 when even min-max falls short.
unsigned order_interval_rank(unsigned n, double confidence) noexcept;

// The fewest samples whose min-max covers the median with probability >= confidence.
unsigned samples_needed(double confidence) noexcept;

// A median with its interval.  `covered` is false when there are too few
// samples for the confidence asked: low and high are then the min and max,
// which cover the median with less than that.
struct Estimate {
    double median = 0, low = 0, high = 0;
    unsigned n = 0;
    bool covered = false;
};

double median_of(std::vector<double> values);
// The median with the smallest and largest value: the run-to-run spread a
// table shows beside the interval.
struct Spread {
    double median = 0, min = 0, max = 0;
    unsigned n = 0;
};
Spread spread_of(std::vector<double> values);
Estimate median_interval(std::vector<double> values, double confidence);

}  // namespace uringkit::measure
