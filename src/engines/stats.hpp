// Distribution-free statistics for `uringkit bench`: a median with an
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

namespace uringkit::engines {

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
Estimate median_interval(std::vector<double> values, double confidence);

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
    double slope = 0;   // change of IOPS per second, as a fraction of the mean (trending and steady)
    double change = 0;  // change of the fitted line over the run, as a fraction of the mean
    std::string why;    // not_assessed: why
};

Steadiness assess_steadiness(const std::vector<Window>& windows);

}  // namespace uringkit::engines
