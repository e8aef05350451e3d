#include "app/cli/prediction_record.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <vector>

#include "app/cli/json_output.h"
#include "app/cli/report_format.h"
#include "engine/job/job_file.h"
#include "engine/job/stored_job.h"
#include "storage/analysis/step_measure.h"
#include "storage/run_origin.h"

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
  return storedJobOf(run).job;  // a job this ranklab cannot read: no match
}

std::string hostOf(RunStore& store, int64_t run) {
  const std::vector<RankRow> ranks = store.ranks(run);
  return ranks.empty() ? "" : ranks.front().host;
}

}  // namespace

nlohmann::json measuredStepJson(RunStore& store, int64_t run) {
  const MeasuredStep measured = measuredStep(store, run);
  nlohmann::json phase_json = nlohmann::json::object();
  if (measured.phases)
    for (int i = 0; i < kStepPhaseCount; ++i)
      phase_json[kStepPhaseNames[size_t(i)]] = (*measured.phases)[size_t(i)] / 1e9;
  return {
      {"step_s", measured.step_s}, {"memory_bytes", measured.memory_bytes}, {"phases", phase_json}};
}

std::optional<int64_t> matchingSimulation(RunStore& store, int64_t real) {
  const auto run = store.run(real);
  if (!run || originOf(*run) == RunOrigin::kSimulated) return std::nullopt;
  const auto job = jobOf(*run);
  if (!job) return std::nullopt;
  const std::string host = hostOf(store, real);
  for (const RunRow& r : store.listRuns()) {  // newest first
    if (originOf(r) != RunOrigin::kSimulated || r.status != "done") continue;
    const auto simulated = jobOf(r);
    if (simulated && sameStep(*simulated, *job) && hostOf(store, r.id) == host) return r.id;
  }
  return std::nullopt;
}

void recordPrediction(RunStore& store, int64_t real, int64_t simulated) {
  nlohmann::json prediction = measuredStepJson(store, simulated);
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
  const nlohmann::json measured = measuredStepJson(store, run);
  return {{"prediction", *prediction},
          {"prediction_error",
           {{"step", relativeError(prediction->value("step_s", 0.0), measured["step_s"])},
            {"memory", relativeError(prediction->value("memory_bytes", 0.0),
                                     measured["memory_bytes"].get<double>())}}}};
}

void printRunWithPrediction(std::ostream& out, RunStore& store, const RunSummary& summary,
                            bool json, SummaryDetail detail) {
  const nlohmann::json prediction = predictionJson(store, summary.run.id);
  if (json) {
    nlohmann::json doc = summaryJson(summary);
    doc.update(prediction);
    printJson(out, doc, std::cerr);
    return;
  }
  printSummary(out, summary, detail);
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
