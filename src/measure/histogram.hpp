// Completion latency histogram: log-linear buckets (as HdrHistogram): 128
// linear sub-buckets per power of two, so a value is known to within 1/128
// (0.8%) of itself.  Fixed size, allocated once; record() is a few
// instructions and never allocates.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

namespace uringkit::measure {

class LatencyHistogram {
public:
    static constexpr unsigned kSubBits = 7;
    static constexpr unsigned kSub = 1u << kSubBits;  // 128
    static constexpr unsigned kMaxExp = 44;           // values up to 2^44 ns (~4.9 hours)
    static constexpr unsigned kBuckets = (kMaxExp - kSubBits + 2) * kSub;

    LatencyHistogram() : counts_(std::make_unique<std::uint64_t[]>(kBuckets)) {}

    void record(std::uint64_t ns) noexcept { record(ns, 1); }
    void record(std::uint64_t ns, std::uint64_t n) noexcept {
        counts_[index(ns)] += n;
        count_ += n;
        sum_ += ns * n;
        if (ns > max_) max_ = ns;
        if (ns < min_) min_ = ns;
    }
    void merge(const LatencyHistogram& o) noexcept;
    void reset() noexcept;

    std::uint64_t count() const noexcept { return count_; }
    std::uint64_t max() const noexcept { return max_; }
    std::uint64_t min() const noexcept { return count_ ? min_ : 0; }
    double mean() const noexcept {
        return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0;
    }
    // The value at quantile q in [0,1]: the middle of the bucket holding it
    // (within 0.4% of every value in that bucket), clamped to [min, max].
    double quantile(double q) const noexcept;

    // Bucket arithmetic, public for the tests.
    static unsigned index(std::uint64_t v) noexcept {
        if (v < kSub) return static_cast<unsigned>(v);
        unsigned e = 63u - static_cast<unsigned>(__builtin_clzll(v));  // v in [2^e, 2^(e+1))
        if (e > kMaxExp) return kBuckets - 1;
        const unsigned shift = e - kSubBits;
        const unsigned sub = static_cast<unsigned>(v >> shift) & (kSub - 1);
        return (shift + 1) * kSub + sub;
    }
    // [low, high) of the values that land in bucket i.
    static std::uint64_t bucket_low(unsigned i) noexcept {
        if (i < kSub) return i;
        const unsigned shift = i / kSub - 1;
        return (std::uint64_t{kSub} + (i % kSub)) << shift;
    }
    static std::uint64_t bucket_high(unsigned i) noexcept {
        if (i < kSub) return i + 1;
        const unsigned shift = i / kSub - 1;
        return bucket_low(i) + (std::uint64_t{1} << shift);
    }

private:
    std::unique_ptr<std::uint64_t[]> counts_;
    std::uint64_t count_ = 0;
    std::uint64_t sum_ = 0;
    std::uint64_t max_ = 0;
    std::uint64_t min_ = UINT64_MAX;
};

}  // namespace uringkit::measure
