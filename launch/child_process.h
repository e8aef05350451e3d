// A child process with its stdout and stderr read line by line, without blocking.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "launch/rank_process.h"

namespace ranklab {

class ChildProcess : public RankProcess {
 public:
  // Starts argv[0] (looked up in PATH) in its own process group, with `extra_env`
  // ("NAME=value") added to this process's environment. Throws naming the program and cause.
  // In `dir` where one is given, else in this process's working folder.
  ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
               const std::string& dir = "");
  ~ChildProcess() override;  // kills a child still running; never throws
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Waits up to wait_ms for output and hands every complete line to on_line.
  void pump(int wait_ms, const LineHandler& on_line) override;
  // False once the child has exited (reaps it).
  bool running() override;
  // Exit status; 128 + signal when killed by a signal. Valid once running() is false.
  int exitCode() const override { return exit_code_; }

  void terminate() override;                           // SIGTERM to the process group
  void kill() override;                                // SIGKILL to the process group
  std::string name() const override { return name_; }  // the program's file name
  pid_t pid() const { return pid_; }

 private:
  void readFrom(int& fd, std::string& pending, bool is_stderr, const LineHandler& on_line);
  void signalGroup(int signal);

  std::string name_;
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::string out_pending_;
  std::string err_pending_;
  bool exited_ = false;
  int exit_code_ = 0;
};

}  // namespace ranklab
