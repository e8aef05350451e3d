#include "app/cli/layout_json.h"

#include <exception>

#include "engine/job/job_file.h"
#include "engine/job/pipeline_bubble.h"

namespace ranklab {

nlohmann::json layoutJson(const RunSummary& s) {
  nlohmann::json out = {
      {"layout", nullptr}, {"bubble_fraction", nullptr}, {"bubble_formula", nullptr}};
  JobSpec job;
  try {
    job = parseJob(s.run.job_toml, "run " + std::to_string(s.run.id) + " job");
  } catch (const std::exception&) {
    return out;  // a run stored before the job was kept, or by another version
  }
  const ParallelSpec& p = job.parallel;
  const int pipeline = p.pipeline;
  out["layout"] = {{"data", p.ranks / (pipeline * p.tensor)},
                   {"pipeline", pipeline},
                   {"tensor", p.tensor},
                   {"zero", p.zero},
                   {"schedule", pipeline > 1 ? p.schedule : "data-parallel"},
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

nlohmann::json languageJson(const RunSummary& s) {
  nlohmann::json out = {
      {"tokens_per_s", nullptr}, {"val_loss", nullptr}, {"bigram_baseline", nullptr}};
  JobSpec job;
  try {
    job = parseJob(s.run.job_toml, "run " + std::to_string(s.run.id) + " job");
  } catch (const std::exception&) {
    return out;
  }
  if (job.model.kind == "gpt") out["tokens_per_s"] = s.samples_per_s * job.model.context;
  if (job.data.dataset == "text" && s.test_loss && !s.diverged) out["val_loss"] = *s.test_loss;
  if (s.bigram_baseline) out["bigram_baseline"] = *s.bigram_baseline;
  return out;
}

}  // namespace ranklab
