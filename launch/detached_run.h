// A run in a process of its own (`ranklab run`), so that it outlives the workbench that
// started it: started detached, its console written to a file, and stopped or given a rank
// fault by signals, which is all a viewer in another process needs to drive it.
#pragma once

#include <signal.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace ranklab {

// Starts argv (argv[0] a path) in a session of its own and detached (double fork: not this
// process's child, so neither its exit nor a terminal's hang-up reaches it), stdin from
// /dev/null, stdout and stderr appended to console_path (created 0600, or reopened when it
// is this account's own regular file; never through a link). Returns its pid; throws naming
// argv[0] and the cause when it cannot start.
int64_t startDetached(const std::vector<std::string>& argv, const std::string& console_path);

// Asks the launcher `pid` to stop its run as Ctrl-C does (SIGINT). False when it is gone.
bool requestStopOf(int64_t pid);

// A rank fault for the launcher `pid` (kill | stop | continue | slow, as
// JobRunner::requestFault):
// launcherFaultSignal() (engine/job/fault_signals.h) carrying rank and action. Throws
// std::invalid_argument for another action; false when the launcher is gone.
bool sendRankFault(int64_t pid, int rank, const std::string& action);
// The (rank, action) a fault signal's value carries; nullopt for a value sendRankFault never sends.
std::optional<std::pair<int, std::string>> rankFaultOf(int value);

// In the launcher: takes the fault signal off this thread and every thread started after it, and
// hands each fault sendRankFault sends to `on_fault`, on a thread of its own; a thread that
// still takes the signal hands it on (so none dies of it). One at a time; make it before other
// threads start. Processes started later get an empty signal mask.
class RankFaultListener {
 public:
  using Handler = std::function<void(int rank, const std::string& action)>;
  explicit RankFaultListener(Handler on_fault);
  ~RankFaultListener();  // ends its thread; the signal is this thread's again
  RankFaultListener(const RankFaultListener&) = delete;
  RankFaultListener& operator=(const RankFaultListener&) = delete;

 private:
  Handler on_fault_;
  std::thread thread_;
  struct sigaction previous_ {};  // the signal's action before, restored at the end
};

}  // namespace ranklab
