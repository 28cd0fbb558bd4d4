// The latency histogram: every value lands in a bucket less than 1% wide, and
// the quantiles it reports are within 1% of the exact ones.
#include "engines/workload.hpp"
#include "measure/histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace uringkit::engines;
using namespace uringkit::measure;

TEST(BenchHistogram, BucketsAreNarrowerThanOnePercent) {
    std::uint64_t seed = 7;
    for (int i = 0; i < 200000; ++i) {
        // Every magnitude the histogram covers: 0 to 2^43 ns (2.4 hours).
        const std::uint64_t v = splitmix64(seed) >> (splitmix64(seed) % 43 + 21);
        const unsigned b = LatencyHistogram::index(v);
        const std::uint64_t lo = LatencyHistogram::bucket_low(b),
                            hi = LatencyHistogram::bucket_high(b);
        ASSERT_LE(lo, v) << v;
        ASSERT_LT(v, hi) << v;
        ASSERT_LE(static_cast<double>(hi - lo - 1),
                  0.01 * static_cast<double>(std::max<std::uint64_t>(v, 1)))
            << "bucket [" << lo << "," << hi << ") around " << v;
    }
}

TEST(BenchHistogram, BucketsTileTheRangeWithoutGaps) {
    for (unsigned b = 1; b < LatencyHistogram::kBuckets; ++b)
        ASSERT_EQ(LatencyHistogram::bucket_low(b), LatencyHistogram::bucket_high(b - 1)) << b;
}

TEST(BenchHistogram, QuantilesMatchExactValuesWithinOnePercent) {
    LatencyHistogram h;
    std::vector<std::uint64_t> v;
    Xoshiro rng(42);
    for (int i = 0; i < 100000; ++i) {
        // A long-tailed mix, like I/O latency: mostly ~2 µs, some ~100 µs, a few ms.
        const std::uint64_t r = rng.below(1000);
        const std::uint64_t x = r < 900   ? 1500 + rng.below(1000)
                                : r < 995 ? 80000 + rng.below(40000)
                                          : 2000000 + rng.below(3000000);
        v.push_back(x);
        h.record(x);
    }
    std::sort(v.begin(), v.end());
    for (double q : {0.5, 0.9, 0.99, 0.999}) {
        const auto rank =
            static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1;
        const double exact = static_cast<double>(v[rank]);
        EXPECT_NEAR(h.quantile(q), exact, exact * 0.01) << "q=" << q;
    }
    EXPECT_EQ(h.max(), v.back());
    EXPECT_EQ(h.min(), v.front());
    double sum = 0;
    for (auto x : v) sum += static_cast<double>(x);
    EXPECT_DOUBLE_EQ(h.mean(), sum / static_cast<double>(v.size()));
    EXPECT_EQ(h.count(), v.size());
}

TEST(BenchHistogram, MergeAddsCountsAndKeepsExtremes) {
    LatencyHistogram a, b;
    a.record(100);
    a.record(5000);
    b.record(7);
    b.record(1'000'000);
    a.merge(b);
    EXPECT_EQ(a.count(), 4u);
    EXPECT_EQ(a.min(), 7u);
    EXPECT_EQ(a.max(), 1'000'000u);
    EXPECT_DOUBLE_EQ(a.quantile(0.25), 7.0);
    a.reset();
    EXPECT_EQ(a.count(), 0u);
    EXPECT_EQ(a.quantile(0.5), 0.0);
}

TEST(BenchHistogram, OffsetsCoverTheFileAndRepeatWithTheSeed) {
    Workload w;
    w.size = 64 * 4096;
    w.bs = 4096;
    IoPattern a(w, 0, 1), b(w, 0, 1);
    std::vector<int> seen(64);
    for (int i = 0; i < 10000; ++i) {
        const Io x = a.next();
        ASSERT_EQ(x.offset, b.next().offset);
        ASSERT_EQ(x.offset % 4096, 0u);
        ASSERT_LT(x.offset, w.size);
        ++seen[x.offset / 4096];
    }
    for (int c : seen) EXPECT_GT(c, 50) << "random offsets should spread over every block";
}
