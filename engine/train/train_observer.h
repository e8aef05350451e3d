// What a training rank reports: the per-step record, evaluations, events and server load,
// through a TrainObserver, so the engine never touches sockets.
#pragma once

#include <cstdint>
#include <string>

#include "comm/collectives/allreduce.h"
#include "comm/ps/parameter_shard.h"
#include "engine/model/device_trace.h"
#include "storage/step_record.h"

namespace ranklab {

// One step on this rank: where it belongs, and what it measured (storage/step_record.h).
struct StepStats : StepMeasures {
  int64_t step = 0;  // 1-based, counted over all epochs
  int epoch = 0;     // 1-based
  int64_t samples = 0;
};

struct EvalStats {
  int64_t step = 0;
  int epoch = 0;
  double test_loss = 0;  // over the whole test set (all ranks' slices combined)
  double test_accuracy = 0;
};

class TrainObserver {
 public:
  virtual ~TrainObserver() = default;
  virtual void onStep(const StepStats&) {}
  virtual void onEval(const EvalStats&) {}
  virtual void onEvent(const std::string& /*kind*/, const std::string& /*text*/, int64_t /*step*/) {
  }
  // A parameter server rank's load over the last interval.
  virtual void onServerLoad(const ServerLoad&) {}
  // Something that took time outside the steps (kind "evaluate", "checkpoint") after
  // `step`, or a pipeline's pass inside step `step` ("F3", "B3": micro-batch 3's forward,
  // backward); start and end on the steady clock (comm/steady_clock.h), ns.
  virtual void onSpan(const std::string& /*kind*/, int64_t /*step*/, int64_t /*start_ns*/,
                      int64_t /*end_ns*/) {}
  // The pieces of step `step`'s communication (ring hops, buckets), for a sampled step.
  virtual void onCommSpans(int64_t /*step*/, const CommSpans& /*spans*/) {}
  // What the device computed in a sampled step, piece by piece, on its own clock.
  virtual void onDeviceSpans(int64_t /*step*/, const DeviceSpans& /*spans*/) {}
  // Stepping pauses now (an evaluation or a checkpoint follows): progress held back for
  // batching should leave before it.
  virtual void onPause() {}
};

struct TrainResult {
  int64_t steps = 0;
  int64_t train_ns = 0;  // the loop's wall time less evaluation
  EvalStats last_eval;
};

}  // namespace ranklab
