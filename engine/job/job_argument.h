// The resolved job as one command-line word, for ranks on other hosts, where the
// launcher's resolved job file does not exist: base64 of its TOML, which survives every
// shell and launcher on the way unchanged.
#pragma once

#include <string>

#include "engine/job/job_spec.h"

namespace ranklab {

std::string jobArgument(const JobSpec& job);
// Throws JobError naming "--job-text" when the word is not base64 of a valid job.
JobSpec parseJobArgument(const std::string& word);

}  // namespace ranklab
