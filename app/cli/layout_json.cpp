#include "app/cli/layout_json.h"

#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "engine/job/job_file.h"
#include "engine/job/pipeline_bubble.h"
#include "engine/job/stored_job.h"

namespace ranklab {
namespace {}  // namespace

nlohmann::json layoutJson(const RunSummary& s) {
  nlohmann::json out = {
      {"layout", nullptr}, {"bubble_fraction", nullptr}, {"bubble_formula", nullptr}};
  const std::optional<JobSpec> job = storedJobOf(s.run).job;
  if (!job) return out;
  const ParallelSpec& p = job->parallel;
  const int pipeline = p.pipeline;
  out["layout"] = {{"data", p.ranks / (pipeline * p.tensor)},
                   {"pipeline", pipeline},
                   {"tensor", p.tensor},
                   {"zero", p.zero},
                   {"schedule", pipeline > 1 ? nameOf(p.schedule) : "data-parallel"},
                   {"microbatches", p.microbatches}};
  if (pipeline > 1 && s.run.train_s > 0 && !s.ranks.empty()) {
    double wait = 0;
    for (const auto& rank : s.ranks) wait += rank.wait_s;
    out["bubble_fraction"] =
        measuredBubble(wait / static_cast<double>(s.ranks.size()), s.run.train_s);
    out["bubble_formula"] = bubbleFormula(pipeline, p.microbatches);
  }
  return out;
}

namespace {

// The number after `group` in "formula bytes per step: data N tensor N pipeline N", or null.
nlohmann::json formulaOf(const std::string& text, const std::string& group) {
  const size_t at = text.find(" " + group + " ");
  if (at == std::string::npos) return nullptr;
  const char* start = text.c_str() + at + group.size() + 2;
  char* end = nullptr;
  const long long bytes = std::strtoll(start, &end, 10);
  return end == start ? nlohmann::json(nullptr) : nlohmann::json(bytes);
}

}  // namespace

nlohmann::json trafficJson(const RankSummary& r) {
  const double steps = r.steps > 0 ? static_cast<double>(r.steps) : 1.0;
  const int64_t data = r.bytes_tx - r.bytes_tensor - r.bytes_pipeline;
  const std::string text = " " + r.traffic_formula.substr(r.traffic_formula.find(':') + 1);
  nlohmann::json out;
  for (const auto& [group, bytes] : {std::pair<std::string, int64_t>{"data", data},
                                     {"tensor", r.bytes_tensor},
                                     {"pipeline", r.bytes_pipeline}}) {
    out[group] = {
        {"measured", static_cast<double>(bytes) / steps},
        {"formula", r.traffic_formula.empty() ? nlohmann::json(nullptr) : formulaOf(text, group)}};
  }
  return out;
}

nlohmann::json activationsJson(const RankSummary& r) {
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerActivations& layer : r.activations) {
    layers.push_back({{"layer", layer.layer},
                      {"bytes", layer.bytes},
                      {"formula", layer.formula ? nlohmann::json(*layer.formula) : nullptr},
                      {"workspace", layer.workspace}});
  }
  return layers;
}

nlohmann::json languageJson(const RunSummary& s) {
  nlohmann::json out = {
      {"tokens_per_s", nullptr}, {"val_loss", nullptr}, {"bigram_baseline", nullptr}};
  const std::optional<JobSpec> job = storedJobOf(s.run).job;
  if (!job) return out;
  if (job->model.kind == ModelKind::kGpt)
    out["tokens_per_s"] = s.samples_per_s * job->model.context;
  if (job->data.dataset == DatasetKind::kText && s.test_loss && !s.diverged)
    out["val_loss"] = *s.test_loss;
  if (s.bigram_baseline) out["bigram_baseline"] = *s.bigram_baseline;
  return out;
}

}  // namespace ranklab
