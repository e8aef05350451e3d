#include "engine/job/job_key_docs.h"

#include <regex>
#include <sstream>
#include <vector>

namespace ranklab {

namespace {

// Table cells of "| a | b \| c | d |": pipes escaped with a backslash stay in the cell.
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::string cell;
  for (size_t i = 1; i < row.size(); ++i) {
    if (row[i] == '\\' && i + 1 < row.size() && row[i + 1] == '|') {
      cell += '|';
      ++i;
    } else if (row[i] == '|') {
      out.push_back(cell);
      cell.clear();
    } else {
      cell += row[i];
    }
  }
  for (std::string& c : out) {
    c.erase(0, c.find_first_not_of(' '));
    c.erase(c.find_last_not_of(' ') + 1);
  }
  return out;
}

// Markdown to plain text: links keep their words; code spans, bold and quotes lose marks.
std::string plain(std::string text) {
  text = std::regex_replace(text, std::regex(R"(\[([^\]]*)\]\([^)]*\))"), "$1");
  text = std::regex_replace(text, std::regex(R"(\*\*|`)"), "");
  return text;
}

std::string unquoted(const std::string& text) {
  const std::string t = plain(text);
  if (t.size() >= 2 && t.front() == '"' && t.back() == '"') return t.substr(1, t.size() - 2);
  return t;
}

}  // namespace

std::map<std::string, JobKeyDoc> parseJobKeyDocs(const std::string& markdown) {
  static const std::regex section_heading(R"(^### `\[([a-z_]+)\]`)");
  static const std::regex key_cell(R"(^`([a-z_0-9]+)`$)");
  std::map<std::string, JobKeyDoc> docs;
  std::istringstream lines(markdown);
  std::string line, section;
  bool in_keys = false;  // below a "###" heading of a section or the top level
  std::smatch m;
  while (std::getline(lines, line)) {
    if (line.rfind("## ", 0) == 0) in_keys = false;
    if (std::regex_search(line, m, section_heading)) {
      section = m[1];
      in_keys = true;
    } else if (line.rfind("### Top level", 0) == 0) {
      section.clear();
      in_keys = true;
    } else if (line.rfind("### ", 0) == 0) {
      in_keys = false;  // e.g. [[faults]]: tables, not keys of a section
    }
    if (!in_keys || line.rfind("| `", 0) != 0) continue;
    const std::vector<std::string> row = cells(line);
    if (row.size() < 4 || !std::regex_match(row[0], m, key_cell)) continue;
    const std::string path =
        section.empty() ? std::string(m[1]) : section + "." + std::string(m[1]);
    docs[path] = {plain(row[1]), unquoted(row[2]), plain(row[3])};
  }
  return docs;
}

const std::map<std::string, JobKeyDoc>& jobKeyDocs() {
  static const std::map<std::string, JobKeyDoc> docs = parseJobKeyDocs(jobFileMarkdown());
  return docs;
}

}  // namespace ranklab
