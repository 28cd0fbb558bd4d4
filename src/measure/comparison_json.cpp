#include "measure/comparison_json.hpp"

#include <string>

namespace uringkit::measure {

nlohmann::json comparison_json(const Comparison& c, std::string_view metric_label) {
    nlohmann::json x = {{"a", c.a},
                        {"b", c.b},
                        {"metric", std::string(metric_label)},
                        {"ratio", c.ratio},
                        {"low", c.ratio_low},
                        {"high", c.ratio_high},
                        {"rounds", c.pairs},
                        {"verdict", std::string(judgement_name(c.verdict))}};
    if (!c.why.empty()) x["why"] = c.why;
    return x;
}

}  // namespace uringkit::measure
