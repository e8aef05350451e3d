// Reading and writing job files: TOML syntax, then --set overrides, then every key checked
// against the schema (job_schema.cpp), collecting all problems before reporting any.
#pragma once

#include <string>
#include <vector>

#include "engine/job/job_spec.h"
#include "storage/bounded_read.h"

namespace ranklab {

// "section.key=value" overrides from the command line, applied before validation.
using JobOverrides = std::vector<std::string>;

// Parses and validates; throws JobError listing every problem found (not just the first).
JobSpec parseJob(const std::string& toml_text, const std::string& file_name,
                 const JobOverrides& overrides = {});
// Reads the file with readJobFile, then parses it.
JobSpec loadJob(const std::string& path, const JobOverrides& overrides = {});

// A job file's text: a regular file of at most kJobFileLimit, never a device or a FIFO (no
// block, no endless read); throws JobError naming the file and the cause.
inline constexpr ReadLimit kJobFileLimit{uint64_t{16} << 20, "job files"};
std::string readJobFile(const std::string& path);

// Same checks, returning the problems instead of throwing (for validate-as-you-type).
std::vector<JobIssue> checkJob(const std::string& toml_text, const std::string& file_name,
                               const JobOverrides& overrides = {});

// The resolved job as TOML, every key written out; parseJob(toTomlText(j)) == j.
std::string toTomlText(const JobSpec& job);
// Its [[faults]] alone, as toTomlText ends with them (a form keeps them apart from its keys).
std::string faultsTomlText(const JobSpec& job);

}  // namespace ranklab
