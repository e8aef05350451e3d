// Executes the job's [[faults]] for this rank: after the rank reported step at_step it is
// killed (SIGKILL), exits with status 3, stops itself (SIGSTOP; a helper process continues
// it after `seconds`), or sleeps `ms` more on every step from then on. Each fault is first
// announced as a "fault" event, so the run's record says when it happened.
#pragma once

#include <cstdint>
#include <vector>

#include "comm/telemetry/reporter.h"
#include "engine/job/job_spec.h"

namespace ranklab {

class FaultInjector {
 public:
  FaultInjector(const std::vector<InjectedFault>& faults, int rank);
  // Takes slowRankSignal() from the launcher (a "slow" asked while the rank runs): its value
  // in ms is added to every later step. Call before the rank says hello.
  static void listenForSlowSignal();
  // After `step` was handed to the reporter.
  void afterStep(int64_t step, Reporter& reporter);

 private:
  void fire(const InjectedFault& fault, int64_t step, Reporter& reporter);

  std::vector<InjectedFault> faults_;  // this rank's
  int slow_ms_ = 0;                    // per step, once a slow fault has fired
};

}  // namespace ranklab
