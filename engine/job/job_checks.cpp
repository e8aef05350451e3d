// Problems that involve more than one key of the job file: the rules between sections
// (accumulation and pipelines, tensor and ZeRO layouts, hosts and their slots, the optimizer
// and its schedule, strategies and codecs), each reported against the key that breaks it.
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "comm/collectives/allreduce_registry.h"
#include "engine/job/device_spec.h"
#include "engine/job/job_schema.h"
#include "engine/job/strategy_traits.h"
#include "kernels/gpu_probe.h"

namespace ranklab::job_detail {

namespace {

// Whether the job's strategy all-reduces every rank's gradient (sync data parallel).
bool allReduces(const JobSpec& job) {
  return strategyTraitsOr(job.parallel.strategy).all_reduces_gradient;
}

// Reports `message` against `key` (as "section.name") when the rule is broken, the key is
// written in the file (or a --set) and none of the keys the rule reads has its own problem.
void checkRule(const toml::table& root, IssueLog& log, const std::string& key,
               const std::vector<std::string>& reads, bool broken, const std::string& message) {
  const auto dot = key.find('.');
  const toml::node* node = root[key.substr(0, dot)][key.substr(dot + 1)].node();
  if (!broken || !node || log.hasIssueFor(key)) return;
  for (const auto& other : reads) {
    if (log.hasIssueFor(other)) return;
  }
  log.add(node->source(), key, message);
}

// Whole steps accumulated (train.accumulate_steps) need a flat gradient to add into.
void checkAccumulation(const toml::table& root, const JobSpec& job, IssueLog& log) {
  checkRule(root, log, "train.accumulate_steps", {"parallel.pipeline"},
            job.train.accumulate_steps > 1 && job.parallel.pipeline > 1,
            "a pipeline accumulates over parallel.microbatches; use those with "
            "parallel.pipeline = " +
                std::to_string(job.parallel.pipeline) + ", and train.accumulate_steps = 1");
  checkRule(root, log, "train.accumulate_steps", {"parallel.zero"},
            job.train.accumulate_steps > 1 && job.parallel.zero >= 2,
            "parallel.zero = " + std::to_string(job.parallel.zero) +
                " reduces each layer's gradient as backward finishes it, so there is nothing "
                "to accumulate into: use train.accumulate_steps = 1 or parallel.zero <= 1");
}

// What every way of splitting one model over ranks (`key`, set as `setting`) needs: the
// all-reduce strategy (`why`), a model per rank rather than one per host.
void checkModelSplit(const toml::table& root, const JobSpec& job, IssueLog& log,
                     const std::string& key, const std::string& setting, const std::string& why) {
  checkRule(root, log, key, {"parallel.strategy"}, !allReduces(job),
            "needs parallel.strategy = \"allreduce\" (" + why + "); got " +
                quoted(job.parallel.strategy));
  checkRule(root, log, key, {"parallel.algorithm"}, job.parallel.sharesOneModel(),
            "\"shm-sharded\" shares one whole model per host; with " + setting + " use " +
                allreduceChoices());
}

// Pipeline stages: whole ranks per stage, blocks enough to divide, and only the strategy
// and store features that know a model can be split.
void checkPipeline(const toml::table& root, const JobSpec& job, IssueLog& log) {
  const int p = job.parallel.pipeline;
  checkRule(root, log, "parallel.stage_layers", {"parallel.pipeline"},
            !job.parallel.stage_layers.empty() && p == 1,
            "cuts the model into pipeline stages by hand; set parallel.pipeline to the number "
            "of stages, or leave stage_layers out");
  if (p == 1) return;
  const std::string stages = "parallel.pipeline = " + std::to_string(p);
  checkRule(root, log, "parallel.pipeline", {"parallel.ranks"}, job.parallel.ranks % p != 0,
            "must divide parallel.ranks (" + std::to_string(job.parallel.ranks) +
                "): every data replica needs all " + std::to_string(p) + " stages, got " +
                std::to_string(p));
  // A GPT's: the embedding, each transformer block, the final LayerNorm, the head's table.
  const size_t blocks =
      job.model.kind == ModelKind::kGpt
          ? static_cast<size_t>(job.model.blocks) + 3
          : job.model.layers.size() + 1 +
                (job.model.kind == ModelKind::kCnn ? job.model.channels.size() : 0);
  checkRule(root, log, "parallel.pipeline", {"model.layers", "model.channels", "model.kind"},
            static_cast<size_t>(p) > blocks,
            "must be at most the model's " + std::to_string(blocks) +
                " blocks (a layer with parameters and what follows it), got " + std::to_string(p) +
                "; add " +
                std::string(job.model.kind == ModelKind::kGpt ? "model.blocks" : "model.layers") +
                " or use fewer stages");
  const std::vector<int>& by_hand = job.parallel.stage_layers;
  int64_t given = 0;
  for (int count : by_hand) given += count;
  checkRule(root, log, "parallel.stage_layers", {"parallel.pipeline", "model.layers"},
            !by_hand.empty() &&
                (by_hand.size() != static_cast<size_t>(p) || given != static_cast<int64_t>(blocks)),
            "must list " + std::to_string(p) + " stages' blocks adding up to the model's " +
                std::to_string(blocks) + " (a layer with parameters and what follows it), got " +
                std::to_string(by_hand.size()) + " stages adding up to " + std::to_string(given));
  checkModelSplit(root, job, log, "parallel.pipeline", stages,
                  "the stages' replicas all-reduce their stage's gradients");
}

// Tensor parallelism: an MLP's or a CNN head's Linear pairs split over whole ranks.
void checkTensor(const toml::table& root, const JobSpec& job, IssueLog& log) {
  const int t = job.parallel.tensor;
  if (t == 1) return;
  const std::string slices = "parallel.tensor = " + std::to_string(t);
  checkRule(root, log, "parallel.tensor", {"parallel.ranks"}, job.parallel.ranks % t != 0,
            "must divide parallel.ranks (" + std::to_string(job.parallel.ranks) +
                "): every data replica needs all " + std::to_string(t) + " slices, got " +
                std::to_string(t));
  checkRule(root, log, "parallel.tensor", {"model.dropout"}, job.model.dropout > 0,
            "splits models without dropout (its masks would have to agree across slices); use "
            "model.dropout = 0, got " +
                formatDouble(job.model.dropout));
  for (int width : job.model.kind == ModelKind::kGpt ? std::vector<int>{} : job.model.layers) {
    checkRule(root, log, "parallel.tensor", {"model.layers"}, width % t != 0,
              "must divide every hidden width of model.layers (each slice holds width / " +
                  std::to_string(t) + " of a layer), and " + std::to_string(width) +
                  " is not a multiple of " + std::to_string(t));
  }
  checkModelSplit(root, job, log, "parallel.tensor", slices,
                  "the replicas all-reduce their slices' gradients");
}

// Sequence parallelism: a GPT's slices each hold a share of its rows between the blocks.
void checkSequenceParallel(const toml::table& root, const JobSpec& job, IssueLog& log) {
  const ParallelSpec& p = job.parallel;
  if (!p.sequence_parallel) return;
  const std::string key = "parallel.sequence_parallel";
  checkRule(root, log, key, {"model.kind"}, job.model.kind != ModelKind::kGpt,
            "splits a GPT's blocks along its sequence, and model.kind = " +
                quoted(nameOf(job.model.kind)) + " has none; use false");
  checkRule(root, log, key, {"parallel.tensor"}, p.tensor == 1,
            "splits the rows of a tensor-parallel GPT's slices; with parallel.tensor = 1 there "
            "is one slice: use parallel.tensor > 1 or false");
  checkRule(root, log, key, {"model.context", "parallel.tensor"},
            job.model.kind == ModelKind::kGpt && p.tensor > 1 && job.model.context % p.tensor != 0,
            "gives each of the parallel.tensor = " + std::to_string(p.tensor) +
                " slices an equal share of every sample's positions: model.context (" +
                std::to_string(job.model.context) + ") must be a multiple of it");
}

// "\"a\"" or "\"a\" or \"b\"": the names a rule allows, for its message.
std::string quotedOneOf(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) text += (i == 0 ? "" : " or ") + quoted(names[i]);
  return text;
}

// ZeRO: sharded over the ring's chunks, after plain sync data parallel's backward.
void checkZero(const toml::table& root, const JobSpec& job, IssueLog& log) {
  const int stage = job.parallel.zero;
  if (stage == 0) return;
  checkRule(root, log, "parallel.zero", {"parallel.strategy"}, !allReduces(job),
            "needs parallel.strategy = \"allreduce\" (the data ranks shard the update); got " +
                quoted(job.parallel.strategy));
  const AllreduceAlgorithm* algorithm = findAllreduce(job.parallel.algorithm);
  checkRule(root, log, "parallel.zero", {"parallel.algorithm"},
            algorithm == nullptr || !algorithm->shards,
            "needs parallel.algorithm = " +
                quotedOneOf(allreduceAlgorithmsWith(&AllreduceAlgorithm::shards)) +
                " (its reduce-scatter and all-gather halves shard the gradient); got " +
                quoted(job.parallel.algorithm));
  checkRule(root, log, "parallel.zero", {"compression.codec"}, job.compression.compresses(),
            "moves gradients uncompressed; use compression.codec = \"none\", got " +
                quoted(job.compression.codec));
  checkRule(root, log, "parallel.zero", {"parallel.bucket_kb"}, job.parallel.bucket_kb != 0,
            "reduce-scatters after backward (stage 1) or per layer (stages 2, 3), not in buckets: "
            "leave parallel.bucket_kb = 0, got " +
                std::to_string(job.parallel.bucket_kb));
  if (stage < 2) return;
  checkRule(root, log, "parallel.zero", {"parallel.microbatches"}, job.parallel.microbatches != 1,
            "2 and 3 reduce each layer's gradient as backward finishes it, so there is nothing "
            "to accumulate into: use parallel.microbatches = 1 or parallel.zero = 1, got " +
                std::to_string(job.parallel.microbatches));
}

// Priority scheduling: pieces of one data-parallel gradient, each updated as it arrives.
void checkCommSchedule(const toml::table& root, const JobSpec& job, IssueLog& log) {
  if (job.parallel.comm_schedule != CommSchedule::kPriority) return;
  const auto& p = job.parallel;
  checkRule(root, log, "parallel.comm_schedule", {"parallel.strategy", "parallel.algorithm"},
            !allReduces(job) || p.sharesOneModel(),
            "\"priority\" orders the pieces of an all-reduced gradient: needs parallel.strategy "
            "= \"allreduce\" with an algorithm other than \"shm-sharded\" (got " +
                quoted(p.strategy) + ", " + quoted(p.algorithm) + ")");
  checkRule(root, log, "parallel.comm_schedule", {"compression.codec"},
            job.compression.compresses(),
            "\"priority\" moves pieces uncompressed (a codec encodes the whole gradient at "
            "once); use compression.codec = \"none\", got " +
                quoted(job.compression.codec));
  checkRule(root, log, "parallel.comm_schedule", {"parallel.bucket_kb"}, p.bucket_kb != 0,
            "\"priority\" cuts the gradient into parallel.partition_kb pieces; leave "
            "parallel.bucket_kb = 0 (it sizes \"fifo\"'s buckets), got " +
                std::to_string(p.bucket_kb));
  checkRule(root, log, "parallel.comm_schedule",
            {"parallel.zero", "parallel.pipeline", "parallel.tensor"},
            p.zero != 0 || p.pipeline != 1 || p.tensor != 1,
            "\"priority\" lets the next forward start while pieces still move, and ZeRO, "
            "pipeline and tensor parallelism talk during the passes themselves: use "
            "parallel.zero = 0, pipeline = 1 and tensor = 1, or comm_schedule = \"fifo\"");
}

// train.device = "cuda": a GPU this machine can use (where the ranks run here), and only
// the parts of the engine that have a GPU path yet.
void checkDevice(const toml::table& root, const JobSpec& job, IssueLog& log) {
  const std::string& device = job.train.device;
  checkRule(root, log, "train.tf32", {"train.device"}, device == "cpu" && job.train.tf32,
            "TF32 is a GPU tensor-core format, and train.device = \"cpu\" computes in fp32 "
            "already: set train.tf32 = false, or train.device = \"cuda\"");
  if (device == "cpu") return;
  const auto& p = job.parallel;
  std::string why;
  const int gpus = kernels::usableGpus(&why);
  // Ranks on other hosts (or Slurm's nodes) check their own GPUs as they start.
  const bool ranks_here = !runsOnHosts(job);
  checkRule(root, log, "train.device", {}, ranks_here && gpus == 0,
            quoted(device) + " needs a GPU, but " + why + "; use \"cpu\"");
  const std::optional<DeviceSpec> spec = parseDeviceSpec(device);  // the schema admitted it
  const int index = spec && spec->index >= 0 ? spec->index : 0;
  checkRule(root, log, "train.device", {}, ranks_here && gpus > 0 && index >= gpus,
            quoted(device) + " names GPU " + std::to_string(index) + ", but this machine has " +
                std::to_string(gpus) + " (cuda:0..cuda:" + std::to_string(gpus - 1) + ")");
  // shm-sharded's model lives in host shared memory, the one place a GPU cannot compute on.
  checkRule(root, log, "parallel.algorithm", {}, p.sharesOneModel(),
            "\"shm-sharded\" keeps the one shared model in host shared memory, where the "
            "layers on " +
                quoted(device) +
                " cannot compute; its counterpart on GPUs is "
                "parallel.zero = 1, 2 or 3 (the update sharded over the GPUs): use "
                "that, another parallel.algorithm, or train.device = \"cpu\"");
  checkRule(root, log, "parallel.device_collectives", {"parallel.strategy", "compression.codec"},
            p.device_collectives == DeviceCollectives::kNccl &&
                (!allReduces(job) || job.compression.compresses()),
            "\"nccl\" all-reduces the GPU buffers as they are: needs parallel.strategy = "
            "\"allreduce\" and compression.codec = \"none\" (got " +
                quoted(p.strategy) + ", " + quoted(job.compression.codec) +
                "); \"host\" or \"auto\" run them on the host");
  checkRule(root, log, "parallel.device_collectives", {"parallel.comm_schedule"},
            p.device_collectives == DeviceCollectives::kNccl &&
                p.comm_schedule == CommSchedule::kPriority,
            "\"nccl\" all-reduces the whole GPU gradient at once, and parallel.comm_schedule "
            "= \"priority\" orders its pieces on host copies: use \"host\" or \"auto\"");
}

// Slots the hosts offer: "name:4" gives 4, a bare name 1 (as Open MPI counts them).
int hostSlots(const std::vector<std::string>& hosts) {
  int slots = 0;
  for (const auto& host : hosts) {
    const auto colon = host.find(':');
    slots += colon == std::string::npos ? 1 : std::stoi(host.substr(colon + 1));
  }
  return slots;
}

void checkHosts(const toml::table& root, const JobSpec& job, IssueLog& log) {
  checkRule(root, log, "launch.hostfile", {"launch.hosts"},
            !job.launch.hosts.empty() && !job.launch.hostfile.empty(),
            "give the hosts either as launch.hosts or in launch.hostfile, not both");
  const int slots = hostSlots(job.launch.hosts);
  checkRule(root, log, "launch.hosts", {"parallel.ranks", "parallel.servers"},
            !job.launch.hosts.empty() && slots < processCount(job),
            "offer " + std::to_string(slots) + " slot(s), and the job needs " +
                std::to_string(processCount(job)) +
                " processes (parallel.ranks, plus parallel.servers for ps-*); add hosts or "
                "slots (\"name:slots\")");
  checkRule(root, log, "telemetry.encrypt", {"launch.hosts", "launch.hostfile"},
            !job.telemetry.encrypt && runsOnHosts(job),
            "must be true for a run on hosts: plain telemetry would cross the network for "
            "anyone on it to read and forge");
}

// The sbatch options ranklab sets itself, and the key or setting that says each.
struct OwnSbatchOption {
  const char* option;
  const char* said_by;
};
constexpr OwnSbatchOption kOwnSbatchOptions[] = {
    {"--ntasks", "parallel.ranks"},
    {"--nodes", "launch.nodes"},
    {"--partition", "launch.partition"},
    {"--time", "launch.time_limit"},
    {"--account", "launch.account"},
    {"--output", "ranklab (it reads the ranks' output)"},
    {"--error", "ranklab (it reads the ranks' output)"},
    {"--parsable", "ranklab (it reads the job id)"},
    {"--wrap", "ranklab (it writes the batch script)"}};

// The first sbatch option of launch.sbatch that ranklab sets itself, and what says it.
std::optional<std::string> ownSbatchOption(const std::vector<std::string>& options) {
  for (const std::string& entry : options) {
    const std::string name = entry.substr(0, entry.find('='));
    for (const auto& own : kOwnSbatchOptions)
      if (name == own.option)
        return quoted(entry) + " is set by " + own.said_by + "; leave it out of launch.sbatch";
  }
  return std::nullopt;
}

// Slurm's own spellings: minutes, minutes:seconds, hours:minutes:seconds, days-hours,
// days-hours:minutes, days-hours:minutes:seconds, or no limit.
bool isSlurmTime(const std::string& text) {
  static const std::regex form(
      R"(\d+(:\d{1,2}){0,2}|\d+-\d{1,2}(:\d{1,2}){0,2}|UNLIMITED|INFINITE|unlimited|infinite)");
  return std::regex_match(text, form);
}

// A command's ranks: ranklab's own launcher starts them on this machine only.
void checkCommand(const toml::table& root, const JobSpec& job, IssueLog& log) {
  const LaunchSpec& l = job.launch;
  if (l.command.empty() || l.scheduler == Scheduler::kSlurm) return;
  const bool local_only = l.launcher == Launcher::kRanklab || l.launcher == Launcher::kTorchrun;
  const std::string elsewhere = "launch.launcher = " + quoted(nameOf(l.launcher)) +
                                " starts the command's ranks on this machine; use launch.launcher "
                                "= \"mpirun\" to place them on hosts";
  checkRule(root, log, "launch.hosts", {"launch.launcher"}, local_only && !l.hosts.empty(),
            elsewhere);
  checkRule(root, log, "launch.hostfile", {"launch.launcher"}, local_only && !l.hostfile.empty(),
            elsewhere);
}

void checkSlurm(const toml::table& root, const JobSpec& job, IssueLog& log) {
  const LaunchSpec& l = job.launch;
  if (l.scheduler != Scheduler::kSlurm) return;
  const std::string placed =
      "Slurm places the ranks on the nodes it allocates (launch.scheduler = "
      "\"slurm\"): leave it out, or use launch.scheduler = \"local\"";
  checkRule(root, log, "launch.hosts", {"launch.scheduler"}, !l.hosts.empty(), placed);
  checkRule(root, log, "launch.hostfile", {"launch.scheduler"}, !l.hostfile.empty(), placed);
  checkRule(root, log, "launch.time_limit", {}, !l.time_limit.empty() && !isSlurmTime(l.time_limit),
            "must be a Slurm time: minutes (\"30\"), \"hours:minutes:seconds\", "
            "\"days-hours[:minutes[:seconds]]\" or \"UNLIMITED\"; got " +
                quoted(l.time_limit));
  static const std::regex name_form(R"([A-Za-z0-9_.,-]+)");
  checkRule(root, log, "launch.partition", {},
            !l.partition.empty() && !std::regex_match(l.partition, name_form),
            "must be a partition name (letters, digits, _ . , -); got " + quoted(l.partition));
  checkRule(root, log, "launch.account", {},
            !l.account.empty() && !std::regex_match(l.account, name_form),
            "must be an account name (letters, digits, _ . , -); got " + quoted(l.account));
  checkRule(root, log, "launch.nodes", {"parallel.ranks", "parallel.servers"},
            l.nodes > processCount(job),
            "asks for " + std::to_string(l.nodes) + " nodes for " +
                std::to_string(processCount(job)) +
                " processes: each node needs one; use at most that many nodes");
  const auto own = ownSbatchOption(l.sbatch);
  checkRule(root, log, "launch.sbatch", {}, own.has_value(), own.value_or(""));
}

// [launch]: hosts, Slurm, a command's launcher.
void checkLaunch(const toml::table& root, const JobSpec& job, IssueLog& log) {
  checkHosts(root, job, log);
  checkSlurm(root, job, log);
  checkCommand(root, job, log);
}

}  // namespace

// The GPT trains on text on the CPU, data, pipeline and tensor parallel (its heads split
// over the slices), with ZeRO 1 to 3 (under pipelines too). Its layers' CUDA kernels are
// built but not yet measured against the CPU on a GPU (gpu.GpuTraining.GptFollowsTheCpu,
// cuda.CudaDeviceTest.*): refused here, naming the key, until they are.
void checkGpt(const toml::table& root, const JobSpec& job, IssueLog& log) {
  const bool gpt = job.model.kind == ModelKind::kGpt;
  const bool text = job.data.dataset == DatasetKind::kText;
  checkRule(root, log, "model.kind", {"data.dataset"}, gpt && !text,
            "\"gpt\" is a language model and trains on text: set data.dataset = \"text\" (got " +
                quoted(nameOf(job.data.dataset)) + ")");
  checkRule(root, log, "data.dataset", {"model.kind"}, text && !gpt,
            "\"text\" is a sequence of byte tokens, which only model.kind = \"gpt\" reads (got " +
                quoted(nameOf(job.model.kind)) + ")");
  const std::string divide = "model.heads (" + std::to_string(job.model.heads) +
                             ") must divide model.width (" + std::to_string(job.model.width) +
                             "): each head reads width / heads of it";
  const bool split = job.model.width % job.model.heads != 0;
  checkRule(root, log, "model.heads", {"model.width"}, gpt && split, divide);
  checkRule(root, log, "model.width", {"model.heads"}, gpt && split, divide);
  if (!gpt) return;
  const std::string not_yet =
      " is not available for model.kind = \"gpt\" yet (it trains data, pipeline and tensor "
      "parallel, with ZeRO, on the CPU): ";
  checkRule(root, log, "parallel.tensor", {"model.heads"},
            job.model.heads % job.parallel.tensor != 0,
            "must divide model.heads (" + std::to_string(job.model.heads) +
                "): each slice computes whole heads of the attention, got " +
                std::to_string(job.parallel.tensor));
  const std::optional<DeviceSpec> device = parseDeviceSpec(job.train.device);
  checkRule(
      root, log, "train.device", {"model.kind"}, device && device->onGpu(),
      quoted(job.train.device) + not_yet +
          "its layers' CUDA kernels are not yet checked against the CPU's on a GPU; use \"cpu\"");
}

// Clipping scales the whole gradient before one update: a rank must hold it and update.
void checkGradClip(const toml::table& root, const JobSpec& job, IssueLog& log) {
  if (job.train.grad_clip == 0) return;
  const ParallelSpec& p = job.parallel;
  const std::string why = "clips the gradient an update reads, and ";
  checkRule(root, log, "train.grad_clip", {"parallel.strategy"},
            strategyTraitsOr(p.strategy).parameter_servers,
            why + "with parallel.strategy = " + quoted(p.strategy) +
                " the servers update from each worker's push; use \"allreduce\" or "
                "\"local-sgd\", or 0");
  checkRule(root, log, "train.grad_clip", {"parallel.algorithm"}, p.sharesOneModel(),
            why + "\"shm-sharded\" updates one shared model chunk by chunk; use " +
                allreduceChoices() + ", or 0");
  checkRule(root, log, "train.grad_clip", {"parallel.comm_schedule"},
            p.comm_schedule == CommSchedule::kPriority,
            why +
                "\"priority\" updates each piece as it arrives, before the whole gradient "
                "is there to measure; use comm_schedule = \"fifo\", or 0");
}

void checkAcrossSections(const toml::table& root, const JobSpec& job, IssueLog& log) {
  const int ranks = job.parallel.ranks;
  checkRule(root, log, "fault.straggler_rank", {"parallel.ranks"},
            job.fault.straggler_rank >= ranks,
            "must be -1 (no straggler) or a rank 0.." + std::to_string(ranks - 1) +
                " (parallel.ranks is " + std::to_string(ranks) + "), got " +
                std::to_string(job.fault.straggler_rank));
  checkRule(root, log, "model.kind", {"data.dataset"},
            job.model.kind == ModelKind::kCnn && job.data.dataset != DatasetKind::kFashionMnist,
            "\"cnn\" needs image data, and data.dataset " + quoted(nameOf(job.data.dataset)) +
                " gives 2-D points; use model.kind = \"mlp\" or data.dataset = "
                "\"fashion-mnist\"");
  checkRule(root, log, "train.nesterov", {"train.optimizer", "train.momentum"},
            job.train.nesterov &&
                (job.train.optimizer != OptimizerKind::kSgd || job.train.momentum == 0.0),
            "true needs train.optimizer = \"sgd\" and train.momentum > 0 (got " +
                quoted(nameOf(job.train.optimizer)) + " with momentum " +
                formatDouble(job.train.momentum) + ")");
  checkRule(root, log, "train.checkpoint_every", {"train.checkpoint_path"},
            job.train.checkpoint_every > 0 && job.train.checkpoint_path.empty(),
            "needs train.checkpoint_path, the file to write checkpoints to");
  checkRule(root, log, "train.max_restarts", {"train.checkpoint_every"},
            // A command's restart starts it again: its checkpoints are its own.
            job.train.max_restarts > 0 && job.train.checkpoint_every == 0 && !runsCommand(job),
            "a restart resumes from the last checkpoint: set train.checkpoint_every > 0 (and "
            "train.checkpoint_path) so there is one");
  checkRule(root, log, "train.elastic", {"parallel.strategy", "compression.codec"},
            job.train.elastic && (!allReduces(job) || job.compression.compresses()),
            "resumes on another number of ranks only a synchronous data-parallel run, whose "
            "ranks all hold the same state: needs parallel.strategy = \"allreduce\" and "
            "compression.codec = \"none\" (got " +
                quoted(job.parallel.strategy) + ", " + quoted(job.compression.codec) + ")");
  checkRule(root, log, "parallel.microbatches", {"train.batch_size"},
            job.parallel.microbatches > job.train.batch_size,
            "must be <= train.batch_size (" + std::to_string(job.train.batch_size) +
                "): each micro-batch needs at least one sample, got " +
                std::to_string(job.parallel.microbatches));
  checkFaults(root, job, log);
  checkLaunch(root, job, log);
  checkAccumulation(root, job, log);
  checkPipeline(root, job, log);
  checkZero(root, job, log);
  checkCommSchedule(root, job, log);
  checkTensor(root, job, log);
  checkSequenceParallel(root, job, log);
  checkDevice(root, job, log);
  checkGpt(root, job, log);
  checkGradClip(root, job, log);
  checkRule(root, log, "train.lr_min", {"train.lr", "train.lr_schedule"},
            job.train.lr_schedule == LrScheduleKind::kCosine && job.train.lr_min > job.train.lr,
            "must be <= train.lr (" + formatDouble(job.train.lr) +
                ") for the cosine schedule to decay, got " + formatDouble(job.train.lr_min));
  const std::string& codec = job.compression.codec;
  const std::string& strategy = job.parallel.strategy;
  checkRule(root, log, "compression.codec", {"parallel.strategy"},
            job.compression.compresses() && strategyTraitsOr(strategy).gradients_stay_local,
            "codecs compress gradients, and parallel.strategy = \"local-sgd\" averages models; "
            "use \"none\", or a strategy that moves gradients: \"allreduce\", \"ps-sync\" or "
            "\"ps-async\"");
  const bool shared_model = job.parallel.sharesOneModel();
  checkRule(root, log, "parallel.algorithm", {"parallel.strategy"},
            shared_model && !allReduces(job),
            "\"shm-sharded\" shares one model's gradient sum and update among the ranks of "
            "parallel.strategy = \"allreduce\"; with " +
                quoted(strategy) + " use " + allreduceChoices());
  checkRule(root, log, "parallel.algorithm", {"compression.codec"},
            shared_model && job.compression.compresses(),
            "\"shm-sharded\" sums the gradients where backward wrote them, with nothing to "
            "encode; with compression.codec = " +
                quoted(codec) + " use " + allreduceChoices());
  const CodecTraits* traits = findCodecTraits(codec);
  checkRule(root, log, "compression.codec", {"parallel.strategy"},
            traits != nullptr && traits->form == CodecForm::kLowRank &&
                strategyTraitsOr(strategy).parameter_servers,
            quoted(codec) +
                " needs every worker's P summed before Q can be computed (two all-reduces per "
                "step), which one push and one pull per step to a parameter server cannot do; "
                "with parallel.strategy = " +
                quoted(strategy) + " use " + codecsAServerTakes() +
                ", or parallel.strategy = \"allreduce\"");
}

}  // namespace ranklab::job_detail
