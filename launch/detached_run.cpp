#include "launch/detached_run.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <future>
#include <stdexcept>

#include "engine/job/fault_signals.h"
#include "storage/private_files.h"

namespace ranklab {

namespace {

constexpr const char* kFaultActions[] = {"kill", "stop", "continue", "slow"};
constexpr int kActionCount = 4;

sigset_t faultSignalSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, launcherFaultSignal());
  return set;
}

// In the grandchild, between fork and exec: only async-signal-safe calls.
[[noreturn]] void execDetached(std::vector<char*>& argv, int console_fd, int report_fd) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, launcherFaultSignal()}) signal(sig, SIG_DFL);
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
  dup2(console_fd, STDOUT_FILENO);
  dup2(console_fd, STDERR_FILENO);
  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);  // none of the caller's sockets or files leak in
  execv(argv[0], argv.data());
  const int error = errno;
  (void)!write(report_fd, &error, sizeof error);
  _exit(127);
}

}  // namespace

int64_t startDetached(const std::vector<std::string>& argv, const std::string& console_path) {
  const std::string what = "start " + argv.at(0);
  int console_fd = -1;
  try {
    console_fd = openPrivateLog(console_path);
  } catch (const PrivateFileError& e) {
    throw std::runtime_error(what + ": " + e.what());
  }
  int report[2];    // the exec's errno, or EOF once it succeeded (CLOEXEC)
  int pid_pipe[2];  // the grandchild's pid, from the child in between
  if (pipe2(report, O_CLOEXEC) != 0 || pipe2(pid_pipe, O_CLOEXEC) != 0) {
    close(console_fd);
    throw std::runtime_error(what + ": pipe: " + strerror(errno));
  }
  std::vector<std::string> args = argv;
  std::vector<char*> arg_ptrs;
  for (auto& a : args) arg_ptrs.push_back(a.data());
  arg_ptrs.push_back(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    setsid();  // no controlling terminal, no process group of the caller's
    const pid_t grandchild = fork();
    if (grandchild == 0) execDetached(arg_ptrs, console_fd, report[1]);
    (void)!write(pid_pipe[1], &grandchild, sizeof grandchild);
    _exit(grandchild < 0 ? 1 : 0);
  }
  close(console_fd);
  close(report[1]);
  close(pid_pipe[1]);
  pid_t pid = -1;
  if (child > 0) {
    waitpid(child, nullptr, 0);  // the grandchild is init's now
    if (read(pid_pipe[0], &pid, sizeof pid) != static_cast<ssize_t>(sizeof pid)) pid = -1;
  }
  int error = child < 0 ? errno : 0;
  if (pid > 0 && read(report[0], &error, sizeof error) != static_cast<ssize_t>(sizeof error))
    error = 0;
  close(report[0]);
  close(pid_pipe[0]);
  if (pid <= 0 && error == 0) error = EAGAIN;  // a fork failed in between
  if (error != 0) throw std::runtime_error(what + ": " + strerror(error));
  return pid;
}

bool requestStopOf(int64_t pid) {
  return pid > 0 && kill(static_cast<pid_t>(pid), SIGINT) == 0;
}

bool sendRankFault(int64_t pid, int rank, const std::string& action) {
  int code = -1;
  for (int i = 0; i < kActionCount; ++i)
    if (action == kFaultActions[i]) code = i;
  if (code < 0)
    throw std::invalid_argument("fault \"" + action + "\" (allowed: kill, stop, continue, slow)");
  if (rank < 0 || pid <= 0) return false;
  sigval value{};
  value.sival_int = rank * kActionCount + code;
  return sigqueue(static_cast<pid_t>(pid), launcherFaultSignal(), value) == 0;
}

std::optional<std::pair<int, std::string>> rankFaultOf(int value) {
  if (value < 0) return std::nullopt;
  return std::make_pair(value / kActionCount, std::string(kFaultActions[value % kActionCount]));
}

namespace {
constexpr int kQuitListening = -1;  // the value ~RankFaultListener sends its own thread

// The listening thread's kernel id while a RankFaultListener lives, else 0.
std::atomic<pid_t> g_listener_tid{0};

// A thread that still takes the signal (one started before the listener, or a library's that
// unblocks it) hands it on to the listening thread rather than dying of it.
void forwardToListener(int signal, siginfo_t* info, void* /*context*/) {
  const pid_t tid = g_listener_tid.load();
  if (tid > 0) syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, signal, info);
}
}  // namespace

RankFaultListener::RankFaultListener(Handler on_fault) : on_fault_(std::move(on_fault)) {
  const sigset_t faults = faultSignalSet();
  pthread_sigmask(SIG_BLOCK, &faults, nullptr);
  std::promise<void> listening;
  thread_ = std::thread([this, faults, &listening] {
    g_listener_tid = static_cast<pid_t>(syscall(SYS_gettid));
    listening.set_value();
    for (;;) {
      siginfo_t info{};
      if (sigwaitinfo(&faults, &info) != launcherFaultSignal()) continue;  // EINTR
      const int value = info.si_code == SI_QUEUE ? info.si_value.sival_int : -2;
      if (value == kQuitListening && info.si_pid == getpid()) return;
      if (const auto fault = rankFaultOf(value)) on_fault_(fault->first, fault->second);
    }
  });
  listening.get_future().wait();
  struct sigaction forward {};
  forward.sa_sigaction = forwardToListener;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&forward.sa_mask);
  sigaction(launcherFaultSignal(), &forward, &previous_);
}

RankFaultListener::~RankFaultListener() {
  sigval quit{};
  quit.sival_int = kQuitListening;
  // To the listening thread alone: sent to the process, a thread that does not block the
  // signal could take it instead (on a 16-core GPU machine one did, and the launcher died).
  pthread_sigqueue(thread_.native_handle(), launcherFaultSignal(), quit);
  thread_.join();
  sigaction(launcherFaultSignal(), &previous_, nullptr);
  g_listener_tid = 0;
  const sigset_t faults = faultSignalSet();
  pthread_sigmask(SIG_UNBLOCK, &faults, nullptr);
}

}  // namespace ranklab
