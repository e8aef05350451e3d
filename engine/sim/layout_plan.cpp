#include "engine/sim/layout_plan.h"

#include <algorithm>
#include <stdexcept>

#include "engine/job/job_file.h"
#include "engine/train/memory_estimate.h"

namespace ranklab {

namespace {

std::vector<int> divisorsOf(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

// The settings that make one layout, as --set arguments.
std::vector<std::string> layoutSettings(int ranks, int pipeline, int tensor, int zero, int micro,
                                        PipelineOrder schedule, bool sequence) {
  return {"parallel.ranks=" + std::to_string(ranks),
          "parallel.pipeline=" + std::to_string(pipeline),
          "parallel.tensor=" + std::to_string(tensor),
          "parallel.zero=" + std::to_string(zero),
          "parallel.microbatches=" + std::to_string(micro),
          "parallel.schedule=\"" + nameText(schedule) + "\"",
          std::string("parallel.sequence_parallel=") + (sequence ? "true" : "false")};
}

std::string joined(const std::vector<std::string>& settings) {
  std::string text;
  for (const std::string& s : settings) text += (text.empty() ? "" : " ") + s;
  return text;
}

}  // namespace

std::vector<PlanCandidate> layoutsOf(const JobSpec& base, int ranks) {
  const std::string text = toTomlText(base);
  const bool gpt = base.model.kind == ModelKind::kGpt;
  std::vector<PlanCandidate> out;
  for (int tensor : divisorsOf(ranks))
    for (int pipeline : divisorsOf(ranks / tensor)) {
      const int data = ranks / (tensor * pipeline);
      for (int zero = 0; zero <= (data > 1 ? 3 : 0); ++zero)
        for (int micro : {1, 2, 4, 8}) {
          if (pipeline == 1 && micro > 1) continue;  // micro-batches matter to a pipeline
          for (PipelineOrder schedule : {PipelineOrder::k1F1B, PipelineOrder::kGpipe}) {
            // One micro-batch runs its passes alike under either schedule: one layout.
            if ((pipeline == 1 || micro == 1) && schedule == PipelineOrder::kGpipe) continue;
            for (bool sequence : {false, true}) {
              if (sequence && (!gpt || tensor == 1)) continue;
              const auto settings =
                  layoutSettings(ranks, pipeline, tensor, zero, micro, schedule, sequence);
              try {
                PlanCandidate c;
                c.job = parseJob(text, base.name, settings);
                c.overrides = joined(settings);
                out.push_back(std::move(c));
              } catch (const JobError&) {  // a layout this job's checks refuse
              }
            }
          }
        }
    }
  return out;
}

std::string dominantPart(const Prediction& p) {
  int64_t compute = 0;
  for (int i = 0; i < kStepPhaseCount; ++i)
    if (kStepPhaseKinds[i] == PhaseKind::kCompute) compute += p.phases[i];
  const int64_t comm = p.phases[5], wait = p.phases[4] - p.bubble_ns, bubble = p.bubble_ns;
  const int64_t most = std::max({compute, comm, wait, bubble});
  return most == compute  ? "compute"
         : most == comm   ? "exposed comm"
         : most == bubble ? "bubble"
                          : "wait";
}

std::vector<PlanCandidate> planLayouts(const JobSpec& base, int ranks,
                                       const Calibration& calibration, double memory_limit,
                                       const std::function<void(const std::string&)>& skipped) {
  std::vector<PlanCandidate> ranked;
  for (PlanCandidate& c : layoutsOf(base, ranks)) {
    try {
      c.prediction = predictRun(c.job, calibration);
    } catch (const std::invalid_argument& e) {
      if (skipped) skipped(c.overrides + ": " + e.what());
      continue;
    }
    const int replicas = std::max(1, ranks / (c.job.parallel.pipeline * c.job.parallel.tensor));
    const double samples = double(c.job.train.batch_size) * c.job.train.accumulate_steps * replicas;
    c.sample_s = c.prediction.step_s / samples;
    c.peak_bytes = static_cast<int64_t>(estimateMemory(c.job).peak().total());
    c.fits = memory_limit <= 0 || static_cast<double>(c.peak_bytes) <= memory_limit;
    c.dominant = dominantPart(c.prediction);
    ranked.push_back(std::move(c));
  }
  std::stable_sort(
      ranked.begin(), ranked.end(),
      [](const PlanCandidate& a, const PlanCandidate& b) { return a.sample_s < b.sample_s; });
  return ranked;
}

}  // namespace ranklab
