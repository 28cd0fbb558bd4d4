// The probe's trials: each builds its own ring, runs a real request and checks
// what came back.  Internal to the probe layer.
#pragma once

#include "probe/probe.hpp"

#include <string>
#include <vector>

namespace uringkit::probe::detail {

// Appends one Trial per check to `out`.  `dir` is a writable directory for
// temporary files (each removed before its trial returns).
void run_trials(const std::string& dir, std::vector<Trial>& out);

}  // namespace uringkit::probe::detail
