// The probe's trials: each builds its own ring, runs a real request and checks
// what came back.  Internal to the probe layer.
#pragma once

#include "probe/probe.hpp"

#include <string>
#include <vector>

namespace uringkit::probe::detail {

// Appends one Trial per check to `out`.  `dir` is a writable directory for
// temporary files (each removed before its trial returns).
// `dev`: a block device for the device trials (probe --dev), or empty.
void run_trials(const std::string& dir, const std::string& dev, std::vector<Trial>& out);
// The 128-byte-SQE ring, hybrid IOPOLL and, with `dev`, a polled read and an
// NVMe passthrough read of it (trials_block.cpp).
void run_block_trials(const std::string& dev, std::vector<Trial>& out);

}  // namespace uringkit::probe::detail
