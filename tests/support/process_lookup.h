// Finds processes by their command line through /proc, so the tests need no procps (a
// minimal Debian root has no pgrep, and a missing pgrep must not read as "none found").
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace ranklab::testing {

// A process's command line with its arguments joined by spaces, "" once it has gone.
inline std::string commandLineOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string line((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!line.empty() && line.back() == '\0') line.pop_back();
  for (char& c : line) c = c == '\0' ? ' ' : c;
  return line;
}

// The pids, in ascending order, whose command line matches `pattern` (ECMAScript search).
inline std::vector<pid_t> processesMatching(const std::string& pattern) {
  const std::regex wanted(pattern);
  std::vector<pid_t> pids;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (std::regex_search(commandLineOf(pid), wanted)) pids.push_back(pid);
  }
  // /proc must be there: an empty list because it is missing would pass "no ranks left".
  EXPECT_FALSE(error) << "cannot list /proc: " << error.message();
  std::sort(pids.begin(), pids.end());
  return pids;
}

// A process's parent pid, or -1 once it has gone.
inline pid_t parentOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return -1;
  // pid (comm) state ppid ...: comm may hold spaces and parentheses.
  const auto close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 1));
  std::string state;
  pid_t parent = -1;
  rest >> state >> parent;
  return parent;
}

}  // namespace ranklab::testing
