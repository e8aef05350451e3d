#include "storage/analysis/step_measure.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace ranklab {

double stepPeriodSeconds(const std::vector<std::vector<int64_t>>& ends_per_rank, int skip) {
  double slowest = 0;
  for (const auto& ends : ends_per_rank) {
    std::vector<double> periods;
    for (size_t i = static_cast<size_t>(skip) + 1; i < ends.size(); ++i)
      periods.push_back(static_cast<double>(ends[i] - ends[i - 1]));
    if (periods.empty()) continue;
    std::nth_element(periods.begin(), periods.begin() + periods.size() / 2, periods.end());
    slowest = std::max(slowest, periods[periods.size() / 2] / 1e9);
  }
  return slowest;
}

void StepMeasurer::add(const StepRow& s) {
  ends_[s.rank].push_back(s.time_ns);
  phases_[s.rank].push_back(s.phases());
  memory_ = std::max(
      memory_, s.mem_params + s.mem_grads + s.mem_optimizer + s.mem_activations + s.mem_buffers);
}

MeasuredStep StepMeasurer::result() const {
  std::vector<std::vector<int64_t>> per_rank;
  int slowest = -1;  // the rank whose last step ended last
  int64_t latest = -1;
  for (const auto& [rank, times] : ends_) {
    per_rank.push_back(times);
    if (!times.empty() && times.back() > latest) latest = times.back(), slowest = rank;
  }
  MeasuredStep m;
  const size_t steps = per_rank.empty() ? 0 : per_rank.front().size();
  m.step_s = stepPeriodSeconds(per_rank, steps > 6 ? 3 : 0);
  m.memory_bytes = memory_;
  if (slowest < 0) return m;
  PhaseTimes median{};
  for (int i = 0; i < kStepPhaseCount; ++i) {
    std::vector<int64_t> v;
    for (const PhaseTimes& t : phases_.at(slowest)) v.push_back(t[size_t(i)]);
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    median[size_t(i)] = v[v.size() / 2];
  }
  m.phases = median;
  return m;
}

MeasuredStep measuredStep(const std::vector<StepRow>& steps) {
  StepMeasurer measurer;
  for (const StepRow& s : steps) measurer.add(s);
  return measurer.result();
}

MeasuredStep measuredStep(RunStore& store, int64_t run) {
  StepMeasurer measurer;
  store.forEachStep(run, [&](const StepRow& s) { measurer.add(s); });
  return measurer.result();
}

namespace {

std::optional<PredictedStep> readPrediction(const std::string& text) {
  const auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return std::nullopt;
  const auto number = [&doc](const char* key) {
    const auto it = doc.find(key);
    return it != doc.end() && it->is_number() ? it->get<double>() : 0.0;
  };
  PredictedStep p;
  p.simulated_run = int64_t(number("simulated_run"));
  p.step_s = number("step_s");
  p.memory_bytes = int64_t(number("memory_bytes"));
  const auto phases = doc.find("phases");
  if (phases == doc.end() || !phases->is_object() || phases->empty()) return p;
  PhaseTimes t{};
  for (int i = 0; i < kStepPhaseCount; ++i) {
    const auto it = phases->find(kStepPhaseNames[size_t(i)]);
    if (it != phases->end() && it->is_number())
      t[size_t(i)] = int64_t(it->get<double>() * 1e9 + 0.5);
  }
  p.phases = t;
  return p;
}

}  // namespace

std::optional<PredictedStep> predictionOf(const std::vector<EventRow>& events) {
  std::optional<PredictedStep> latest;
  for (const EventRow& e : events)
    if (e.kind == "prediction")
      if (auto p = readPrediction(e.text)) latest = p;
  return latest;
}

double relativeError(double predicted, double measured) {
  return measured != 0 ? (predicted - measured) / measured : 0;
}

}  // namespace ranklab
