// A stored run's resolved job, read once where the run is loaded: readers ask its fields,
// not the TOML text again (the text stays what `runs show --job` prints and what compare's
// key-by-key diff shows).
#pragma once

#include <optional>
#include <string>

#include "engine/job/job_spec.h"
#include "storage/records.h"

namespace ranklab {

struct StoredJob {
  // nullopt for a run stored without a job it can read, or imported from PyTorch's traces
  std::optional<JobSpec> job;
  std::string error;  // why not, naming the run ("" when job holds it)
};

StoredJob storedJobOf(const RunRow& run);

// The job, or std::invalid_argument with the error (for commands that need it).
JobSpec requireStoredJob(const RunRow& run);

}  // namespace ranklab
