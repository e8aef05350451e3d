// Internal to ranklab_job: the job file's sections and keys, and how each key is checked,
// read into a JobSpec and written back out. One table drives parsing, --set and toTomlText.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "engine/job/job_spec.h"

namespace ranklab::job_detail {

// The file name used for problems that come from command-line overrides.
inline constexpr std::string_view kOverrideFile = "--set";

// Collects every problem found in one check of a job file.
class IssueLog {
 public:
  explicit IssueLog(std::string file) : file_(std::move(file)) {}

  // Keys set by --set are reported against "--set", not against a place in the file,
  // and in the order the overrides were given.
  void beginOverride(int index) { current_override_ = index; }
  void markOverridden(const std::string& key) { overridden_[key] = current_override_; }

  void add(const toml::source_region& where, const std::string& key, std::string message);
  void addOverride(const std::string& key, std::string message);
  void addIssue(JobIssue issue, int override_index = 0);

  bool hasIssueFor(const std::string& key) const { return bad_keys_.count(key) > 0; }
  bool empty() const { return issues_.empty(); }

  // File problems in file order, then --set problems in the order given.
  std::vector<JobIssue> take();

 private:
  std::string file_;
  int current_override_ = 0;
  std::map<std::string, int> overridden_;  // key -> index of the --set that last set it
  std::set<std::string> bad_keys_;
  std::vector<std::pair<int, JobIssue>> issues_;  // (override index, issue)
};

// One key of a section: checks a TOML value and stores it, or writes the stored value.
struct Field {
  std::string_view key;
  bool takes_string = false;  // a --set value for it is kept as text if it is not a TOML string
  // Checks `value` (found under `path`, e.g. "train.lr") and stores it into the job if valid.
  std::function<void(const toml::node& value, const std::string& path, JobSpec& job, IssueLog& log)>
      read;
  // The stored value as TOML text that reads back to exactly the same value.
  std::function<std::string(const JobSpec& job)> write;
  // For forms (job_keys.h): the allowed strings of a choice, and the allowed range as text.
  std::vector<std::string_view> choices = {};
  std::string allowed = {};
};

struct Section {
  std::string_view name;  // "" for the top level (the `name` key)
  std::string_view purpose;
  std::vector<Field> fields;
};

// Top level first, then the sections in the order they are documented and written.
const std::vector<Section>& jobSchema();

const Section* findSection(std::string_view name);
const Field* findField(const Section& section, std::string_view key);

// "integer", "string", "table", ... as a user would name the type of a TOML value.
std::string typeName(const toml::node& node);

// `text` in double quotes, for messages.
std::string quoted(std::string_view text);

// "a, b, c".
std::string joinNames(const std::vector<std::string_view>& names);

// Shortest text that reads back to exactly `value` (used for messages and for output).
std::string formatDouble(double value);

// The registered all-reduces, for messages: "ring, mpi, hierarchical or shm".
std::string allreduceChoices();

// "data, model, train, ..." (sections) and "epochs, batch_size, ..." (keys of a section).
std::string sectionList();
std::string keyList(const Section& section);

// The closest candidate within edit distance 2, or "" when nothing is that close.
std::string closestName(std::string_view name, const std::vector<std::string_view>& candidates);

// "unknown key \"x\" in [train]; did you mean y? allowed keys: ..." (and the same for sections).
std::string unknownKeyMessage(const Section& section, std::string_view key);
std::string unknownSectionMessage(std::string_view name);

// [[faults]] (job_faults.cpp): reads the array of tables into job.faults; checks each
// fault's rank against the run's processes; writes them back as TOML.
void readFaults(const toml::node& value, JobSpec& job, IssueLog& log);
void checkFaults(const toml::table& root, const JobSpec& job, IssueLog& log);
std::string faultsToml(const JobSpec& job);

// Problems that involve more than one key (e.g. the straggler must be one of the ranks).
void checkAcrossSections(const toml::table& root, const JobSpec& job, IssueLog& log);

}  // namespace ranklab::job_detail
