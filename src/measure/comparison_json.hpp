// A paired comparison as JSON, the one shape bench net and bench --replay
// write (bench's own "comparisons", older, keeps its documented names:
// docs/bench.md).  The caller adds where the comparison was made (its
// workload, or its mode and depth).
#pragma once

#include "measure/paired.hpp"

#include <nlohmann/json.hpp>

#include <string_view>

namespace uringkit::measure {

// {"a", "b", "metric": metric_label, "ratio", "low", "high", "rounds",
//  "verdict", "why" (only when not judged)}.
nlohmann::json comparison_json(const Comparison& c, std::string_view metric_label);

}  // namespace uringkit::measure
