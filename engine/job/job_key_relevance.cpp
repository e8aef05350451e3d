#include "engine/job/job_key_relevance.h"

#include <algorithm>
#include <optional>

#include "comm/codecs/codec_traits.h"
#include "comm/collectives/allreduce_registry.h"
#include "engine/job/job_spec.h"
#include "engine/job/strategy_traits.h"

namespace ranklab {

namespace {

using Values = std::vector<std::string>;

// The codecs whose traits say momentum correction does not apply (codecsTaking(KEY): those
// that compression.KEY shapes).
Values codecsWithoutMomentumCorrection() {
  Values names;
  for (const auto& t : codecTraits())
    if (!t.momentum_correction) names.push_back(t.name);
  return names;
}

// The all-reduces whose entry says parallel.ranks_per_host shapes them.
Values algorithmsTakingRanksPerHost() {
  Values names;
  for (const auto& a : allreduceRegistry())
    if (a.takes_ranks_per_host) names.push_back(a.name);
  return names;
}

// The rules of the sections after [compression], which read no registry.
std::vector<RelevanceRule> laterSectionRules() {
  return {
      // [amp]: loss scaling and the fp32 head only with a low precision.
      {"amp.init_scale", "amp.dtype", {"fp32"}, true},
      {"amp.growth_interval", "amp.dtype", {"fp32"}, true},
      {"amp.head_fp32", "amp.dtype", {"fp32"}, true},
      // [fault]: the delay only with a straggler.
      {"fault.straggler_delay_ms", "fault.straggler_rank", {"-1"}, true},
      // [launch]: hosts only where mpirun places the ranks; Slurm's keys only under Slurm.
      {"launch.hosts", "launch.scheduler", {"local"}},
      {"launch.hostfile", "launch.scheduler", {"local"}},
      {"launch.partition", "launch.scheduler", {"slurm"}},
      {"launch.nodes", "launch.scheduler", {"slurm"}},
      {"launch.time_limit", "launch.scheduler", {"slurm"}},
      {"launch.account", "launch.scheduler", {"slurm"}},
      {"launch.sbatch", "launch.scheduler", {"slurm"}},
  };
}

}  // namespace

const std::vector<RelevanceRule>& relevanceRules() {
  static const std::vector<std::string> all_reducing =
      strategiesWith(&StrategyTraits::all_reduces_gradient);
  static const std::vector<std::string> taking_algorithm =
      strategiesWith(&StrategyTraits::takes_algorithm);
  static const std::vector<RelevanceRule> rules = {
      // [data]: each dataset's own keys.
      {"data.path", "data.dataset", {"fashion-mnist", "text"}},
      {"data.train_limit", "data.dataset", {"fashion-mnist"}},
      {"data.test_limit", "data.dataset", {"fashion-mnist"}},
      {"data.samples", "data.dataset", {"spirals", "moons"}},
      {"data.test_samples", "data.dataset", {"spirals", "moons"}},
      {"data.noise", "data.dataset", {"spirals", "moons"}},
      {"data.arms", "data.dataset", {"spirals"}},
      // [model]: the convolution stages only for the CNN.
      {"model.channels", "model.kind", {"cnn"}},
      {"model.kernel_size", "model.kind", {"cnn"}},
      // The hidden widths are the MLP's and the CNN's head; the transformer's sizes the GPT's.
      {"model.layers", "model.kind", {"mlp", "cnn"}},
      {"model.blocks", "model.kind", {"gpt"}},
      {"model.heads", "model.kind", {"gpt"}},
      {"model.width", "model.kind", {"gpt"}},
      {"model.context", "model.kind", {"gpt"}},
      {"train.sample_chars", "model.kind", {"gpt"}},
      // [train]: each optimizer's and schedule's own keys.
      {"train.momentum", "train.optimizer", {"sgd"}},
      {"train.nesterov", "train.optimizer", {"sgd"}},
      {"train.beta1", "train.optimizer", {"adam", "adamw"}},
      {"train.beta2", "train.optimizer", {"adam", "adamw"}},
      {"train.eps", "train.optimizer", {"adam", "adamw"}},
      {"train.lr_step_epochs", "train.lr_schedule", {"step"}},
      {"train.lr_gamma", "train.lr_schedule", {"step"}},
      {"train.lr_min", "train.lr_schedule", {"cosine"}},
      {"train.checkpoint_every", "train.checkpoint_path", {""}, true},
      // A GPU's keys only off the CPU.
      {"train.tf32", "train.device", {"cpu"}, true},
      {"parallel.device_collectives", "train.device", {"cpu"}, true},
      // [parallel]: each strategy's and algorithm's own keys.
      {"parallel.algorithm", "parallel.strategy", taking_algorithm},
      {"parallel.ranks_per_host", "parallel.algorithm", algorithmsTakingRanksPerHost()},
      {"parallel.ranks_per_host", "parallel.strategy", taking_algorithm},
      {"parallel.bucket_kb", "parallel.strategy", all_reducing},
      {"parallel.bucket_kb", "parallel.algorithm", {std::string(kSharedModelAlgorithm)}, true},
      {"parallel.comm_schedule", "parallel.strategy", all_reducing},
      {"parallel.partition_kb", "parallel.comm_schedule", {"priority"}},
      {"parallel.credit_kb", "parallel.comm_schedule", {"priority"}},
      {"parallel.servers", "parallel.strategy", strategiesWith(&StrategyTraits::parameter_servers)},
      {"parallel.staleness", "parallel.strategy",
       strategiesWith(&StrategyTraits::applies_each_push)},
      {"parallel.delay_compensation", "parallel.strategy",
       strategiesWith(&StrategyTraits::applies_each_push)},
      {"parallel.average_every", "parallel.strategy",
       strategiesWith(&StrategyTraits::gradients_stay_local)},
      {"parallel.zero", "parallel.strategy", all_reducing},
      {"parallel.schedule", "parallel.pipeline", {"1"}, true},
      {"parallel.stage_layers", "parallel.pipeline", {"1"}, true},
      {"parallel.tensor", "parallel.strategy", all_reducing},
      {"parallel.sequence_parallel", "parallel.tensor", {"1"}, true},
      {"parallel.sequence_parallel", "model.kind", {"gpt"}},
      // [compression]: nothing but the codec without one; then each codec's own keys.
      {"compression.error_feedback", "compression.codec", codecsTaking("error_feedback")},
      {"compression.momentum_correction", "compression.codec", codecsWithoutMomentumCorrection(),
       true},
      {"compression.momentum_correction", "train.optimizer", {"sgd"}},
      {"compression.bits", "compression.codec", codecsTaking("bits")},
      {"compression.bucket", "compression.codec", codecsTaking("bucket")},
      {"compression.ratio", "compression.codec", codecsTaking("ratio")},
      {"compression.threshold", "compression.codec", codecsTaking("threshold")},
      {"compression.value_dtype", "compression.codec", codecsTaking("value_dtype")},
      {"compression.rank", "compression.codec", codecsTaking("rank")},
      {"compression.warm_start", "compression.codec", codecsTaking("warm_start")},
  };
  static const std::vector<RelevanceRule> all = [] {
    std::vector<RelevanceRule> joined = rules;
    for (RelevanceRule& rule : laterSectionRules()) joined.push_back(std::move(rule));
    return joined;
  }();
  return all;
}

namespace {

// A job whose ranks are a command (launch.command, docs/pytorch.md): the engine's keys change
// nothing, only the number of ranks, telemetry and launch do; launch.launcher only with one.
std::optional<bool> commandKeyApplies(const std::string& path, const JobValues& values) {
  const auto it = values.find("launch.command");
  const bool command = it != values.end() && it->second != "[]" && !it->second.empty();
  if (path == "launch.launcher") return command;
  if (!command) return std::nullopt;
  for (const char* kept : {"name", "parallel.ranks", "telemetry.", "launch."})
    if (path.rfind(kept, 0) == 0) return std::nullopt;
  return false;
}

}  // namespace

bool keyApplies(const std::string& path, const JobValues& values) {
  if (const auto command = commandKeyApplies(path, values)) return *command;
  for (const RelevanceRule& rule : relevanceRules()) {
    if (rule.key != path) continue;
    const auto it = values.find(rule.when);
    const JobKey* when = findJobKey(rule.when);
    const std::string value =
        it != values.end() ? it->second : (when ? when->default_value : std::string());
    const bool listed =
        std::find(rule.values.begin(), rule.values.end(), value) != rule.values.end();
    if (listed == rule.negate) return false;
  }
  return true;
}

namespace {

// A key of the engine's that a command's job (launch.command) leaves out: "–" in a comparison,
// not a default that was never used, and no difference from an engine job's value.
bool onlyTheEnginesKey(const std::string& path, const JobValues& job) {
  const auto command = job.find("launch.command");
  if (command == job.end() || command->second == "[]" || keyApplies(path, job)) return false;
  JobValues without = job;
  without.erase("launch.command");
  return keyApplies(path, without);
}

}  // namespace

std::vector<SettingDifference> differingSettings(const std::vector<std::string>& job_tomls) {
  std::vector<JobValues> jobs;
  for (const std::string& text : job_tomls) jobs.push_back(jobValuesInText(text));
  std::vector<SettingDifference> differences;
  for (const JobKey& key : jobKeys()) {
    SettingDifference d{key.path, {}};
    for (const JobValues& job : jobs) {
      const auto it = job.find(key.path);
      d.values.push_back(onlyTheEnginesKey(key.path, job) ? "–"
                         : it == job.end()                ? key.default_value
                                                          : it->second);
    }
    // A command's "–" differs from nothing: the engine's keys are compared among engine jobs.
    std::vector<std::string> set;
    for (size_t i = 0; i < jobs.size(); ++i)
      if (!onlyTheEnginesKey(key.path, jobs[i])) set.push_back(d.values[i]);
    const bool all_same =
        std::all_of(set.begin(), set.end(), [&](const std::string& v) { return v == set.front(); });
    if (!all_same) differences.push_back(std::move(d));
  }
  return differences;
}

}  // namespace ranklab
