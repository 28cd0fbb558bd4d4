#include "engines/runner.hpp"

#include "engines/engine.hpp"
#include "engines/run_once.hpp"

#include <sys/resource.h>

#include <algorithm>

namespace uringkit::engines {

using detail::Outcome;
using detail::RunContext;

std::string_view order_name(Order o) noexcept {
    switch (o) {
        case Order::rotate:
            return "rotate";
        case Order::shuffle:
            return "shuffle";
        case Order::fixed:
            return "fixed";
    }
    return "rotate";
}

std::optional<Order> parse_order(std::string_view text) noexcept {
    for (Order o : {Order::rotate, Order::shuffle, Order::fixed})
        if (order_name(o) == text) return o;
    return std::nullopt;
}

std::vector<std::string> engine_labels(const std::vector<std::string>& engines) {
    std::vector<std::string> labels;
    for (std::size_t i = 0; i < engines.size(); ++i) {
        const auto seen =
            std::count(engines.begin(), engines.begin() + static_cast<long>(i), engines[i]);
        labels.push_back(seen ? engines[i] + "#" + std::to_string(seen + 1) : engines[i]);
    }
    return labels;
}

std::string_view engine_base(std::string_view label) noexcept {
    return label.substr(0, label.find('#'));
}

std::string_view status_name(Row::Status s) noexcept {
    switch (s) {
        case Row::ok:
            return "ok";
        case Row::unavailable:
            return "unavailable";
        case Row::failed:
            return "failed";
    }
    return "failed";
}

namespace {

// Each round's order of the engines, as indices into the list.
std::vector<std::vector<std::size_t>> round_orders(const BenchSpec& spec) {
    const std::size_t ne = spec.engines.size();
    std::vector<std::vector<std::size_t>> orders;
    Xoshiro rng(spec.order_seed);
    for (unsigned r = 0; r < spec.rounds; ++r) {
        std::vector<std::size_t> order(ne);
        // rotate: rounds come in pairs, the second the first reversed, the
        // pair after that rotated by one.  Plain rotation ran A#2 straight
        // after A in all rounds but one, and that position effect made the
        // A/A check call an engine faster than itself in about one run in
        // three; reversing every other round puts each engine before and
        // after each other engine equally often, so such effects cancel.
        for (std::size_t i = 0; i < ne; ++i)
            order[i] = spec.order == Order::rotate ? (i + r / 2) % ne : i;
        if (spec.order == Order::rotate && r % 2 == 1) std::reverse(order.begin(), order.end());
        if (spec.order == Order::shuffle)
            for (std::size_t i = ne; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
        orders.push_back(std::move(order));
    }
    return orders;
}

}  // namespace

Results run_bench(const BenchSpec& spec, const Target& target, const std::atomic<bool>* stop,
                  const ProgressFn& progress) {
    Results res;
    res.confidence = spec.confidence;
    res.latency = spec.latency;
    const std::uint64_t start = now_ns();
    if (spec.cache == Cache::warm && !spec.workload.direct) target.warm_cache();

    const std::vector<std::string> labels = engine_labels(spec.engines);
    const std::size_t ne = spec.engines.size(), nd = spec.depths.size();
    std::vector<std::vector<Outcome>> outcomes(ne * nd);
    RunContext rc{spec, target, stop, progress, 0, 0, {}};
    rc.runs = static_cast<unsigned>(spec.rounds * ne * nd);
    rc.rounds = spec.rounds;
    rc.start_ns = start;
    auto stopped = [&] { return stop && stop->load(std::memory_order_relaxed); };
    const auto orders = round_orders(spec);
    for (unsigned round = 0; round < spec.rounds && !stopped(); ++round) {
        std::vector<std::string> order;
        for (std::size_t e : orders[round]) order.push_back(labels[e]);
        res.orders.push_back(std::move(order));
        for (std::size_t d = 0; d < nd && !stopped(); ++d)
            for (std::size_t pos = 0; pos < ne && !stopped(); ++pos) {
                const std::size_t e = orders[round][pos];
                ++rc.run;
                rc.round = round + 1;
                auto& mine = outcomes[d * ne + e];
                // An engine that cannot run here will not run on the next round either.
                if (!mine.empty() && mine.front().status == Row::unavailable) continue;
                const EngineInfo* info = find_engine(spec.engines[e]);
                if (!info) {
                    Outcome o;
                    o.status = Row::unavailable;
                    o.reason = "unknown engine";
                    mine.push_back(std::move(o));
                    continue;
                }
                if (spec.cache == Cache::cold) target.drop_cache();
                rc.label = labels[e];
                mine.push_back(detail::run_once(rc, *info, spec.depths[d]));
                if (res.offload_not_counted.empty())
                    res.offload_not_counted = mine.back().offload_why;
                res.runs.push_back(detail::record(mine.back(), labels[e], spec.depths[d], round + 1,
                                                  static_cast<unsigned>(pos + 1)));
            }
    }
    res.interrupted = stopped();
    for (std::size_t d = 0; d < nd; ++d)
        for (std::size_t e = 0; e < ne; ++e) {
            const auto& mine = outcomes[d * ne + e];
            if (mine.empty()) continue;  // never started (interrupted)
            res.rows.push_back(detail::aggregate(
                labels[e], spec.depths[d], spec.batch_for(spec.depths[d]), mine, spec.confidence));
        }
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    res.peak_rss_kib = ru.ru_maxrss;
    res.wall_s = static_cast<double>(now_ns() - start) / 1e9;
    return res;
}

}  // namespace uringkit::engines
