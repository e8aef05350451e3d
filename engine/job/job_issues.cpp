// Problems found in a job file: collecting them in order, and the messages that say what
// is wrong and what is allowed (with a "did you mean" for near-miss names).
#include "engine/job/job_schema.h"

#include <algorithm>
#include <tuple>

namespace ranklab::job_detail {
namespace {

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string_view> sectionNames() {
  std::vector<std::string_view> names;
  for (const auto& section : jobSchema()) {
    if (!section.name.empty()) names.push_back(section.name);
  }
  return names;
}

std::vector<std::string_view> keyNames(const Section& section) {
  std::vector<std::string_view> names;
  for (const auto& field : section.fields) names.push_back(field.key);
  return names;
}

}  // namespace

std::string typeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "table";
    case toml::node_type::array:
      return "array";
    case toml::node_type::string:
      return "string";
    case toml::node_type::integer:
      return "integer";
    case toml::node_type::floating_point:
      return "float";
    case toml::node_type::boolean:
      return "boolean";
    case toml::node_type::date:
      return "date";
    case toml::node_type::time:
      return "time";
    case toml::node_type::date_time:
      return "date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

std::string joinNames(const std::vector<std::string_view>& names) {
  std::string out;
  for (auto name : names) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

std::string quoted(std::string_view text) {
  return "\"" + std::string(text) + "\"";
}

void IssueLog::add(const toml::source_region& where, const std::string& key, std::string message) {
  if (overridden_.count(key) || where.begin.line == 0) {
    addOverride(key, std::move(message));
    return;
  }
  addIssue({file_, static_cast<int>(where.begin.line), static_cast<int>(where.begin.column), key,
            std::move(message)});
}

void IssueLog::addOverride(const std::string& key, std::string message) {
  auto it = overridden_.find(key);
  addIssue({std::string(kOverrideFile), 0, 0, key, std::move(message)},
           it != overridden_.end() ? it->second : current_override_);
}

void IssueLog::addIssue(JobIssue issue, int override_index) {
  bad_keys_.insert(issue.key);
  issues_.emplace_back(override_index, std::move(issue));
}

std::vector<JobIssue> IssueLog::take() {
  // File problems by place, then --set problems by the position of their override.
  auto place = [](const std::pair<int, JobIssue>& entry) {
    const JobIssue& issue = entry.second;
    return std::tuple(issue.line == 0, issue.line, issue.column, entry.first);
  };
  std::stable_sort(issues_.begin(), issues_.end(),
                   [&](const auto& a, const auto& b) { return place(a) < place(b); });
  std::vector<JobIssue> issues;
  for (auto& entry : issues_) issues.push_back(std::move(entry.second));
  issues_.clear();
  return issues;
}

std::string sectionList() {
  return joinNames(sectionNames());
}

std::string keyList(const Section& section) {
  return joinNames(keyNames(section));
}

std::string closestName(std::string_view name, const std::vector<std::string_view>& candidates) {
  std::string_view best;
  size_t best_distance = 3;
  for (auto candidate : candidates) {
    size_t distance = editDistance(name, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return std::string(best);
}

std::string unknownKeyMessage(const Section& section, std::string_view key) {
  const bool top = section.name.empty();
  std::string message =
      "unknown key " + quoted(key) +
      (top ? std::string(" at the top level") : " in [" + std::string(section.name) + "]");
  auto names = keyNames(section);
  if (top) {
    auto sections = sectionNames();
    names.insert(names.end(), sections.begin(), sections.end());
  }
  const auto suggestion = closestName(key, names);
  message += suggestion.empty() ? "; " : "; did you mean " + suggestion + "? ";
  if (top) return message + "allowed: " + keyList(section) + " and the sections " + sectionList();
  return message + "allowed keys: " + keyList(section);
}

std::string unknownSectionMessage(std::string_view name) {
  std::string message = "unknown section [" + std::string(name) + "]";
  const auto suggestion = closestName(name, sectionNames());
  message += suggestion.empty() ? "; " : "; did you mean [" + suggestion + "]? ";
  return message + "allowed sections: " + sectionList();
}

}  // namespace ranklab::job_detail
