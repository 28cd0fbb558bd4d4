// The fio-shaped JSON document (`bench --output-format=json`): fio's field
// names and units, one `jobs` entry per workload, engine and depth, so that
// scripts written for `fio --output-format=json` read bench's figures.  Only
// what bench measures gets a number; docs/json.md lists what is left out.
#pragma once

#include "engines/report.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace uringkit::engines {

class FioDocument {
public:
    // Adds one entry per row of `report` that ran: jobname "JOB/ENGINE/qdN",
    // `groupid` the workload's place in the run (each job section is its own
    // workload, run after the one before: fio's stonewall), `options` the
    // job's own settings as written (fio's "job options").
    void add(const Report& report, const std::string& job, unsigned groupid,
             const std::vector<std::pair<std::string, std::string>>& options);
    // The document, fio's top-level fields first, stamped with the time now.
    std::string str() const;

private:
    nlohmann::ordered_json jobs_ = nlohmann::ordered_json::array();
};

}  // namespace uringkit::engines
