#include "app/worker/fault_injector.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "engine/job/fault_signals.h"

namespace ranklab {

namespace {

std::atomic<int> g_signalled_slow_ms{0};  // lock-free: written from a signal handler
static_assert(std::atomic<int>::is_always_lock_free);

void addSignalledSlow(int, siginfo_t* info, void*) {
  if (info->si_code == SI_QUEUE && info->si_value.sival_int > 0)
    g_signalled_slow_ms += info->si_value.sival_int;
}

// The announcement must leave before the process does: zmq sends from its own thread.
void announce(Reporter& reporter, const std::string& text, int64_t step) {
  reporter.event("fault", text, step);
  reporter.flush();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

// Before the process ends on purpose: the announcement and every step before it delivered,
// as close() drains and lingers (bounded by close_timeout_ms). 100 ms were not always enough
// on a loaded machine: the launcher then named an earlier last step than the fault's.
void announceLast(Reporter& reporter, const std::string& text, int64_t step) {
  reporter.event("fault", text, step);
  reporter.close();
}

// A child that sends SIGCONT to this process after `seconds`, and dies with it.
void continueLater(int seconds) {
  const pid_t parent = getpid();
  if (fork() != 0) return;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(0);  // the rank is already gone
  sleep(static_cast<unsigned>(seconds));
  kill(parent, SIGCONT);
  _exit(0);
}

}  // namespace

FaultInjector::FaultInjector(const std::vector<InjectedFault>& faults, int rank) {
  for (const InjectedFault& fault : faults)
    if (fault.rank == rank) faults_.push_back(fault);
}

void FaultInjector::listenForSlowSignal() {
  struct sigaction action = {};
  action.sa_sigaction = &addSignalledSlow;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(slowRankSignal(), &action, nullptr);
}

void FaultInjector::afterStep(int64_t step, Reporter& reporter) {
  for (const InjectedFault& fault : faults_)
    if (fault.at_step == step) fire(fault, step, reporter);
  const int slow_ms = slow_ms_ + g_signalled_slow_ms.load();
  if (slow_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms));
}

void FaultInjector::fire(const InjectedFault& fault, int64_t step, Reporter& reporter) {
  const std::string after = " after step " + std::to_string(step);
  switch (fault.action) {
    case FaultAction::kKill:
      announceLast(reporter, "kill: SIGKILL" + after, step);
      raise(SIGKILL);
      return;
    case FaultAction::kExit:
      announceLast(reporter, "exit: status 3" + after, step);
      std::_Exit(3);
    case FaultAction::kStop:
      announce(reporter,
               "stop: SIGSTOP" + after +
                   (fault.seconds > 0 ? ", continued in " + std::to_string(fault.seconds) + " s"
                                      : ", until the run is ended"),
               step);
      if (fault.seconds > 0) continueLater(fault.seconds);
      raise(SIGSTOP);
      reporter.event("fault", "continued" + after, step);
      return;
    case FaultAction::kSlow:
      slow_ms_ += fault.ms;
      reporter.event("fault", "slow: +" + std::to_string(fault.ms) + " ms a step from" + after,
                     step);
      return;
  }
}

}  // namespace ranklab
