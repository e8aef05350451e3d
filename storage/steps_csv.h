// A run's step rows as CSV, one line per rank per step: what `ranklab runs export --csv`
// and the workbench's "Export CSV…" write, so the two files are the same.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "storage/run_store.h"

namespace ranklab {

// The header line, without its newline: the steps table's columns.
const std::string& stepsCsvHeader();

// Writes the header and the rows of `run_id`; returns the number of rows.
int64_t writeStepsCsv(RunStore& store, int64_t run_id, std::ostream& out);

// Writes to `path` through a temporary file beside it, so a failed export leaves no half
// file; throws naming the path and the cause. Returns the number of rows.
int64_t exportStepsCsv(RunStore& store, int64_t run_id, const std::string& path);

}  // namespace ranklab
