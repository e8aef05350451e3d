#include "app/cli/json_output.h"

#include <ostream>

#include "engine/job/utf8.h"

namespace ranklab {

namespace {

std::string madeUtf8(const std::string& text, const std::string& where,
                     std::vector<std::string>& escaped) {
  if (!byteNotUtf8In(text)) return text;
  escaped.push_back(where.empty() ? "(the document)" : where);
  return withBytesNotUtf8Escaped(text);
}

void makeUtf8(nlohmann::json& node, const std::string& where, std::vector<std::string>& escaped) {
  if (node.is_string()) {
    node = madeUtf8(node.get_ref<const std::string&>(), where, escaped);
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i)
      makeUtf8(node[i], where + "[" + std::to_string(i) + "]", escaped);
  } else if (node.is_object()) {
    nlohmann::json rebuilt = nlohmann::json::object();
    for (auto& [key, value] : node.items()) {
      const std::string path = where + (where.empty() ? "" : ".") + key;
      const std::string fixed_key = madeUtf8(key, path + " (its key)", escaped);
      makeUtf8(value, where + (where.empty() ? "" : ".") + fixed_key, escaped);
      rebuilt[fixed_key] = std::move(value);
    }
    node = std::move(rebuilt);
  }
}

}  // namespace

nlohmann::json withTextMadeUtf8(const nlohmann::json& doc, std::vector<std::string>& escaped) {
  nlohmann::json copy = doc;
  makeUtf8(copy, "", escaped);
  return copy;
}

void printJson(std::ostream& out, const nlohmann::json& doc, std::ostream& notes) {
  try {
    out << doc.dump(2) << "\n";  // the common case: every text is UTF-8 already
    return;
  } catch (const nlohmann::json::type_error&) {
  }
  std::vector<std::string> escaped;
  out << withTextMadeUtf8(doc, escaped).dump(2) << "\n";
  for (const std::string& where : escaped)
    notes << "ranklab: note: " << where
          << " is not UTF-8: each byte that is not is written \\xNN in the JSON\n";
}

}  // namespace ranklab
