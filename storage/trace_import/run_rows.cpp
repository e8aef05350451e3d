#include "storage/trace_import/run_rows.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>

namespace ranklab {
namespace {

// The magnitudes of a step's numbers that the store sums (its keys and clock are not).
double summedMagnitude(const StepRow& row) {
  double total = std::fabs(double(row.samples)) + std::fabs(double(row.comm_hidden_ns));
#define RANKLAB_ADD_PHASE(name, kind) total += std::fabs(double(row.name##_ns));
  RANKLAB_STEP_PHASES(RANKLAB_ADD_PHASE)
#undef RANKLAB_ADD_PHASE
#define RANKLAB_ADD_MEASURE(type, name, init) \
  if constexpr (std::is_same_v<type, int64_t>) total += std::fabs(double(row.name));
  RANKLAB_STEP_MEASURES(RANKLAB_ADD_MEASURE)
#undef RANKLAB_ADD_MEASURE
  return total;
}

}  // namespace

void ImportedRunRows::add(StepRow row) {
  sum_ += summedMagnitude(row);
  if (!(sum_ <= double(kMaxRunSum)))
    throw std::runtime_error(
        file_of_(row.rank) + ": step " + std::to_string(row.step) + " (rank " +
        std::to_string(row.rank) +
        "): the run's step times and bytes add up past 2^60 (36 years of rank time, or an "
        "exabyte) by this step: overlapping or forged steps? Refused, since the sums of the "
        "run would no longer fit in 64 bits");
  const int64_t start = row.time_ns - (phaseTotal(row.phases()) - row.comm_hidden_ns);
  auto [it, added] = span_.try_emplace(row.rank, start, row.time_ns);
  it->second = {std::min(it->second.first, start), std::max(it->second.second, row.time_ns)};
  wall_ns_ = std::max(wall_ns_, row.time_ns);
  ++steps_;
  store_.add(std::move(row));
}

void ImportedRunRows::add(RankRow row) {
  const auto it = span_.find(row.rank);
  if (it != span_.end()) row.train_ns = it->second.second - it->second.first;
  train_ns_ = std::max(train_ns_, row.train_ns);
  store_.add(std::move(row));
}

RunEnd ImportedRunRows::end(const std::string& status) const {
  return {status, double(wall_ns_) / 1e9, double(train_ns_) / 1e9};
}

}  // namespace ranklab
