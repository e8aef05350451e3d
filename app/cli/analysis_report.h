// The parts of an analysis that both `ranklab analyze` and `ranklab runs show` print: the
// stragglers with their kind (chronic or moving) and share, and who held up a run that did
// not finish (docs/analysis.md).
#pragma once

#include <cstddef>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>

#include "storage/analysis/analysis_results.h"

namespace ranklab {

nlohmann::json stragglersJson(const RunAnalysis& a);  // every rank, worst first
nlohmann::json chronicRuleJson(const ChronicRule& rule);
nlohmann::json hangJson(const RunAnalysis& a);  // null for a run that ended `done`

// A table, worst first: every chronic straggler and up to `others` more ranks (the rest
// counted in a line).
void printStragglers(std::ostream& out, const RunAnalysis& a, const std::string& indent,
                     size_t others = std::numeric_limits<size_t>::max());
// The verdict and the ranks behind, up to `rows` of them (the rest counted). Nothing for a
// run that ended `done`.
void printHang(std::ostream& out, const RunAnalysis& a, const std::string& indent,
               size_t rows = std::numeric_limits<size_t>::max());

}  // namespace ranklab
