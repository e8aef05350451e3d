// A fault asked for while a rank runs (the workbench's rank grid) reaches the rank as a
// signal from the launcher: "slow" as this queued real-time signal carrying the ms to add to
// every step from then on (kill, stop and continue are SIGKILL, SIGSTOP and SIGCONT).
#pragma once

#include <signal.h>

namespace ranklab {

inline int slowRankSignal() {
  return SIGRTMIN + 3;
}

// What one "slow" from the rank grid adds to each of the rank's steps.
constexpr int kSlowFaultMs = 20;

}  // namespace ranklab
