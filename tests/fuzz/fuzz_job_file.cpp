// libFuzzer target: a job file and its --set overrides, as `ranklab run` reads them. The
// input is the TOML text, then optionally a NUL byte and one override per line. Either the
// job checks out, and its resolved text reads back as the same job, or a JobError lists the
// issues; nothing else may happen.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "engine/job/job_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find('\0');
  std::vector<std::string> overrides;
  if (split != std::string::npos) {
    std::istringstream lines(input.substr(split + 1));
    for (std::string line; std::getline(lines, line);) overrides.push_back(line);
  }
  try {
    const ranklab::JobSpec job = ranklab::parseJob(input.substr(0, split), "fuzz.toml", overrides);
    // What the ranks and the store receive must read back as the same job.
    if (!(ranklab::parseJob(ranklab::toTomlText(job), "resolved.toml") == job)) __builtin_trap();
  } catch (const ranklab::JobError&) {
  }
  return 0;
}
