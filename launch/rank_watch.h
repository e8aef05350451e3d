// Watches each rank of a running job between its telemetry messages, to name the first one
// that failed: a process that is gone (dead: killed, exited, crashed) is found within one
// poll on this host; a rank that sent nothing, not even a heartbeat (they come from a thread
// of their own, also while a collective waits), for telemetry.hang_limit_s is hung; its
// process state says whether it is stopped (SIGSTOP).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/telemetry/telemetry.pb.h"

namespace ranklab {

struct RankFailure {
  int rank = -1;
  bool hung = false;       // else dead
  int64_t last_step = -1;  // the last step it reported; -1 before its first
  double quiet_s = 0;      // since its last message, when found
  std::string process;     // "gone", "stopped (SIGSTOP)", "running", ... as /proc says;
                           // for a rank on another host, which host and what that may mean
  bool starting = false;   // never heard from: judged by RankWatch::kStartupLimit
};

// A rank that fell silent (no message, not even a heartbeat, for the quiet limit: long
// before the hang limit ends the run), or one heard again after that.
struct QuietChange {
  int rank = -1;
  bool quiet = true;       // else heard again
  double quiet_s = 0;      // how long it had been silent (a quiet one)
  int64_t last_step = -1;  // the last step it reported
};

class RankWatch {
 public:
  using Clock = std::chrono::steady_clock;
  RankWatch(int world, std::chrono::seconds hang_limit);

  void heard(const telemetry::Envelope& envelope, Clock::time_point now);
  // The first rank found dead, else the rank quiet longest past the hang limit; nothing
  // while every rank is alive and beating. Ranks that said Bye are not watched; a process
  // gone is dead once its Bye has had kByeGrace to arrive (it may be on the wire).
  std::optional<RankFailure> check(Clock::time_point now);
  static constexpr std::chrono::milliseconds kByeGrace{150};
  // A rank not heard from at all is still starting (MPI's wire-up, the data set, the
  // kernels' warm-up): a loaded 2-core machine took 12.7 s for 4 ranks beside other MPI
  // tests. It is hung only after this, or the hang limit if that is longer.
  static constexpr std::chrono::seconds kStartupLimit{60};
  // Ranks not heard from yet are timed from `now` on: their processes have not been
  // started (a batch job still queued).
  void notStartedBefore(Clock::time_point now);
  pid_t pidOf(int rank) const;         // 0: not on this host, or no Hello yet
  int64_t lastStepOf(int rank) const;  // -1 before its first step
  // SIGKILL to every watched rank still running on this host: after one died or hung the
  // others can only wait in a collective; ending them lets mpirun report and exit at once.
  void killLiveRanks() const;
  // The ranks gone silent for `limit` since the last call, and those heard again; ranks
  // not heard from yet, or that said Bye, are not counted.
  std::vector<QuietChange> quietChanges(Clock::time_point now, Clock::duration limit);
  bool anyNewlyQuiet(Clock::time_point now, Clock::duration limit) const;

 private:
  static std::string remoteState(const std::string& host);

  struct Watched {
    pid_t pid = 0;     // 0: not on this host, or no Hello yet
    std::string host;  // from its Hello; "" before it
    bool said_bye = false;
    bool heard_any = false;   // kStartupLimit applies until its first message
    bool told_quiet = false;  // a QuietChange said it fell silent, none since said otherwise
    int64_t last_step = -1;
    Clock::time_point last_heard;
    std::optional<Clock::time_point> gone_since;
  };
  std::vector<Watched> ranks_;
  std::chrono::seconds hang_limit_;
  std::string host_;
};

// How mpirun says a rank ended, read from its own (untagged) output lines: "signal 9
// (Killed)" or "exit code 3"; "" until it has said so for that rank.
class MpirunVerdict {
 public:
  void read(const std::string& line);
  std::string causeOf(int rank) const;
  // mpirun has seen a rank fail and is ending the job itself: a SIGTERM now can crash it
  // mid-abort (PMIx_Finalize) before it names how the rank ended.
  bool aborting() const { return aborting_; }

 private:
  bool aborting_ = false;
  std::vector<std::pair<int, std::string>> causes_;
  int named_rank_ = -1;  // "Process name: [[j,1],r]" seen, its "Exit code:" line next
};

// "stopped (SIGSTOP)", "running", "sleeping", ... from /proc/PID/stat; "gone" when the
// process has exited (or is a zombie waiting for its parent).
std::string processState(pid_t pid);

}  // namespace ranklab
