// The rows of an imported run on their way into the store (RunStore::storeWholeRun): every
// step's numbers added up as they pass, and the run refused, naming the file and the step,
// once they pass 2^60, so that every sum the store, the views and the analyses take over a
// run (per rank, per bin, over every rank) stays inside int64; each rank's training time
// and the run's wall time taken from its steps on the way.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "storage/run_store.h"

namespace ranklab {

class ImportedRunRows : public RunRowSink {
 public:
  // 2^60: headroom of 8 under int64 for a sum taken over every rank and phase at once.
  static constexpr int64_t kMaxRunSum = int64_t(1) << 60;

  // `file_of` names the file a rank's rows come from.
  ImportedRunRows(RunRowSink& store, std::function<std::string(int rank)> file_of)
      : store_(store), file_of_(std::move(file_of)) {}

  void add(RankRow row) override;  // with its train_ns, from the steps handed in before it
  void add(StepRow row) override;  // throws std::runtime_error past kMaxRunSum
  void add(SpanRow row) override { store_.add(std::move(row)); }

  // The run's end: its wall time (the last step's end) and training time (the longest rank's).
  RunEnd end(const std::string& status) const;
  int64_t steps() const { return steps_; }

 private:
  RunRowSink& store_;
  std::function<std::string(int)> file_of_;
  double sum_ = 0;  // of every step's numbers' magnitudes: a double, which cannot wrap
  int64_t steps_ = 0, wall_ns_ = 0, train_ns_ = 0;
  std::map<int, std::pair<int64_t, int64_t>> span_;  // rank: first step's start, last's end
};

}  // namespace ranklab
