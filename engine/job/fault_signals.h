// A fault asked for while a run goes (the workbench's rank grid) travels by signal: to the
// launcher as launcherFaultSignal() carrying rank and action (launch/detached_run.h), then
// to the rank: "slow" as slowRankSignal() carrying the ms to add to every step from then on
// (kill, stop and continue are SIGKILL, SIGSTOP and SIGCONT). Both are queued real-time
// signals: a second one sent before the first is taken is not merged into it.
#pragma once

#include <signal.h>

namespace ranklab {

inline int launcherFaultSignal() {
  return SIGRTMIN + 2;
}

inline int slowRankSignal() {
  return SIGRTMIN + 3;
}

// What one "slow" from the rank grid adds to each of the rank's steps.
constexpr int kSlowFaultMs = 20;

}  // namespace ranklab
