// Plain rows of the run store: what a run, a rank, a step, an eval and an event are.
// Times are nanoseconds; *_s fields are seconds. No SQLite or Qt here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "storage/activations_event.h"
#include "storage/record_fields.h"
#include "storage/step_record.h"

namespace ranklab {

// What the launcher knows about a run before any rank starts.
struct NewRun {
  RANKLAB_NEW_RUN_FIELDS(RANKLAB_ROW_MEMBER)
};
template <typename R, typename Visit>
requires std::is_same_v<std::remove_const_t<R>, NewRun>
void visitColumns(R& row, Visit&& visit) {
  RANKLAB_NEW_RUN_FIELDS(RANKLAB_VISIT_COLUMN)
}

// One row of `runs`: its NewRun and what the store adds.
struct RunRow : NewRun {
  RANKLAB_RUN_FIELDS(RANKLAB_ROW_MEMBER)
};

// A run's status as people see it: "pending" while its batch job waits in the scheduler's
// queue (the row says "running": its launcher is alive and following it).
inline std::string shownStatus(const RunRow& run) {
  return run.status == "running" && run.scheduler_state == "PENDING" ? "pending" : run.status;
}

// A run's batch job as its scheduler reports it (RunStore::setSchedulerState).
struct SchedulerRecord {
  std::string job;        // the job id
  std::string state;      // PENDING, RUNNING, COMPLETED, CANCELLED, TIMEOUT, NODE_FAIL, ...
  std::string reason;     // why it waits
  std::string nodes;      // the nodes it got
  std::string exit_code;  // "exit:signal", once it ended
};
template <typename R, typename Visit>
requires std::is_same_v<std::remove_const_t<R>, RunRow>
void visitColumns(R& row, Visit&& visit) {
  RANKLAB_RUN_FIELDS(RANKLAB_VISIT_COLUMN)
  RANKLAB_NEW_RUN_FIELDS(RANKLAB_VISIT_COLUMN)
}

// One row of `ranks`: filled by Hello, updated by Bye.
struct RankRow {
  int64_t run_id = 0;
  int rank = 0;
  RANKLAB_RANK_FIELDS(RANKLAB_ROW_MEMBER)
};
RANKLAB_ROW_VISITOR(RankRow, RANKLAB_RANK_FIELDS, )

// One row of `steps`: one rank, one optimizer step.
struct StepRow : StepMeasures {
  int64_t run_id = 0;
  int rank = 0;
  int64_t step = 0;
  int epoch = 0;
  int64_t samples = 0;  // samples this rank processed in this step
  int64_t time_ns = 0;  // when the step ended, ns since the rank's start (steady clock)
};

// One row of `step_bins`: consecutive steps of one rank summed up when the run ended, so a
// view draws a long run from ~1,000 bins per rank instead of every step.
struct StepBin {
  int rank = 0;
#define RANKLAB_BIN_MEMBER(type, name, sum, init) type name = init;
  RANKLAB_STEP_BIN_FIELDS(RANKLAB_BIN_MEMBER)
#undef RANKLAB_BIN_MEMBER
#define RANKLAB_PHASE_FIELD(name, kind) int64_t name##_ns = 0;
  RANKLAB_STEP_PHASES(RANKLAB_PHASE_FIELD)
#undef RANKLAB_PHASE_FIELD

  PhaseTimes phases() const {
#define RANKLAB_PHASE_VALUE(name, kind) name##_ns,
    return {RANKLAB_STEP_PHASES(RANKLAB_PHASE_VALUE)};
#undef RANKLAB_PHASE_VALUE
  }
};

// A bin's columns: rank, its list's, then each phase's (its run_id is the caller's).
template <typename R, typename Visit>
requires std::is_same_v<std::remove_const_t<R>, StepBin>
void visitColumns(R& row, Visit&& visit) {
  visit("rank", row.rank);
#define RANKLAB_VISIT_BIN(type, name, sum, init) visit(#name, row.name);
  RANKLAB_STEP_BIN_FIELDS(RANKLAB_VISIT_BIN)
#undef RANKLAB_VISIT_BIN
#define RANKLAB_VISIT_PHASE(name, kind) visit(#name "_ns", row.name##_ns);
  RANKLAB_STEP_PHASES(RANKLAB_VISIT_PHASE)
#undef RANKLAB_VISIT_PHASE
}

// One row of `evals`.
struct EvalRow {
  int64_t run_id = 0;
  int rank = 0;
  RANKLAB_EVAL_FIELDS(RANKLAB_ROW_MEMBER)
  int64_t time_ns = 0;
};
RANKLAB_ROW_VISITOR(EvalRow, RANKLAB_EVAL_FIELDS, visit("time_ns", row.time_ns);)

// One row of `events`; rank -1 is the launcher itself.
struct EventRow {
  int64_t run_id = 0;
  int rank = 0;
  RANKLAB_EVENT_FIELDS(RANKLAB_ROW_MEMBER)
  int64_t time_ns = 0;
};
RANKLAB_ROW_VISITOR(EventRow, RANKLAB_EVENT_FIELDS, visit("time_ns", row.time_ns);)

// One row of `spans` (storage/record_fields.h).
struct SpanRow {
  int64_t run_id = 0;
  int rank = 0;
  RANKLAB_SPAN_FIELDS(RANKLAB_ROW_MEMBER_AS)
};
RANKLAB_ROW_VISITOR_WITH(SpanRow, RANKLAB_SPAN_FIELDS, RANKLAB_VISIT_COLUMN_AS, )

// True for a piece of a step's communication (a ring hop, a bucket, a shard's push or reply).
inline bool isCommSpan(const SpanRow& span) {
  return span.kind == "ring-rs" || span.kind == "ring-ag" || span.kind == "bucket" ||
         span.kind == "ps-push" || span.kind == "ps-reply";
}

// The collectives an imported run's spans are named after, as PyTorch spells them.
inline constexpr const char* kCollectiveSpanKinds[] = {
    "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all",
    "barrier",    "send",       "recv",           "gather",    "scatter"};

// True for one collective of an imported run (its `part` numbers it on every rank alike).
inline bool isCollectiveSpan(const SpanRow& span) {
  for (const char* kind : kCollectiveSpanKinds)
    if (span.kind == kind) return true;
  return false;
}

// True for a piece of a sampled step's work on its device (engine/model/device_trace.h): the
// batch's copy, a layer's forward or backward, the loss head, the update.
inline bool isDeviceSpan(const SpanRow& span) {
  return span.kind.rfind("dev-", 0) == 0;
}

// Steps first..last of every rank, and the spans among them (for a timeline window).
struct StepWindow {
  std::vector<StepRow> steps;
  std::vector<SpanRow> spans;    // after a step from first - 1 to last
  std::vector<EventRow> events;  // a rank's faults, failures, overflows in first..last
};

// One row of `server_loads`: a parameter server shard's load over one interval, ending at
// time_ns.
struct ServerLoadRow {
  int64_t run_id = 0;
  int rank = 0;
  RANKLAB_SERVER_LOAD_FIELDS(RANKLAB_ROW_MEMBER)
  int64_t time_ns = 0;
};
RANKLAB_ROW_VISITOR(ServerLoadRow, RANKLAB_SERVER_LOAD_FIELDS, visit("time_ns", row.time_ns);)

// Everything received since the last flush; written in one transaction.
struct RecordBatch {
  std::vector<RankRow> ranks;  // upserted by (run_id, rank)
  std::vector<StepRow> steps;
  std::vector<EvalRow> evals;
  std::vector<EventRow> events;
  std::vector<ServerLoadRow> server_loads;
  std::vector<SpanRow> spans;
  bool empty() const {
    return ranks.empty() && steps.empty() && evals.empty() && events.empty() &&
           server_loads.empty() && spans.empty();
  }
  void clear() {
    ranks.clear();
    steps.clear();
    evals.clear();
    events.clear();
    server_loads.clear();
    spans.clear();
  }
};

struct RankSummary {
  int rank = 0;
  std::string host;  // the host name the rank reported
  int64_t steps = 0;
  double compute_s = 0;  // data + forward + backward + compress + update
  double comm_s = 0;
  double wait_s = 0;
  double comm_hidden_s = 0;   // part of comm_s that overlapped backward
  double mean_staleness = 0;  // ps-async: mean over this rank's steps
  int64_t bytes_tx = 0;
  int64_t bytes_raw = 0;       // what the same collective would have sent uncompressed
  int64_t bytes_tensor = 0;    // of bytes_tx: to its tensor slices
  int64_t bytes_pipeline = 0;  // of bytes_tx: to other pipeline stages
  // Its "traffic" event: "formula bytes per step: data N tensor N pipeline N" ("-": none);
  // empty where the run recorded none.
  std::string traffic_formula;
  // Its "activations" event: the memory ledger per layer, with a GPT's formulas.
  std::vector<LayerActivations> activations;
  int64_t overflow_steps = 0;      // AMP steps skipped for inf/NaN
  int64_t stashed_peak = 0;        // pipeline: most micro-batches held for backward at once
  int64_t stashed_bytes_peak = 0;  // pipeline: the most bytes of layer outputs they held
  int64_t lost_messages = 0;       // telemetry messages that never arrived (ranks.seq_gaps)
  // The memory ledger: the most bytes held over the run's steps.
  struct Memory {
    int64_t params = 0, grads = 0, optimizer = 0, activations_peak = 0;
    int64_t buffers = 0;  // one layer's scratch (ZeRO 2 and 3), apart from the model states
  } memory;
  // Collectives this rank took part in, per step (mean over its steps).
  struct Collectives {
    double allreduce = 0, reduce_scatter = 0, all_gather = 0, send = 0, recv = 0;
  } collectives;
};

// One parameter server shard over the whole run.
struct ServerSummary {
  int rank = 0;
  int shard = 0;
  int64_t key_begin = 0;
  int64_t key_end = 0;
  int64_t pushes = 0;
  int64_t pulls = 0;
  int64_t bytes_rx = 0;
  int64_t bytes_tx = 0;
  int64_t bytes_raw = 0;  // what bytes_tx would have been uncompressed
  double busy_s = 0;
  double idle_s = 0;
  int64_t max_staleness = 0;
};

// What `ranklab runs show` prints.
struct RunSummary {
  RunRow run;
  int64_t steps = 0;                    // optimizer steps (the most any rank took)
  int64_t samples = 0;                  // training samples over all ranks
  double samples_per_s = 0;             // samples / run.train_s
  std::optional<double> test_accuracy;  // last evaluation
  std::optional<double> test_loss;      // NaN when diverged
  bool diverged = false;                // a rank's last test loss was not finite
  int64_t bytes_tx = 0;
  int64_t bytes_raw = 0;       // uncompressed equivalent of bytes_tx (equal without a codec)
  int64_t overflow_steps = 0;  // AMP steps skipped for inf/NaN (the same on every rank)
  int64_t restarts = 0;        // automatic restarts from a checkpoint (train.max_restarts)
  // A GPT's latest text (its last "sample" event) and the step it was written at.
  std::optional<std::string> sample;
  int64_t sample_step = 0;
  // A text run's bar: a bigram model's nats/token on its validation split (its "baseline").
  std::optional<double> bigram_baseline;
  std::vector<RankSummary> ranks;
  std::vector<ServerSummary> servers;  // parameter server shards; empty otherwise
};

// How many times fewer bytes went on the wire than uncompressed: none without a codec
// (raw equals sent) or without bytes.
inline std::optional<double> compressionRatio(int64_t bytes_raw, int64_t bytes_tx) {
  if (bytes_raw <= 0 || bytes_tx <= 0 || bytes_raw == bytes_tx) return std::nullopt;
  return double(bytes_raw) / double(bytes_tx);
}

}  // namespace ranklab
