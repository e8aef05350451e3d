#include "engine/job/stored_job.h"

#include <stdexcept>

#include "engine/job/job_file.h"
#include "storage/run_origin.h"

namespace ranklab {

StoredJob storedJobOf(const RunRow& run) {
  const std::string where = "run " + std::to_string(run.id) + "'s job";
  if (run.job_toml.empty()) return {std::nullopt, where + ": none was stored"};
  // Its text is a comment saying where the traces came from: parsed, it would be the
  // default job, and a layout the run never had.
  if (originOf(run) == RunOrigin::kPytorchImport)
    return {std::nullopt, where + ": an imported PyTorch trace carries no ranklab job"};
  try {
    return {parseJob(run.job_toml, where), ""};
  } catch (const JobError& e) {
    return {std::nullopt, e.what()};
  }
}

JobSpec requireStoredJob(const RunRow& run) {
  StoredJob stored = storedJobOf(run);
  if (!stored.job) throw std::invalid_argument(stored.error);
  return std::move(*stored.job);
}

}  // namespace ranklab
