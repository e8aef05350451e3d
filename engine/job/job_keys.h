// The job file's keys as a form sees them: every key with its kind, allowed values and
// default, read from the same schema that parseJob and checkJob use (job_schema.cpp), so
// a key added there appears in every form without further edits.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/job/job_spec.h"

namespace ranklab {

enum class JobValueKind { Integer, Number, Text, Choice, IntegerList, Boolean, Other };

struct JobKey {
  std::string section;          // "" for a top-level key
  std::string section_purpose;  // e.g. "the optimisation loop"
  std::string key;              // e.g. "lr"
  std::string path;             // "train.lr", or "name" at the top level
  JobValueKind kind = JobValueKind::Other;
  std::vector<std::string> choices;  // the allowed strings of a Choice
  std::string allowed;               // e.g. "1..10000", "> 0 and <= 10"; "" when unknown
  std::string default_value;         // form text (see below)
};

// Every key, top level first, then sections in file order.
const std::vector<JobKey>& jobKeys();
const JobKey* findJobKey(const std::string& path);

// Form text: a Text or Choice value is the string itself (no quotes); any other kind is
// TOML value text ("64", "0.05", "[256, 128]").
using JobValues = std::map<std::string, std::string>;  // path -> form text

// The keys a file sets, as form text; keys it does not set, and anything that is not a
// key of the schema, are left out. A file with a TOML syntax error gives nothing.
JobValues jobValuesInText(const std::string& toml_text);
// Every key of a resolved job.
JobValues jobValues(const JobSpec& job);
// A job file with these values; form text that is not one TOML value is written as a
// string, so checkJob reports it against its key ("expected an integer, got string").
std::string jobTextFromValues(const JobValues& values);

// One key whose value is not the same in every job compared.
struct SettingDifference {
  std::string path;                 // "train.lr"
  std::vector<std::string> values;  // form text, one per job, in the order given
};

}  // namespace ranklab
