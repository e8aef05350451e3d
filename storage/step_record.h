// The per-step record, listed once. The engine's StepStats, the telemetry encoder and
// decoder, the store's StepRow, its SQL columns, the CSV export, the per-rank bins and the
// views' phases are all made from these two lists, so a new phase (pipeline send/recv,
// bubble) is one line here plus its field in comm/telemetry/telemetry.proto (a test checks
// that the proto and the SQL table agree with the lists).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

// The phases of a step in the order they happen, each a duration in ns (`<name>_ns`), and
// what kind of time each is: loading the batch, forward, backward, encoding gradients
// (compute); waiting for the slowest peer (wait); moving bytes (comm); the update (compute).
#define RANKLAB_STEP_PHASES(X) \
  X(data, kCompute)            \
  X(forward, kCompute)         \
  X(backward, kCompute)        \
  X(compress, kCompute)        \
  X(wait, kWait)               \
  X(comm, kComm)               \
  X(update, kCompute)

// Everything else a step measures: X(type, name, default). (comm_hidden_ns, the part of
// comm_ns that overlapped backward, is a field of its own below: on the wire it sits
// inside Phases, and the wire's field numbers are never changed.)
#define RANKLAB_STEP_MEASURES(X)                                                                  \
  X(double, loss, 0) /* this rank's batch mean */                                                 \
  X(int64_t, bytes_tx, 0)                                                                         \
  X(int64_t, bytes_rx, 0)                                                                         \
  X(int64_t, bytes_raw, 0) /* what bytes_tx would have been uncompressed */                       \
  X(double, lr, 0)                                                                                \
  X(double, loss_scale, 1)       /* AMP's dynamic loss scale in this step (1 without) */          \
  X(bool, overflow, false)       /* AMP found inf/NaN on some rank: every rank skipped */         \
  X(int64_t, staleness, 0)       /* ps-async: server updates between pull and push */             \
  X(int64_t, stashed, 0)         /* pipeline: most micro-batches held for backward at once */     \
  X(int64_t, stashed_bytes, 0)   /* pipeline: their layer outputs at that peak */                 \
  X(int64_t, mem_params, 0)      /* the memory ledger, bytes this rank holds: parameters */       \
  X(int64_t, mem_grads, 0)       /* gradients (ZeRO 2: its shard) */                              \
  X(int64_t, mem_optimizer, 0)   /* optimizer state (ZeRO: its shard's) */                        \
  X(int64_t, mem_activations, 0) /* layer outputs kept for backward, at the step's peak */        \
  X(int64_t, allreduces, 0)      /* collectives this rank took part in, in this step */           \
  X(int64_t, reduce_scatters, 0)                                                                  \
  X(int64_t, all_gathers, 0)                                                                      \
  X(int64_t, sends, 0) /* point-to-point messages: pipeline activations, server pushes */         \
  X(int64_t, recvs, 0)                                                                            \
  X(int64_t, mem_buffers, 0) /* one layer's scratch: ZeRO 2's gradient, ZeRO 3's parameters */    \
  X(double, grad_norm, 0) /* the update's whole gradient's L2 norm (before grad_clip); 0: none */ \
  X(int64_t, bytes_tensor, 0)   /* of bytes_tx: the tensor slices' all-reduces (f and g) */       \
  X(int64_t, bytes_pipeline, 0) /* of bytes_tx: activations, gradients, the tied table, to stages \
                                 */                                                               \
  X(int64_t, comm_tensor_ns, 0) /* of comm_ns: the tensor slices' f and g (inside the passes) */  \
  X(int64_t, comm_pipeline_ns, 0) /* of comm_ns: a GPT's token table between its end stages */

namespace ranklab {

enum class PhaseKind { kCompute, kWait, kComm };

#define RANKLAB_COUNT_PHASE(name, kind) +1
constexpr int kStepPhaseCount = 0 RANKLAB_STEP_PHASES(RANKLAB_COUNT_PHASE);
#undef RANKLAB_COUNT_PHASE

// "data", "forward", … in step order.
constexpr std::array<const char*, kStepPhaseCount> kStepPhaseNames = {
#define RANKLAB_PHASE_NAME(name, kind) #name,
    RANKLAB_STEP_PHASES(RANKLAB_PHASE_NAME)
#undef RANKLAB_PHASE_NAME
};

constexpr std::array<PhaseKind, kStepPhaseCount> kStepPhaseKinds = {
#define RANKLAB_PHASE_KIND(name, kind) PhaseKind::kind,
    RANKLAB_STEP_PHASES(RANKLAB_PHASE_KIND)
#undef RANKLAB_PHASE_KIND
};

using PhaseTimes = std::array<int64_t, kStepPhaseCount>;  // ns, in kStepPhaseNames order

// The whole step: every phase.
inline int64_t phaseTotal(const PhaseTimes& phases) {
  int64_t sum = 0;
  for (int64_t ns : phases) sum += ns;
  return sum;
}

// The sum of the phases of one kind.
inline int64_t phaseSum(const PhaseTimes& phases, PhaseKind kind) {
  int64_t sum = 0;
  for (int p = 0; p < kStepPhaseCount; ++p)
    if (kStepPhaseKinds[size_t(p)] == kind) sum += phases[size_t(p)];
  return sum;
}

// What one step measured, on a rank: the phases and the measures above. StepStats (the
// engine's) and StepRow (the store's) add where the step belongs.
struct StepMeasures {
#define RANKLAB_PHASE_FIELD(name, kind) int64_t name##_ns = 0;
  RANKLAB_STEP_PHASES(RANKLAB_PHASE_FIELD)
#undef RANKLAB_PHASE_FIELD
  int64_t comm_hidden_ns = 0;  // part of comm_ns that overlapped backward (bucketing)
#define RANKLAB_MEASURE_FIELD(type, name, init) type name = init;
  RANKLAB_STEP_MEASURES(RANKLAB_MEASURE_FIELD)
#undef RANKLAB_MEASURE_FIELD

  PhaseTimes phases() const {
#define RANKLAB_PHASE_VALUE(name, kind) name##_ns,
    return {RANKLAB_STEP_PHASES(RANKLAB_PHASE_VALUE)};
#undef RANKLAB_PHASE_VALUE
  }
};

// The store's step columns in StepRow's order: where the step belongs, the phases, the
// measures, when it ended. The SQL and the CSV export are made from it.
inline const std::vector<std::string>& stepRowColumns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> c = {"run_id", "rank", "step", "epoch", "samples"};
#define RANKLAB_PHASE_COLUMN(name, kind) c.push_back(#name "_ns");
    RANKLAB_STEP_PHASES(RANKLAB_PHASE_COLUMN)
#undef RANKLAB_PHASE_COLUMN
    c.push_back("comm_hidden_ns");
#define RANKLAB_MEASURE_COLUMN(type, name, init) c.push_back(#name);
    RANKLAB_STEP_MEASURES(RANKLAB_MEASURE_COLUMN)
#undef RANKLAB_MEASURE_COLUMN
    c.push_back("time_ns");
    return c;
  }();
  return columns;
}

// The columns joined by `separator`.
inline std::string joinedStepColumns(const std::string& separator) {
  std::string text;
  for (const std::string& c : stepRowColumns()) text += (text.empty() ? "" : separator) + c;
  return text;
}

}  // namespace ranklab
