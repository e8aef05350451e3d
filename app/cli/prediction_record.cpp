#include "app/cli/prediction_record.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <vector>

#include "app/cli/json_output.h"
#include "app/cli/report_format.h"
#include "engine/job/job_file.h"
#include "engine/sim/simulator.h"

namespace ranklab {

namespace {

// What makes two jobs the same step for the simulator: everything but their length, their
// evaluations and their telemetry.
bool sameStep(const JobSpec& a, const JobSpec& b) {
  return a.model == b.model && a.data.dataset == b.data.dataset &&
         a.train.batch_size == b.train.batch_size &&
         a.train.accumulate_steps == b.train.accumulate_steps &&
         a.train.optimizer == b.train.optimizer && a.train.grad_clip == b.train.grad_clip &&
         a.train.device == b.train.device && a.parallel == b.parallel &&
         a.compression == b.compression && a.amp == b.amp && a.fault == b.fault &&
         a.faults == b.faults;
}

std::optional<JobSpec> jobOf(const RunRow& run) {
  try {
    return parseJob(run.job_toml, "run " + std::to_string(run.id) + "'s job");
  } catch (const std::exception&) {
    return std::nullopt;  // a job this ranklab cannot read: no match
  }
}

std::string hostOf(RunStore& store, int64_t run) {
  const std::vector<RankRow> ranks = store.ranks(run);
  return ranks.empty() ? "" : ranks.front().host;
}

// (predicted - measured) / measured: + where the prediction was too high.
double relative(double predicted, double measured) {
  return measured != 0 ? (predicted - measured) / measured : 0;
}

}  // namespace

nlohmann::json measuredStep(RunStore& store, int64_t run) {
  std::map<int, std::vector<int64_t>> ends;
  std::map<int, std::vector<PhaseTimes>> phases;
  int64_t memory = 0;
  store.forEachStep(run, [&](const StepRow& s) {
    ends[s.rank].push_back(s.time_ns);
    phases[s.rank].push_back(s.phases());
    memory = std::max(
        memory, s.mem_params + s.mem_grads + s.mem_optimizer + s.mem_activations + s.mem_buffers);
  });
  std::vector<std::vector<int64_t>> per_rank;
  int slowest = -1;
  int64_t latest = -1;
  for (const auto& [rank, times] : ends) {
    per_rank.push_back(times);
    if (!times.empty() && times.back() > latest) latest = times.back(), slowest = rank;
  }
  const size_t steps = per_rank.empty() ? 0 : per_rank.front().size();
  nlohmann::json phase_json = nlohmann::json::object();
  if (slowest >= 0)
    for (int i = 0; i < kStepPhaseCount; ++i) {
      std::vector<int64_t> v;
      for (const PhaseTimes& t : phases[slowest]) v.push_back(t[i]);
      std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
      phase_json[kStepPhaseNames[i]] = v[v.size() / 2] / 1e9;
    }
  return {{"step_s", stepPeriodSeconds(per_rank, steps > 6 ? 3 : 0)},
          {"memory_bytes", memory},
          {"phases", phase_json}};
}

std::optional<int64_t> matchingSimulation(RunStore& store, int64_t real) {
  const auto run = store.run(real);
  if (!run || run->origin == "simulated") return std::nullopt;
  const auto job = jobOf(*run);
  if (!job) return std::nullopt;
  const std::string host = hostOf(store, real);
  for (const RunRow& r : store.listRuns()) {  // newest first
    if (r.origin != "simulated" || r.status != "done") continue;
    const auto simulated = jobOf(r);
    if (simulated && sameStep(*simulated, *job) && hostOf(store, r.id) == host) return r.id;
  }
  return std::nullopt;
}

void recordPrediction(RunStore& store, int64_t real, int64_t simulated) {
  nlohmann::json prediction = measuredStep(store, simulated);
  prediction["simulated_run"] = simulated;
  RecordBatch batch;
  EventRow event;
  event.run_id = real;
  event.rank = -1;
  event.kind = "prediction";
  event.text = prediction.dump();
  batch.events.push_back(event);
  store.write(batch);
}

std::optional<int64_t> recordMatchingPrediction(RunStore& store, int64_t real) {
  const auto simulated = matchingSimulation(store, real);
  if (simulated) recordPrediction(store, real, *simulated);
  return simulated;
}

nlohmann::json predictionJson(RunStore& store, int64_t run) {
  std::optional<nlohmann::json> prediction;
  for (const EventRow& e : store.events(run))
    if (e.kind == "prediction") {
      auto parsed = nlohmann::json::parse(e.text, nullptr, false);
      if (!parsed.is_discarded() && parsed.is_object()) prediction = parsed;
    }
  if (!prediction) return nlohmann::json::object();
  const nlohmann::json measured = measuredStep(store, run);
  return {{"prediction", *prediction},
          {"prediction_error",
           {{"step", relative(prediction->value("step_s", 0.0), measured["step_s"])},
            {"memory", relative(prediction->value("memory_bytes", 0.0),
                                measured["memory_bytes"].get<double>())}}}};
}

void printRunWithPrediction(std::ostream& out, RunStore& store, const RunSummary& summary,
                            bool json) {
  const nlohmann::json prediction = predictionJson(store, summary.run.id);
  if (json) {
    nlohmann::json doc = summaryJson(summary);
    doc.update(prediction);
    printJson(out, doc, std::cerr);
    return;
  }
  printSummary(out, summary);
  if (prediction.empty()) return;
  const auto& p = prediction["prediction"];
  const auto& e = prediction["prediction_error"];
  char line[256];
  std::snprintf(line, sizeof line,
                "  predicted (simulated run %lld): step %.2f ms (error %+.1f%%), memory %.2f MB "
                "(error %+.1f%%)\n",
                static_cast<long long>(p.value("simulated_run", int64_t{0})),
                p.value("step_s", 0.0) * 1e3, e.value("step", 0.0) * 100,
                p.value("memory_bytes", 0.0) / 1e6, e.value("memory", 0.0) * 100);
  out << line;
}

}  // namespace ranklab
