// How the CLI prints runs: human tables, or JSON for machines.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "engine/job/job_keys.h"
#include "storage/records.h"

namespace ranklab {

nlohmann::json summaryJson(const RunSummary& summary);
nlohmann::json runRowJson(const RunRow& run);
void printSummary(std::ostream& out, const RunSummary& summary);
void printRunList(std::ostream& out, const std::vector<RunRow>& runs);

// `ranklab compare`: the settings that differ, then the summaries side by side.
nlohmann::json compareJson(const std::vector<RunSummary>& runs,
                           const std::vector<SettingDifference>& differences);
void printComparison(std::ostream& out, const std::vector<RunSummary>& runs,
                     const std::vector<SettingDifference>& differences);

}  // namespace ranklab
