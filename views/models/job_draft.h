// The job being edited on the setup page: one form text per schema key, checked by the
// same validator as `ranklab validate` (checkJob) after every change. No widgets here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/job/job_keys.h"
#include "engine/job/job_spec.h"

namespace ranklab {

class JobDraft {
 public:
  JobDraft();  // every key at its default

  // Takes the values a file sets; keys it does not set go back to their defaults. What the
  // form cannot hold (syntax errors, unknown keys) is kept in fileIssues().
  void loadText(const std::string& toml_text, const std::string& file_name);
  void resetToDefaults();

  void setValue(const std::string& path, const std::string& form_text);
  std::string value(const std::string& path) const;
  const JobValues& values() const { return values_; }

  // The job as a file: every key of the schema, sections in order, then the loaded file's
  // [[faults]] tables (no form field holds them, and a launch must not drop them).
  std::string tomlText() const { return jobTextFromValues(values_) + faults_text_; }
  bool hasFaults() const { return !faults_text_.empty(); }
  const std::string& fileName() const { return file_name_; }  // used in issue texts
  void setFileName(const std::string& name);

  bool valid() const { return issues_.empty(); }
  const std::vector<JobIssue>& issues() const { return issues_; }
  std::vector<JobIssue> issuesFor(const std::string& path) const;
  // Issues that name no form key (e.g. a TOML syntax error): shown apart.
  std::vector<JobIssue> otherIssues() const;
  // Problems of the loaded file that the form dropped (unknown keys, syntax errors).
  const std::vector<JobIssue>& fileIssues() const { return file_issues_; }

  std::optional<JobSpec> job() const;  // the parsed job when valid

 private:
  void check();
  // data.path's default follows data.dataset: a path left at the old dataset's default
  // moves to the new one's (the stored job then names the data that ran).
  void followDataPath(const std::string& old_dataset);

  JobValues values_;
  std::string faults_text_;  // [[faults]] tables of the loaded file, as TOML
  std::string file_name_ = "job.toml";
  std::vector<JobIssue> issues_;
  std::vector<JobIssue> file_issues_;
};

}  // namespace ranklab
