// The faults the launcher sends a rank's process from outside (the workbench's rank menu):
// JobRunner::requestFault and what the attempt loop sends each turn.
#include <signal.h>

#include <algorithm>
#include <stdexcept>

#include "engine/job/fault_signals.h"
#include "launch/job_runner.h"
#include "launch/rank_watch.h"
#include "launch/run_recorder.h"

namespace ranklab {

namespace {

// The faults the launcher can send a rank from outside: the action and its signal ("slow"
// is queued with the ms it adds to every step, which the rank's FaultInjector takes).
struct SignalFault {
  const char* action;
  int signal;
  const char* signal_name;
  int queued_value;  // > 0: sent with sigqueue carrying it (slow: its ms); 0: plain kill()
};
const SignalFault kSignalFaults[] = {{"kill", SIGKILL, "SIGKILL", 0},
                                     {"stop", SIGSTOP, "SIGSTOP", 0},
                                     {"continue", SIGCONT, "SIGCONT", 0},
                                     {"slow", slowRankSignal(), "SIGRTMIN+3", kSlowFaultMs}};

const SignalFault* signalFault(const std::string& action) {
  for (const SignalFault& f : kSignalFaults)
    if (action == f.action) return &f;
  return nullptr;
}

void sendSignalFault(pid_t pid, const SignalFault& fault) {
  if (fault.queued_value == 0) {
    ::kill(pid, fault.signal);
    return;
  }
  sigval value{};
  value.sival_int = fault.queued_value;
  sigqueue(pid, fault.signal, value);
}

// What the fault event says it sent: "SIGRTMIN+3 (+20 ms a step)".
std::string sentSignal(const SignalFault& fault) {
  if (fault.queued_value == 0) return fault.signal_name;
  return std::string(fault.signal_name) + " (+" + std::to_string(fault.queued_value) +
         " ms a step)";
}

}  // namespace

void JobRunner::requestFault(int rank, const std::string& action) {
  if (!signalFault(action))
    throw std::invalid_argument("fault action \"" + action +
                                "\": allowed are kill, stop, continue and slow");
  std::lock_guard<std::mutex> lock(faults_mutex_);
  requested_faults_.emplace_back(rank, action);
}

void JobRunner::sendRequestedFaults(const RankWatch& watch, RunRecorder& recorder) {
  std::vector<std::pair<int, std::string>> faults;
  {
    std::lock_guard<std::mutex> lock(faults_mutex_);
    faults.swap(requested_faults_);
  }
  for (const auto& [rank, action] : faults) {
    const pid_t pid = watch.pidOf(rank);
    const int64_t step = watch.lastStepOf(rank);
    const std::string who = "rank " + std::to_string(rank);
    if (pid <= 0) {  // not started yet, or on another host
      recorder.launcherEvent("log", who + ": no process of it on this host to " + action);
      continue;
    }
    const SignalFault& fault = *signalFault(action);  // checked when it was requested
    sendSignalFault(pid, fault);
    recorder.launcherEvent("fault",
                           action + ": " + sentSignal(fault) + " from the workbench" +
                               (step < 0 ? "" : " after step " + std::to_string(step)),
                           rank, std::max<int64_t>(step, 0), recorder.lastStepEndNs(rank));
  }
}

}  // namespace ranklab
