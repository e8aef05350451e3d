// How the CLI prints runs: human tables, or JSON for machines.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "engine/job/job_keys.h"
#include "storage/records.h"

namespace ranklab {

// printf into a string (a line of a table; 512 characters at most).
std::string format(const char* pattern, auto... values) {
  char text[512];
  std::snprintf(text, sizeof text, pattern, values...);
  return text;
}

nlohmann::json summaryJson(const RunSummary& summary);
nlohmann::json runRowJson(const RunRow& run);
// `brief`: a run's own console after it ends; the tables per group and per layer are named,
// not printed (`runs show` and `run --verbose` print them: `full`).
enum class SummaryDetail { brief, full };
void printSummary(std::ostream& out, const RunSummary& summary,
                  SummaryDetail detail = SummaryDetail::full);
void printRunList(std::ostream& out, const std::vector<RunRow>& runs);

// `ranklab compare`: the settings that differ, then the summaries side by side.
nlohmann::json compareJson(const std::vector<RunSummary>& runs,
                           const std::vector<SettingDifference>& differences);
void printComparison(std::ostream& out, const std::vector<RunSummary>& runs,
                     const std::vector<SettingDifference>& differences);

}  // namespace ranklab
