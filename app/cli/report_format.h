// How the CLI prints runs: human tables, or JSON for machines.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "storage/records.h"

namespace ranklab {

nlohmann::json summaryJson(const RunSummary& summary);
nlohmann::json runRowJson(const RunRow& run);
void printSummary(std::ostream& out, const RunSummary& summary);
void printRunList(std::ostream& out, const std::vector<RunRow>& runs);

}  // namespace ranklab
