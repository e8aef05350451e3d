// Runs the real `ranklab` CLI (RANKLAB_CLI) for the integration tests, each test with a
// run store of its own.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/temp_folder.h"

namespace ranklab::testing {

// The CLI under test and the source tree of its job presets: where they were built, unless
// the environment says where they were moved (RANKLAB_CLI, RANKLAB_SOURCE_DIR: the GPU
// bundle runs its binaries on another machine, scripts/gpu-run).
inline std::string builtOr(const char* variable, const char* built) {
  const char* moved = std::getenv(variable);
  return moved != nullptr && *moved != '\0' ? moved : built;
}
inline std::string cliPath() {
  return builtOr("RANKLAB_CLI", RANKLAB_CLI);
}
inline std::string sourceDir() {
  return builtOr("RANKLAB_SOURCE_DIR", RANKLAB_SOURCE_DIR);
}

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout and stderr, interleaved
};

// `prefix` goes before the CLI (e.g. "timeout -s INT 4 ").
inline CliResult runCli(const std::string& args, const std::string& prefix = "") {
  const std::string command = prefix + cliPath() + " " + args + " 2>&1";
  CliResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// Starts `ranklab ARGS` in the background with its output in `log`; returns its pid.
inline pid_t startInBackground(const std::vector<std::string>& args, const std::string& log) {
  const std::string cli = cliPath();  // before fork: the child only execs
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    std::vector<char*> argv{const_cast<char*>(cli.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(cli.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

// The JSON document at the end of the output (progress lines come before it).
inline nlohmann::json lastJson(const std::string& out) {
  const size_t start = out.find("\n{");
  return nlohmann::json::parse(out.substr(start == std::string::npos ? 0 : start + 1));
}

// A test with its own run store in a fresh folder, and the quickstart preset at hand.
class CliTest : public ::testing::Test {
 protected:
  std::string db() const { return folder_.file("runs.db"); }
  std::string quickstart() const { return sourceDir() + "/resources/jobs/quickstart.toml"; }
  TempFolder folder_;
};

}  // namespace ranklab::testing
