#include "app/worker/fault_injector.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

namespace ranklab {

namespace {

// The announcement must leave before the process does: zmq sends from its own thread.
void announce(Reporter& reporter, const std::string& text, int64_t step) {
  reporter.event("fault", text, step);
  reporter.flush();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
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

void FaultInjector::afterStep(int64_t step, Reporter& reporter) {
  for (const InjectedFault& fault : faults_)
    if (fault.at_step == step) fire(fault, step, reporter);
  if (slow_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms_));
}

void FaultInjector::fire(const InjectedFault& fault, int64_t step, Reporter& reporter) {
  const std::string after = " after step " + std::to_string(step);
  if (fault.action == "kill") {
    announce(reporter, "kill: SIGKILL" + after, step);
    raise(SIGKILL);
  } else if (fault.action == "exit") {
    announce(reporter, "exit: status 3" + after, step);
    std::_Exit(3);
  } else if (fault.action == "stop") {
    announce(reporter,
             "stop: SIGSTOP" + after +
                 (fault.seconds > 0 ? ", continued in " + std::to_string(fault.seconds) + " s"
                                    : ", until the run is ended"),
             step);
    if (fault.seconds > 0) continueLater(fault.seconds);
    raise(SIGSTOP);
    reporter.event("fault", "continued" + after, step);
  } else if (fault.action == "slow") {
    slow_ms_ += fault.ms;
    reporter.event("fault", "slow: +" + std::to_string(fault.ms) + " ms a step from" + after, step);
  }
}

}  // namespace ranklab
