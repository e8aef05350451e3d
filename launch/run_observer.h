// What a run reports while it goes, as the launcher's callbacks: the CLI's progress lines,
// the workbench's live pages and the recorder's owner all implement it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/records.h"

namespace ranklab {

// Receives a run's progress on the thread that called JobRunner::run().
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void onStarted(int64_t /*run_id*/, const std::vector<std::string>& /*command*/) {}
  virtual void onRank(const RankRow&) {}
  virtual void onStep(const StepRow&) {}
  virtual void onEval(const EvalRow&) {}
  virtual void onEvent(const EventRow&) {}
  virtual void onServerLoad(const ServerLoadRow&) {}
  virtual void onSpan(const SpanRow&) {}
  // One line a rank (or mpirun itself, rank -1) printed.
  virtual void onOutput(int /*rank*/, bool /*is_stderr*/, const std::string& /*line*/) {}
  virtual void onFinished(const RunSummary&) {}
};

}  // namespace ranklab
