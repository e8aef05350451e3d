// The job-file documentation (docs/job-file.md, compiled in at build time) by key, so the
// setup form's tooltips say what the docs say and a key without docs fails a test.
#pragma once

#include <map>
#include <string>

namespace ranklab {

struct JobKeyDoc {
  std::string type;           // "float"
  std::string default_value;  // "0.05"
  std::string text;           // the "allowed" column, markdown removed
};

// Every key row of docs/job-file.md's tables, by path ("train.lr", "name").
const std::map<std::string, JobKeyDoc>& jobKeyDocs();

// The markdown of docs/job-file.md as built in.
const char* jobFileMarkdown();

// Parses the tables of a job-file.md text (exposed for tests).
std::map<std::string, JobKeyDoc> parseJobKeyDocs(const std::string& markdown);

}  // namespace ranklab
