#include "measure/paired.hpp"

#include "measure/interval.hpp"

#include <fmt/format.h>

namespace uringkit::measure {

std::string_view metric_name(Metric m) noexcept {
    return m == Metric::iops ? "iops" : "cpu_us_per_io";
}

std::string_view judgement_name(Judgement j) noexcept {
    switch (j) {
        case Judgement::faster:
            return "faster";
        case Judgement::slower:
            return "slower";
        case Judgement::same:
            return "same";
        case Judgement::too_few_samples:
            return "too_few_samples";
    }
    return "too_few_samples";
}

Judgement judge_interval(double low, double high, Metric m) noexcept {
    if (low > 1) return m == Metric::iops ? Judgement::faster : Judgement::slower;
    if (high < 1) return m == Metric::iops ? Judgement::slower : Judgement::faster;
    return Judgement::same;
}

double confidence_each(double family, std::size_t comparisons) noexcept {
    return comparisons > 1 ? 1 - (1 - family) / static_cast<double>(comparisons) : family;
}

Comparison judge(std::vector<double> ratios, double confidence, Metric metric, bool min_ios_ok) {
    Comparison c;
    c.metric = metric;
    c.pairs = static_cast<unsigned>(ratios.size());
    const Estimate e = median_interval(std::move(ratios), confidence);
    c.ratio = e.median;
    c.ratio_low = e.low;
    c.ratio_high = e.high;
    if (!min_ios_ok) {
        c.why = fmt::format("runs of fewer than {} I/Os", kMinIosPerRun);
    } else if (!e.covered) {
        c.why = fmt::format("{} round{}; {} needed for {:.4g}% per comparison", c.pairs,
                            c.pairs == 1 ? "" : "s", samples_needed(confidence), confidence * 100);
    } else {
        c.verdict = judge_interval(e.low, e.high, metric);
    }
    return c;
}

PairedRatios paired_ratios(const ByRound& a, const ByRound& b, std::uint64_t min_ios) {
    PairedRatios out;
    for (const auto& [round, fa] : a) {
        const auto fb = b.find(round);
        if (fb == b.end()) continue;
        if (fa.ios < min_ios || fb->second.ios < min_ios) out.min_ios_ok = false;
        if (fb->second.value > 0) out.ratios.push_back(fa.value / fb->second.value);
    }
    return out;
}

}  // namespace uringkit::measure
