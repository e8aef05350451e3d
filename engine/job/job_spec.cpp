// The job's plain data helpers and its error types; parsing lives in job_file.cpp.
#include "engine/job/job_spec.h"

#include "engine/job/strategy_traits.h"

namespace ranklab {
namespace {

std::string describe(const std::vector<JobIssue>& issues) {
  if (issues.empty()) return "invalid job";
  std::string text;
  for (const auto& issue : issues) text += (text.empty() ? "" : "\n") + issue.str();
  return text;
}

}  // namespace

std::string JobIssue::str() const {
  std::string text = file;
  if (line > 0) text += ":" + std::to_string(line) + ":" + std::to_string(column);
  text += ": ";
  if (!key.empty()) text += key + ": ";
  return text + message;
}

JobError::JobError(std::vector<JobIssue> issues)
    : std::runtime_error(describe(issues)), issues_(std::move(issues)) {}

bool usesParameterServer(const JobSpec& job) {
  return strategyTraitsOr(job.parallel.strategy).parameter_servers;
}

bool runsOnHosts(const JobSpec& job) {
  return !job.launch.hosts.empty() || !job.launch.hostfile.empty() || runsUnderSlurm(job);
}

bool runsUnderSlurm(const JobSpec& job) {
  return job.launch.scheduler == Scheduler::kSlurm;
}

bool runsCommand(const JobSpec& job) {
  return !job.launch.command.empty();
}

int processCount(const JobSpec& job) {
  if (runsCommand(job)) return job.parallel.ranks;
  return job.parallel.ranks + (usesParameterServer(job) ? job.parallel.servers : 0);
}

}  // namespace ranklab
