// A child process with its stdout and stderr read line by line, without blocking.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace ranklab {

class ChildProcess {
 public:
  using LineHandler = std::function<void(bool is_stderr, const std::string& line)>;

  // Starts argv[0] (looked up in PATH) in its own process group, with `extra_env`
  // ("NAME=value") added to this process's environment. Throws naming the program and cause.
  ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env);
  ~ChildProcess();  // kills a child still running; never throws
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Waits up to wait_ms for output and hands every complete line to on_line.
  void pump(int wait_ms, const LineHandler& on_line);
  // False once the child has exited (reaps it).
  bool running();
  // Exit status; 128 + signal when killed by a signal. Valid once running() is false.
  int exitCode() const { return exit_code_; }

  void terminate();  // SIGTERM to the process group
  void kill();       // SIGKILL to the process group

 private:
  void readFrom(int& fd, std::string& pending, bool is_stderr, const LineHandler& on_line);
  void signalGroup(int signal);

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::string out_pending_;
  std::string err_pending_;
  bool exited_ = false;
  int exit_code_ = 0;
};

}  // namespace ranklab
