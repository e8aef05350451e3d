// Everything the live page draws about one run, as plain data: per-rank progress, the
// curves (kept at a bounded number of points however long the run), test accuracy, and
// each rank's state with the straggler found from its compute/wait profile. Built on the
// run thread's behalf (live) or on a pool thread (stored run); LiveRunModel owns one.
#pragma once

#include <QList>
#include <QPointF>
#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "storage/records.h"
#include "views/models/rank_spread.h"

namespace ranklab {

// Past this many ranks a line per rank is noise: pages draw the ranks' distribution per step
// and the few worst ranks instead, and a stored run is read with fewer rows per rank.
constexpr int kManyRanks = 32;

enum class XAxis { Step = 0, WallTime = 1, MegabytesSent = 2 };
enum class Metric {
  Loss,
  SentMBps,
  ReceivedMBps,
  LossScale,
  Staleness,
  GradNorm,
  LearningRate,
  StepMs,  // time per step, ms
  WaitMs,  // of it, waiting for the other ranks
  BusyMs   // the rest: the rank's own work (a straggler's is the longest)
};
// Silent: the launcher heard nothing from it, not even a heartbeat, for two beats.
enum class RankState { Starting, Running, Waiting, Straggling, Silent, Failed, Done };

// Phases of a step in the order the trainer runs them: the step record's list
// (storage/step_record.h), as dataPhase, forwardPhase, …
enum Phase {
#define RANKLAB_PHASE_ENUM(name, kind) name##Phase,
  RANKLAB_STEP_PHASES(RANKLAB_PHASE_ENUM)
#undef RANKLAB_PHASE_ENUM
      kPhaseCount
};
static_assert(kPhaseCount == kStepPhaseCount);
const char* phaseName(int phase);
PhaseTimes phaseTimes(const StepRow& step);
const char* stateName(RankState state);

// One step of one rank, or consecutive steps merged when a curve has too many points.
struct Sample {
  double step = 0;     // the last step in it
  double time_s = 0;   // when it ended, s since the rank started
  double sent_mb = 0;  // MB the rank had sent by then
  double loss_sum = 0;
  int64_t loss_count = 0;  // finite losses only
  // Extremes of the finite losses in it: a one-step spike survives any merging.
  double loss_min = std::numeric_limits<double>::infinity();
  double loss_max = -std::numeric_limits<double>::infinity();
  double loss_scale = 1;  // the smallest in it: a backoff stays visible
  double staleness_sum = 0;
  double grad_norm_sum = 0, lr_sum = 0;  // over its steps (the norm: 0 where none was measured)
  double tx_bytes = 0, rx_bytes = 0, span_s = 0;  // for MB/s over the sample
  double wait_s = 0;                              // waiting for other ranks, in all
  int64_t count = 0;                              // steps in it
  void merge(const Sample& later);
};

// A curve that never holds more than 2 * kKeep samples: when full, neighbours merge in
// pairs and later steps go into samples twice as wide. O(1) per step, bounded redraws.
class SampleSeries {
 public:
  static constexpr int kKeep = 512;
  void append(const Sample& sample);
  // Fewer samples kept (a run of thousands of ranks); takes effect at the next merge.
  void setKeep(int keep) { keep_ = keep; }
  const std::vector<Sample>& samples() const { return samples_; }
  int64_t stepsPerSample() const { return unit_; }
  // Later samples merge until they hold at least `steps` steps (after a stored run's bins).
  void widen(int64_t steps) { unit_ = std::max(unit_, steps); }
  bool empty() const { return samples_.empty(); }
  // Removes the samples that reach past `step` (a restart trains those steps again);
  // returns the steps they held. A wide sample that straddles `step` goes whole.
  int64_t dropAfter(int64_t step);

 private:
  std::vector<Sample> samples_;
  int64_t unit_ = 1;
  int keep_ = kKeep;
};

struct RankSeries {
  int rank = 0;
  RankState state = RankState::Starting;
  bool straggler = false;  // flagged from the recent compute/wait profile
  bool said_bye = false;
  bool failed = false;
  std::string host;
  int64_t lost_messages = 0;  // telemetry messages that never arrived (sequence holes)
  // The launcher found it silent (no message, not even a heartbeat: stopped, frozen, cut
  // off) and has not heard it since: the rank the others wait for.
  bool quiet = false;
  std::string quiet_text;   // the launcher's words
  int64_t collectives = 0;  // the collectives it completed, counted from 1; -1: unknown (bins)
  int epoch = 0;
  int64_t step = -1;  // latest; -1 before the first
  double loss = 0;    // latest
  int64_t steps = 0;
  int64_t samples = 0;
  int64_t bytes_tx = 0, bytes_rx = 0;
  int64_t bytes_raw = 0;  // bytes_tx uncompressed
  // The memory ledger of the latest step: bytes of parameters, gradients, optimizer state
  // and activations this rank held (ZeRO and model parallelism shrink them).
  int64_t mem_params = 0, mem_grads = 0, mem_optimizer = 0, mem_activations = 0, mem_buffers = 0;
  std::vector<LayerActivations> activations;  // its ledger per layer ("activations" event)
  PhaseTimes total{};                         // over the whole run
  PhaseTimes recent{};                        // over the last kRecentSteps steps
  std::deque<PhaseTimes> recent_steps;
  int64_t last_time_ns = 0;
  double samples_per_s = 0;                             // over the recent steps
  std::deque<std::pair<int64_t, int64_t>> rate_points;  // (time_ns, samples)
  int64_t rate_samples = 0;                             // samples of every rate point but the first
  SampleSeries series;

  double computeSeconds() const;  // data + forward + backward + compress + update
  double commSeconds() const { return double(total[commPhase]) / 1e9; }
  double waitSeconds() const { return double(total[waitPhase]) / 1e9; }
  int64_t memoryBytes() const {
    return mem_params + mem_grads + mem_optimizer + mem_activations + mem_buffers;
  }
};

// The last phase of its latest step with time in it ("comm", "backward", …): what it was
// last doing; "starting" before its first step.
std::string lastPhaseOf(const RankSeries& rank);

// The events the timeline and the live charts mark: what happened to a rank (a fault, the
// launcher's verdict on it, an AMP overflow) and the launcher's recovery.
bool isTimelineMark(const EventRow& event);

// One of them on the charts: at its step, with its kind and text.
struct ChartEvent {
  int64_t step = 0;
  int rank = 0;
  std::string kind;  // fault | failure | overflow | restart | resumed
  std::string text;
};

// A parameter server shard's load, summed over the intervals its rank reported.
struct ShardLoad {
  int shard = 0, rank = 0;
  int64_t key_begin = 0, key_end = 0;  // its slice of the parameters
  int64_t pushes = 0, pulls = 0, bytes_rx = 0, bytes_tx = 0;
  int64_t busy_ns = 0;  // applying updates
  int64_t idle_ns = 0;  // waiting for a request
  int64_t held_ns = 0;  // replies held back (a sync round, the staleness bound), summed
  int64_t interval_ns = 0;
  int64_t max_staleness = 0, version = 0;
};

struct EvalPoint {
  double step = 0, time_s = 0, sent_mb = 0;
  double accuracy = 0, loss = 0;
  int ranks = 0;  // evaluations averaged into it
};

class RunSeries {
 public:
  static constexpr int kRecentSteps = 50;

  void setWorld(int world);  // ranks expected; 0 = as they appear
  // Samples kept a rank: kKeep up to 1,024 ranks, fewer past them (at least 64), so that
  // 4,096 ranks' curves hold as many samples in all as 1,024 ranks' and memory stops growing.
  static constexpr int64_t kRankSamplesPerRun = int64_t{SampleSeries::kKeep} * 1024;
  static int keepPerRank(int ranks);
  // Steps come rank by rank (a stored run): the mean of ranks is built at finish() from
  // the ranks' curves, so ranks may be read by different threads and absorb()ed.
  void setBulkLoad(bool bulk) { bulk_ = bulk; }
  void absorb(RunSeries&& other);  // the other's ranks (none of them here yet) join these
  // A running run read in bulk: its curves so far made from the ranks' (as finish() makes
  // them), and the steps that follow taken one by one, as a live run's.
  void endBulkLoad();
  void addStep(const StepRow& step);
  // A stored run summarised in bins (bulk load only): a rank's bins, `width` steps each,
  // then its steps after them as rows with addStep.
  void addBin(const StepBin& bin, int64_t width);
  // Of one rank's bins, in order: the first that must be read as rows instead, so that
  // the recent-steps profile and the samples/s window are built from real steps (fewer of
  // them for a run of more than kManyRanks ranks: `world`).
  static size_t firstBinAsRows(std::span<const StepBin> bins, int world = 1);
  void addEval(const EvalRow& eval);
  // Keeps the events the charts mark (isTimelineMark), one per step and kind: every rank
  // reports the same overflow.
  void addEvent(const EventRow& event);
  void addServerLoad(const ServerLoadRow& load);  // into its shard's ShardLoad
  void setRank(const RankRow& rank);              // hello, then bye with the exit status
  void addRank(int rank) { rankFor(rank); }       // a row for a rank not seen yet
  void finish(const std::string& status);         // the run ended: no rank is running any more
  // A restart from the checkpoint at `step`: what came after it, as the store rolls back.
  void rollBack(int64_t step);
  void updateStates();  // states and the straggler, after a batch

  const std::vector<RankSeries>& ranks() const { return ranks_; }
  int rowOfRank(int rank) const;                          // -1 when absent
  const SampleSeries& global() const { return global_; }  // mean over ranks, per step
  const std::vector<EvalPoint>& evals() const { return evals_; }
  // A text run's bar (its "baseline" event: a bigram model's validation loss); NaN before
  // it arrives, and for runs of other data.
  double bigramBaseline() const { return bigram_baseline_; }
  // A text run's tokens per sample (its "baseline" event says); 1 for other runs.
  int tokensPerSample() const { return std::max(1, tokens_per_sample_); }
  const std::vector<ChartEvent>& events() const { return events_; }
  const std::vector<ShardLoad>& shards() const { return shards_; }  // by shard
  // Where step `step` lies on an x axis: the mean curve's first sample that reaches it, else
  // the last; NaN before any step.
  double stepX(int64_t step, XAxis x) const;
  bool finished() const { return finished_; }
  bool usesLossScale() const { return uses_loss_scale_; }
  bool usesStaleness() const { return uses_staleness_; }
  bool usesGradNorm() const { return uses_grad_norm_; }  // some step measured its gradient
  bool changesLr() const { return lr_changes_; }         // a schedule or warm-up moved the rate
  int stragglerRank() const { return straggler_rank_; }  // -1: none
  // Runs of more than kManyRanks ranks: each step's spread across the ranks (empty else).
  bool manyRanks() const { return std::max(world_, int(ranks_.size())) > kManyRanks; }
  const SpreadSeries& spread() const { return spread_; }
  // Some step had a finite loss (a simulated run has none).
  bool hasLoss() const { return has_loss_; }
  void setSimulated(bool simulated) { simulated_ = simulated; }
  bool simulated() const { return simulated_; }
  // Of the last kArrivalSteps steps every rank reported (live; a stored run: its last
  // steps), the rank that arrived last most often (it waited least) and in how many; -1: none.
  static constexpr int kArrivalSteps = 100;
  std::pair<int, int> mostOftenLast() const;
  int arrivalSteps() const { return int(last_arrivals_.size()); }
  int64_t lostMessages() const;  // over the ranks: telemetry that never arrived
  const std::string& stragglerReason() const { return straggler_reason_; }

  // Mean ms per step of each phase: the recent steps while running, the whole run after.
  std::array<double, kPhaseCount> phaseMeansMs(int row) const;

 private:
  RankSeries& rankFor(int rank);
  void addTotals(RankSeries& r, const PhaseTimes& phases, int64_t steps, int64_t samples,
                 int64_t tx, int64_t rx, int64_t raw);
  void addToGlobal(const StepRow& step, const Sample& sample);
  void flushGlobal(bool all);
  void globalFromRanks();
  void findStraggler();

  void fitRankKeep();  // every rank's curve to keepPerRank() of the ranks now known

  int world_ = 0;
  int rank_keep_ = SampleSeries::kKeep;
  bool bulk_ = false;
  std::vector<RankSeries> ranks_;  // ordered by rank
  SampleSeries global_;
  struct Pending {
    double loss_sum = 0, time_sum = 0, sent_sum = 0, scale = 1, staleness_sum = 0;
    double tx = 0, rx = 0, span = 0;
    int64_t loss_count = 0;
    int ranks = 0;
    int last_rank = -1;  // the rank that waited least: the last to arrive
    double last_wait_s = 0, most_wait_s = 0;
    SpreadCollector spread;  // many ranks only
  };
  void noteLastArrival(int rank);
  std::deque<int> last_arrivals_;      // of the latest steps, oldest first
  std::map<int, int> arrival_counts_;  // how often each rank is in last_arrivals_
  SpreadSeries spread_;
  void spreadFromRanks(const std::vector<const RankSeries*>& training, size_t i,
                       const Sample& mean);
  void arrivalsFromRanks();
  bool has_loss_ = false;
  bool simulated_ = false;
  std::deque<Pending> pending_;  // steps not yet reported by every rank
  int64_t pending_first_ = 0;
  std::vector<EvalPoint> evals_;
  std::vector<ChartEvent> events_;
  std::vector<ShardLoad> shards_;
  bool finished_ = false;
  bool uses_loss_scale_ = false;
  bool uses_staleness_ = false;
  bool uses_grad_norm_ = false;
  double bigram_baseline_ = std::numeric_limits<double>::quiet_NaN();
  int tokens_per_sample_ = 1;
  bool lr_changes_ = false;
  double first_lr_ = -1;  // the first step's rate, until one differs
  void noteRates(double grad_norm, double lr_first, double lr_last);
  int straggler_rank_ = -1;
  std::string straggler_reason_;
};

// The points of a curve for an x-axis choice, smoothed by a debiased EMA of weight
// `smoothing` (0 = raw). Samples without a value for the metric are skipped. At most
// max_points: neighbouring samples merge when there are more (a chart has so many pixels).
// Raw loss draws a point that merges several steps as its lowest then highest loss, so a
// one-step spike stays on the chart however long the run.
QList<QPointF> curvePoints(const SampleSeries& series, Metric metric, XAxis x, double smoothing,
                           int max_points = 2 * SampleSeries::kKeep);
// Where a sample lies on the x axis: a rank's Sample and the ranks' SpreadSample alike.
template <typename AnySample>
double sampleX(const AnySample& sample, XAxis x) {
  switch (x) {
    case XAxis::Step:
      return sample.step;
    case XAxis::WallTime:
      return sample.time_s;
    case XAxis::MegabytesSent:
      return sample.sent_mb;
  }
  return sample.step;
}
double sampleValue(const Sample& sample, Metric metric);  // NaN where the sample has none

}  // namespace ranklab
