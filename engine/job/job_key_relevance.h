// Which keys of the job file matter for a job: a spirals key does nothing to a Fashion-MNIST
// job, a parameter-server key nothing under all-reduce. The setup form hides the keys that
// do not apply; the rules are one table in job_key_relevance.cpp.
#pragma once

#include <string>
#include <vector>

#include "engine/job/job_keys.h"

namespace ranklab {

// A key applies only when another key has one of some values (or, with `negate`, none).
struct RelevanceRule {
  std::string key;                  // "data.arms"
  std::string when;                 // "data.dataset"
  std::vector<std::string> values;  // {"spirals"}
  bool negate = false;              // true: applies when `when` is none of `values`
};

const std::vector<RelevanceRule>& relevanceRules();

// Whether `path` changes anything for a job with these values (keys missing from `values`
// count as their defaults). Every rule that names the key must hold.
bool keyApplies(const std::string& path, const JobValues& values);

// The keys, in schema order, on which the jobs (as stored TOML text) disagree; a key a job
// does not set counts as its default, and a command's job (launch.command) has none of the
// engine's keys ("–", no difference). Used by `ranklab compare`, `diff` and the compare page.
std::vector<SettingDifference> differingSettings(const std::vector<std::string>& job_tomls);

}  // namespace ranklab
