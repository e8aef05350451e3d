// One training step of one rank as the engine runs it, written as data: an ordered list of
// actions (compute a pass, send a micro-batch's activation, receive its gradient, join a
// collective), each with its cost from the calibration. The pipeline's passes come from the
// engine's own PipelineSchedule::passOrder, the bytes from its traffic formula, the memory
// from its estimate; the replay (step_replay.h) runs every rank's list against the others'.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/job/job_spec.h"
#include "engine/sim/calibration.h"
#include "engine/sim/model_parts.h"
#include "engine/train/traffic_formula.h"

namespace ranklab {

// A pipeline's message as the engine moves it (PipelineSchedule::run): the send posted, the
// next receive posted, the send waited for, later the receive waited for.
enum class ActionKind { kCompute, kSleep, kSend, kPostRecv, kSendWait, kRecv, kCollective };
// The groups a rank's collectives run in (parallel_layout.h), and a GPT's tied table's pair.
enum class GroupKind { kData, kTensor, kPipeline, kWorld, kTied, kCount };
// Which of a step's byte counts an action's bytes add to.
enum class ByteClass { kData, kTensor, kPipeline };
// Which of a step's collective counts it adds to.
enum class CollectiveCount { kNone, kAllreduce, kReduceScatterAllGather };

struct SimAction {
  ActionKind kind = ActionKind::kCompute;
  int phase = 0;  // a compute's (or sleep's) phase, an index of kStepPhaseNames
  double ns = 0;  // compute: on a core of its own; collective: the transport's time
  int peer = -1;  // send, receive: the other rank
  int tag = 0;    // send, receive: which message (direction and micro-batch)
  // A send too big to go eagerly: it moves only once its receive is posted, and the sender
  // waits for that (MPI's rendezvous), as the engine waits for each send.
  bool rendezvous = false;
  GroupKind group = GroupKind::kData;
  int64_t bytes = 0;  // this rank's bytes sent
  // What the gradient's uncompressed all-reduce would have sent, where a codec sent `bytes`
  // instead (a real step's bytes_raw); -1: `bytes`.
  int64_t raw_bytes = -1;
  ByteClass bytes_class = ByteClass::kData;
  CollectiveCount counts = CollectiveCount::kNone;
  int pass = 0;  // a pipeline pass's compute: micro + 1 forward, -(micro + 1) backward; 0 none
  bool shared = true;  // a compute slowed by ranks sharing cores (a measured cost is not)
};

// Everything a rank's step costs and sends, shared by the ranks of one (stage, slice).
struct RankPlan {
  std::vector<SimAction> actions;
  int stage = 0, slice = 0;
  bool counts_samples = false;  // a replica's last stage's first slice
};

// How many ranks share one host's cores: the most slots a launch.hosts entry gives, every rank
// on one machine where they fit one (up to 64, what a launch there allows; ranks_per_host's
// hosts are then pretend ones), else parallel.ranks_per_host, else hosts like the calibrated
// one with a rank per core: a job of thousands of ranks is a cluster's.
int ranksPerHost(const JobSpec& job, int cores);

// The calibration's name of an all-reduce as the job places it: "ring" on one machine, "ring
// over 10.0.0.11:2,10.0.0.12:2" across the job's launch.hosts (or hostfile), whose links a
// calibration measures apart from this machine's own.
std::string linkKey(const JobSpec& job, const std::string& algorithm);

// "mlp [256,128] batch 64 fashion-mnist ring": what a step's fixed cost is measured for,
// with the ranks a host.
std::string modelSignature(const JobSpec& job);

// The ranks' plans for `job` (resolved), or std::invalid_argument naming what the simulator
// does not model (a parameter server, a codec) or the layer no calibration covers.
class StepModel {
 public:
  StepModel(const JobSpec& job, const Calibration& calibration, ModelParts& parts);
  const RankPlan& plan(int rank) const { return plans_[plan_of_[rank]]; }
  int ranks() const { return static_cast<int>(plan_of_.size()); }
  // How many ranks share a host (consecutive ranks), and how many of them compute at once
  // there: its cores over each rank's threads. 0 where every rank has cores of its own.
  int hostRanks() const { return here_; }
  int computesAtOnce() const { return at_once_; }
  // Members of each group a rank belongs to (the replay's rendezvous).
  int groupSize(GroupKind kind) const;
  // The index of rank's group of `kind` (unique across ranks of that kind).
  int groupOf(int rank, GroupKind kind) const;
  // Calibration notes: layers fitted rather than measured, links scaled from another world.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  struct PartCosts;
  RankPlan planFor(int stage, int slice);
  // Data, then each micro-batch's passes in the schedule's order, with their messages and the
  // slices' sums.
  void addPasses(PartCosts& costs, std::vector<SimAction>& out);
  void addPass(PartCosts& costs, bool forward, int pass, std::vector<SimAction>& out);
  void addPipelinePasses(PartCosts& costs, int64_t act, int64_t grad, std::vector<SimAction>& out);
  // After the passes: faults' sleeps, the small sums, the gradient's sync, the update.
  void addSync(const PartCosts& costs, std::vector<SimAction>& out);
  double computeNs(const Network& part, bool last_stage, int rows, bool forward);
  double linkNs(const std::string& algorithm, int world, double bytes);
  double stepOverheadNs(int ranks_here);
  void compressedSync(std::vector<SimAction>& out, const Network& part);
  void lowRankSync(std::vector<SimAction>& out, const Network& part, const CodecTiming& c);
  int64_t rawSyncBytes(double floats) const;
  JobSpec job_;
  const Calibration& calibration_;
  ModelParts& parts_;
  LayoutDegrees degrees_;
  int threads_ = 1;
  int here_ = 1;
  int at_once_ = 0;
  double overhead_ns_ = 0;       // a step's fixed cost on hosts of this many ranks (calibrated)
  double model_params_ = 1;      // every part's parameters: what a rank's share is of
  std::vector<RankPlan> plans_;  // one per (stage, slice): every replica's ranks share it
  std::vector<int> plan_of_;     // per rank, its plan's index
  std::vector<std::string> notes_;
};

}  // namespace ranklab
