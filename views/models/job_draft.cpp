#include "views/models/job_draft.h"
#include "engine/job/job_file.h"
#include "engine/job/job_schema.h"

namespace ranklab {

JobDraft::JobDraft() {
  resetToDefaults();
}

void JobDraft::resetToDefaults() {
  values_.clear();
  faults_text_.clear();
  for (const JobKey& k : jobKeys()) values_[k.path] = k.default_value;
  file_issues_.clear();
  check();
}

void JobDraft::loadText(const std::string& toml_text, const std::string& file_name) {
  file_name_ = file_name;
  values_.clear();
  for (const JobKey& k : jobKeys()) values_[k.path] = k.default_value;
  const JobValues in_file = jobValuesInText(toml_text);
  for (auto& [path, text] : in_file) values_[path] = text;
  if (!in_file.count("data.path")) values_["data.path"] = defaultDataPath(values_["data.dataset"]);
  faults_text_.clear();
  try {
    faults_text_ = faultsTomlText(parseJob(toml_text, file_name));
  } catch (const JobError&) {
    // A file with errors keeps no faults; its issues below say what is wrong with it.
  }
  // Whatever the file says that no form key can hold would be lost on save: say so.
  file_issues_.clear();
  for (JobIssue& issue : checkJob(toml_text, file_name))
    if (!findJobKey(issue.key)) file_issues_.push_back(std::move(issue));
  check();
}

void JobDraft::setFileName(const std::string& name) {
  file_name_ = name;
  check();
}

void JobDraft::setValue(const std::string& path, const std::string& form_text) {
  if (!findJobKey(path)) return;
  const std::string dataset = value("data.dataset");
  values_[path] = form_text;
  if (path == "data.dataset") followDataPath(dataset);
  check();
}

void JobDraft::followDataPath(const std::string& old_dataset) {
  std::string& data_path = values_["data.path"];
  if (data_path == defaultDataPath(old_dataset))
    data_path = defaultDataPath(values_["data.dataset"]);
}

std::string JobDraft::value(const std::string& path) const {
  auto it = values_.find(path);
  return it == values_.end() ? std::string() : it->second;
}

std::vector<JobIssue> JobDraft::issuesFor(const std::string& path) const {
  std::vector<JobIssue> found;
  for (const JobIssue& issue : issues_)
    if (issue.key == path) found.push_back(issue);
  return found;
}

std::vector<JobIssue> JobDraft::otherIssues() const {
  std::vector<JobIssue> found;
  for (const JobIssue& issue : issues_)
    if (!findJobKey(issue.key)) found.push_back(issue);
  return found;
}

std::optional<JobSpec> JobDraft::job() const {
  if (!valid()) return std::nullopt;
  try {
    return parseJob(tomlText(), file_name_);
  } catch (const JobError&) {
    return std::nullopt;
  }
}

void JobDraft::check() {
  issues_ = checkJob(tomlText(), file_name_);
}

}  // namespace ranklab
