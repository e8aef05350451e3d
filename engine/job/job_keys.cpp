#include "engine/job/job_keys.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "engine/job/job_file.h"
#include "engine/job/job_schema.h"

namespace ranklab {
namespace {

// A string as TOML (the formatter picks literal or basic quoting as needed).
std::string tomlQuoted(const std::string& text) {
  std::ostringstream out;
  out << toml::value<std::string>(text);
  return out.str();
}

std::string formText(const toml::node& node) {
  if (const auto* text = node.as_string()) return text->get();
  if (const auto* real = node.as_floating_point()) {
    // Shortest text that reads back the same (0.9, not 0.90000000000000002).
    char buffer[64];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, real->get());
    std::string text = ec == std::errc() ? std::string(buffer, end) : std::to_string(real->get());
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // stays a float
    return text;
  }
  std::ostringstream out;
  node.visit([&out](const auto& value) { out << value; });
  std::string text = out.str();
  // "[ 256, 128 ]" reads better without the inner padding.
  if (text.size() >= 4 && text.front() == '[' && text[1] == ' ' && text[text.size() - 2] == ' ')
    text = "[" + text.substr(2, text.size() - 4) + "]";
  return text;
}

// The kind follows the field's choices, else the TOML type of its default value.
JobValueKind kindOf(const job_detail::Field& field, const toml::node* default_node) {
  if (!field.choices.empty()) return JobValueKind::Choice;
  if (!default_node) return JobValueKind::Other;
  switch (default_node->type()) {
    case toml::node_type::integer:
      return JobValueKind::Integer;
    case toml::node_type::floating_point:
      return JobValueKind::Number;
    case toml::node_type::string:
      return JobValueKind::Text;
    case toml::node_type::boolean:
      return JobValueKind::Boolean;
    case toml::node_type::array: {
      const auto* array = default_node->as_array();
      return array->is_homogeneous(toml::node_type::integer) ? JobValueKind::IntegerList
                                                             : JobValueKind::Other;
    }
    default:
      return JobValueKind::Other;
  }
}

std::vector<JobKey> buildKeys() {
  std::vector<JobKey> keys;
  const JobSpec defaults;
  for (const auto& section : job_detail::jobSchema()) {
    for (const auto& field : section.fields) {
      JobKey k;
      k.section = section.name;
      k.section_purpose = section.purpose;
      k.key = field.key;
      k.path = k.section.empty() ? k.key : k.section + "." + k.key;
      for (auto choice : field.choices) k.choices.emplace_back(choice);
      k.allowed = field.allowed;
      toml::table parsed;
      try {
        parsed = toml::parse("value = " + field.write(defaults));
      } catch (const toml::parse_error&) {
        // a writer that is not one TOML value: the kind stays Other
      }
      const toml::node* value = parsed.get("value");
      k.kind = kindOf(field, value);
      k.default_value = value ? formText(*value) : field.write(defaults);
      keys.push_back(std::move(k));
    }
  }
  return keys;
}

bool isStringKind(JobValueKind kind) {
  return kind == JobValueKind::Text || kind == JobValueKind::Choice;
}

}  // namespace

const std::vector<JobKey>& jobKeys() {
  static const std::vector<JobKey> keys = buildKeys();
  return keys;
}

const JobKey* findJobKey(const std::string& path) {
  for (const JobKey& k : jobKeys())
    if (k.path == path) return &k;
  return nullptr;
}

JobValues jobValuesInText(const std::string& toml_text) {
  JobValues values;
  toml::table root;
  try {
    root = toml::parse(toml_text);
  } catch (const toml::parse_error&) {
    return values;
  }
  for (const JobKey& k : jobKeys()) {
    const toml::node* node = k.section.empty() ? root.get(k.key) : root[k.section][k.key].node();
    if (node) values[k.path] = formText(*node);
  }
  return values;
}

JobValues jobValues(const JobSpec& job) {
  return jobValuesInText(toTomlText(job));
}

std::string jobTextFromValues(const JobValues& values) {
  std::string text;
  std::string section = "\x01";  // no section written yet
  for (const JobKey& k : jobKeys()) {
    auto it = values.find(k.path);
    if (it == values.end()) continue;
    if (k.section != section) {
      section = k.section;
      if (!section.empty()) text += (text.empty() ? "[" : "\n[") + section + "]\n";
    }
    std::string value = it->second;
    bool one_value = false;
    if (!isStringKind(k.kind)) {
      try {
        const toml::table parsed = toml::parse("value = " + value);
        one_value = parsed.size() == 1 && parsed.contains("value");
      } catch (const toml::parse_error&) {
        one_value = false;
      }
    }
    text += k.key + " = " + (one_value ? value : tomlQuoted(value)) + "\n";
  }
  return text;
}

}  // namespace ranklab
