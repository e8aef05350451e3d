// Every rank's step replayed against the others': a rank computes when a core of its host is
// free, a
// receive waits for its message, a collective ends its transport time after its last member
// arrives (the others wait: the straggler's cost lands on them, as in a real run).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "engine/sim/step_actions.h"
#include "storage/step_record.h"

namespace ranklab {

// A pipeline pass as it ran on the simulated clock.
struct SimPass {
  bool forward = true;
  int micro = 0;
  double start_ns = 0, end_ns = 0;
};

// One rank's step as a real rank records it.
struct SimStep {
  PhaseTimes phases{};
  int64_t bytes_tx = 0, bytes_rx = 0, bytes_tensor = 0, bytes_pipeline = 0, comm_tensor_ns = 0;
  int64_t bytes_raw = 0;  // bytes_tx with a codec's payloads counted as the uncompressed sync
  int64_t bubble_ns = 0;  // of the wait phase: a pipeline's receives (the bubble)
  int64_t allreduces = 0, reduce_scatters = 0, all_gathers = 0, sends = 0, recvs = 0;
  std::vector<SimPass> passes;  // when asked for
};

class StepReplay {
 public:
  explicit StepReplay(const StepModel& model);
  // One step from each rank's `clock` (moved on to its end), rank r sleeping `extra_ns[r]`
  // where its plan says a slowed rank sleeps. Throws std::logic_error naming a rank and its
  // action where the ranks' plans cannot all finish (a plan that deadlocks is a bug).
  void run(std::vector<double>& clock, const std::vector<double>& extra_ns,
           std::vector<SimStep>& out, bool record_passes);

 private:
  struct Rendezvous {
    int arrived = 0;
    double latest = 0;                   // the last arrival of the instance gathering now
    int64_t done = 0;                    // instances completed
    double done_last = 0, done_end = 0;  // the last completed one's last arrival and end
  };
  void postSend(int rank, const SimAction& a, double t);
  void postRecv(int rank, const SimAction& a, double t);
  // Waits (as wait; a receive's as the bubble too) until `key` in `at` is due, and takes it
  // out (a step of accumulated micro-steps sends each tag again); false while it is unknown.
  bool awaitMessage(std::unordered_map<uint64_t, double>& at, uint64_t key, double& t, SimStep& out,
                    bool bubble);
  // Runs rank's actions until one waits (or, where `one`, a single action); true once its
  // step is done.
  bool advance(int rank, std::vector<double>& clock, const std::vector<double>& extra_ns,
               SimStep& out, bool record_passes, bool one);
  const StepModel& model_;
  // Starts a compute of `ns` from `t` on a core of the rank's host; returns its start.
  double takeCore(int rank, double t, double ns);
  std::vector<size_t> next_;                         // each rank's next action
  std::vector<std::vector<double>> core_free_;       // per host, per core: when it is free
  std::vector<std::vector<int64_t>> joined_;         // per rank, per group kind: instances finished
  std::vector<std::vector<bool>> waiting_;           // per rank, per group kind: arrived, not done
  std::vector<std::vector<Rendezvous>> groups_;      // per group kind, per group
  std::unordered_map<uint64_t, double> messages_;    // (sender, tag): when it is there
  std::unordered_map<uint64_t, double> sends_done_;  // a rendezvous send: when its wait ends
  // A rendezvous send posted before its receive: when, and how long it then takes to move.
  std::unordered_map<uint64_t, std::pair<double, double>> unmatched_sends_;
  std::unordered_map<uint64_t, double> posted_recvs_;  // a receive posted before its send
};

}  // namespace ranklab
