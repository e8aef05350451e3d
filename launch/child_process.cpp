#include "launch/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace ranklab {

namespace {

void check(int code, const std::string& what) {
  if (code != 0) throw std::runtime_error(what + ": " + std::strerror(code));
}

std::vector<std::string> mergedEnvironment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const auto& x : extra) overridden |= x.compare(0, name.size() + 1, name + "=") == 0;
    if (!overridden) env.push_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> cStrings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// fork + exec, so the child can be tied to this process: in a group of its own (a stop
// signals every process mpirun starts) and sent SIGTERM if this process dies (SIGKILL skips
// every destructor), so a killed launcher leaves no ranks behind. Only async-signal-safe
// calls between fork and exec; an exec failure's errno comes back through a CLOEXEC pipe.
// Returns 0 or the errno.
int spawn(std::vector<char*>& argv, std::vector<char*>& envp, const char* dir, int out_fd,
          int err_fd, pid_t& pid) {
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return errno;
  const pid_t parent = getpid();
  pid = fork();
  if (pid < 0) {
    const int error = errno;
    close(report[0]);
    close(report[1]);
    return error;
  }
  if (pid == 0) {
    setpgid(0, 0);
    sigset_t none;  // a launcher that takes signals off its threads (RankFaultListener)
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);  // the launcher died before prctl
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    if (*dir != '\0' && chdir(dir) != 0) {
      const int error = errno;
      (void)!write(report[1], &error, sizeof error);
      _exit(127);
    }
    execvpe(argv[0], argv.data(), envp.data());
    const int error = errno;
    (void)!write(report[1], &error, sizeof error);
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so a signal to the group right away cannot miss it
  close(report[1]);
  int error = 0;
  const ssize_t got = read(report[0], &error, sizeof error);  // EOF: exec succeeded
  close(report[0]);
  if (got == static_cast<ssize_t>(sizeof error)) {
    waitpid(pid, nullptr, 0);
    pid = -1;
    return error;
  }
  return 0;
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv,
                           const std::vector<std::string>& extra_env, const std::string& dir)
    : name_(argv.at(0).substr(argv.at(0).rfind('/') + 1)) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error("start " + argv.at(0) + ": pipe: " + std::strerror(errno));
  }
  std::vector<std::string> args = argv;
  std::vector<std::string> env = mergedEnvironment(extra_env);
  auto arg_ptrs = cStrings(args);
  auto env_ptrs = cStrings(env);
  const int code = spawn(arg_ptrs, env_ptrs, dir.c_str(), out_pipe[1], err_pipe[1], pid_);
  close(out_pipe[1]);
  close(err_pipe[1]);
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
  if (code != 0) {
    close(out_fd_);
    close(err_fd_);
    check(code, "start " + argv[0] + (dir.empty() ? "" : " in " + dir));
  }
}

ChildProcess::~ChildProcess() {
  if (!exited_ && pid_ > 0) {
    signalGroup(SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  if (out_fd_ >= 0) close(out_fd_);
  if (err_fd_ >= 0) close(err_fd_);
}

void ChildProcess::pump(int wait_ms, const LineHandler& on_line) {
  pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
  if (out_fd_ < 0 && err_fd_ < 0) {
    if (wait_ms > 0) poll(nullptr, 0, wait_ms);
    return;
  }
  if (poll(fds, 2, wait_ms) <= 0) return;
  if (fds[0].revents != 0) readFrom(out_fd_, out_pending_, false, on_line);
  if (fds[1].revents != 0) readFrom(err_fd_, err_pending_, true, on_line);
}

void ChildProcess::readFrom(int& fd, std::string& pending, bool is_stderr,
                            const LineHandler& on_line) {
  char buffer[65536];
  const ssize_t n = read(fd, buffer, sizeof buffer);
  if (n <= 0) {  // end of output: hand over an unterminated last line, then stop polling
    if (!pending.empty()) on_line(is_stderr, pending);
    pending.clear();
    close(fd);
    fd = -1;
    return;
  }
  pending.append(buffer, static_cast<size_t>(n));
  size_t start = 0, end = 0;
  while ((end = pending.find('\n', start)) != std::string::npos) {
    on_line(is_stderr, pending.substr(start, end - start));
    start = end + 1;
  }
  pending.erase(0, start);
}

bool ChildProcess::running() {
  if (exited_) return false;
  int status = 0;
  const pid_t done = waitpid(pid_, &status, WNOHANG);
  if (done == 0) return true;
  exited_ = true;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return false;
}

void ChildProcess::signalGroup(int signal) {
  if (pid_ > 0) ::kill(-pid_, signal);
}

void ChildProcess::terminate() {
  if (!exited_) signalGroup(SIGTERM);
}

void ChildProcess::kill() {
  if (!exited_) signalGroup(SIGKILL);
}

}  // namespace ranklab
