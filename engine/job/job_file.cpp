// Parsing a job file: TOML syntax, then --set overrides, then every key checked against
// the schema in job_schema.cpp, collecting all problems before reporting any.
#include "engine/job/job_file.h"

#include "engine/job/job_schema.h"
#include "storage/bounded_read.h"

#if !TOML_EXCEPTIONS
#error "ranklab_job reports TOML syntax errors from toml::parse_error; build with exceptions"
#endif

namespace ranklab {
namespace {

using job_detail::Field;
using job_detail::IssueLog;
using job_detail::quoted;
using job_detail::Section;

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "";
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

// "train.epochs" for a bare "epochs", when exactly that key exists somewhere.
std::string sectionHint(std::string_view key) {
  for (const auto& section : job_detail::jobSchema()) {
    if (!section.name.empty() && job_detail::findField(section, key)) {
      return "; did you mean " + std::string(section.name) + "." + std::string(key) + "?";
    }
  }
  return "";
}

// The override's value as TOML, or as plain text when it is not one TOML value (a bare
// word such as `mpi`), or when the key wants a string (so `name=2024-01-01` stays text).
toml::table overrideValue(const std::string& raw, bool takes_string) {
  toml::table holder;
  try {
    toml::table parsed = toml::parse("value = " + raw);
    const toml::node* value = parsed.get("value");
    if (parsed.size() == 1 && value && (!takes_string || value->is_string())) {
      holder.insert("value", *value);
      return holder;
    }
  } catch (const toml::parse_error&) {
    // not TOML: taken as text below
  }
  holder.insert("value", raw);
  return holder;
}

void applyOverride(const std::string& text, toml::table& root, IssueLog& log) {
  const auto equals = text.find('=');
  const std::string path = trim(std::string_view(text).substr(0, equals));
  const std::string form = "expected section.key=value (e.g. train.lr=0.1), got " + quoted(text);
  if (equals == std::string::npos || path.empty()) {
    log.addOverride(path, form);
    return;
  }
  const auto dot = path.find('.');
  const std::string section_name = dot == std::string::npos ? "" : trim(path.substr(0, dot));
  const std::string key = trim(dot == std::string::npos ? path : path.substr(dot + 1));
  const Section& top = *job_detail::findSection("");
  if (dot == std::string::npos && !job_detail::findField(top, key)) {
    log.addOverride(path, form + "; the key has no section" + sectionHint(key));
    return;
  }
  if (dot != std::string::npos && (section_name.empty() || key.empty())) {
    log.addOverride(path, form);
    return;
  }
  const Section* section = job_detail::findSection(section_name);
  if (!section) {
    log.addOverride(path, job_detail::unknownSectionMessage(section_name));
    return;
  }
  const Field* field = job_detail::findField(*section, key);
  if (!field) {
    log.addOverride(path, job_detail::unknownKeyMessage(*section, key));
    return;
  }

  toml::table* target = &root;
  if (!section_name.empty()) {
    if (!root.contains(section_name)) root.insert(section_name, toml::table{});
    target = root.get_as<toml::table>(section_name);
    if (!target) {
      log.addOverride(path, "cannot set it: " + section_name + " in the file is not a section");
      return;
    }
  }
  const std::string full_key = section_name.empty() ? key : section_name + "." + key;
  log.markOverridden(full_key);
  toml::table holder =
      overrideValue(trim(std::string_view(text).substr(equals + 1)), field->takes_string);
  target->insert_or_assign(key, *holder.get("value"));
}

void readSection(const Section& section, const toml::table& table, JobSpec& job, IssueLog& log) {
  for (auto&& [key, value] : table) {
    const std::string path = std::string(section.name) + "." + std::string(key.str());
    if (const Field* field = job_detail::findField(section, key.str())) {
      field->read(value, path, job, log);
    } else {
      log.add(key.source(), path, job_detail::unknownKeyMessage(section, key.str()));
    }
  }
}

void readRoot(const toml::table& root, JobSpec& job, IssueLog& log) {
  const Section& top = *job_detail::findSection("");
  for (auto&& [key, value] : root) {
    const std::string name(key.str());
    if (const Field* field = job_detail::findField(top, name)) {
      field->read(value, name, job, log);
      continue;
    }
    if (name == "faults") {
      job_detail::readFaults(value, job, log);
      continue;
    }
    const Section* section = name.empty() ? nullptr : job_detail::findSection(name);
    if (!section) {
      log.add(key.source(), name,
              value.is_table() ? job_detail::unknownSectionMessage(name)
                               : job_detail::unknownKeyMessage(top, name));
      continue;
    }
    if (const auto* table = value.as_table()) {
      readSection(*section, *table, job, log);
    } else {
      log.add(value.source(), name,
              "expected a table (the section [" + name + "]), got " + job_detail::typeName(value));
    }
  }
}

// Defaults that depend on another key's value, for the keys the file and --set left out: the
// resolved job says what runs (a text run's corpus, not Fashion-MNIST's folder).
void resolveDependentDefaults(const toml::table& root, JobSpec& job) {
  if (!root.at_path("data.path")) job.data.path = defaultDataPath(job.data.dataset);
}

std::vector<JobIssue> readJob(const std::string& toml_text, const std::string& file_name,
                              const JobOverrides& overrides, JobSpec& job) {
  IssueLog log(file_name);
  toml::table root;
  bool syntax_ok = true;
  try {
    root = toml::parse(toml_text, file_name);
  } catch (const toml::parse_error& error) {
    // Keep going with an empty file so that bad --set values are reported as well.
    syntax_ok = false;
    const auto& where = error.source().begin;
    log.addIssue({file_name, static_cast<int>(where.line), static_cast<int>(where.column), "",
                  "TOML syntax error: " + std::string(error.description())});
  }
  for (size_t i = 0; i < overrides.size(); ++i) {
    log.beginOverride(static_cast<int>(i));
    applyOverride(overrides[i], root, log);
  }
  readRoot(root, job, log);
  resolveDependentDefaults(root, job);
  if (syntax_ok) job_detail::checkAcrossSections(root, job, log);
  return log.take();
}

}  // namespace

std::vector<JobIssue> checkJob(const std::string& toml_text, const std::string& file_name,
                               const JobOverrides& overrides) {
  JobSpec job;
  return readJob(toml_text, file_name, overrides, job);
}

JobSpec parseJob(const std::string& toml_text, const std::string& file_name,
                 const JobOverrides& overrides) {
  JobSpec job;
  auto issues = readJob(toml_text, file_name, overrides, job);
  if (!issues.empty()) throw JobError(std::move(issues));
  return job;
}

JobSpec loadJob(const std::string& path, const JobOverrides& overrides) {
  return parseJob(readJobFile(path), path, overrides);
}

std::string readJobFile(const std::string& path) {
  try {
    return readBoundedFile(path, kJobFileLimit);
  } catch (const FileReadError& e) {
    throw JobError({{path, 0, 0, "", e.cause()}});
  }
}

std::string toTomlText(const JobSpec& job) {
  std::string text;
  for (const Section& section : job_detail::jobSchema()) {
    if (!section.name.empty()) text += "\n";
    text += "# " + std::string(section.purpose) + "\n";
    if (!section.name.empty()) text += "[" + std::string(section.name) + "]\n";
    for (const Field& field : section.fields) {
      text += std::string(field.key) + " = " + field.write(job) + "\n";
    }
  }
  return text + job_detail::faultsToml(job);
}

std::string faultsTomlText(const JobSpec& job) {
  return job_detail::faultsToml(job);
}

}  // namespace ranklab
