// The job keys of the engine: models, optimizers, schedules, checkpoints, synthetic data.
#include <gtest/gtest.h>

#include "engine/job/job_file.h"
#include "engine/job/job_spec.h"
#include "kernels/gpu_probe.h"

namespace ranklab {
namespace {

std::vector<JobIssue> engineKeyIssues(const std::string& text) {
  return checkJob(text, "job.toml");
}

std::string onlyMessage(const std::string& text) {
  const auto issues = engineKeyIssues(text);
  if (issues.size() != 1) {
    ADD_FAILURE() << "expected exactly one issue, got " << issues.size();
    for (const auto& issue : issues) ADD_FAILURE() << "  issue: " << issue.str();
    return "";
  }
  return issues.front().key + ": " + issues.front().message;
}

TEST(JobEngineKeys, ReadsEveryEngineKey) {
  const JobSpec job = parseJob(R"(
[data]
dataset = "spirals"
samples = 3000
test_samples = 500
noise = 0.2
arms = 4
prefetch = 0
[model]
kind = "mlp"
layers = []
dropout = 0.5
[train]
optimizer = "sgd"
nesterov = true
beta1 = 0.8
beta2 = 0.99
eps = 1e-6
lr_schedule = "step"
lr_step_epochs = 3
lr_gamma = 0.5
warmup_steps = 100
checkpoint_path = "run.ckpt"
checkpoint_every = 50
resume_from = "old.ckpt"
)",
                               "job.toml");
  EXPECT_EQ(job.data.dataset, DatasetKind::kSpirals);
  EXPECT_EQ(job.data.samples, 3000);
  EXPECT_EQ(job.data.arms, 4);
  EXPECT_EQ(job.data.prefetch, 0);
  EXPECT_TRUE(job.model.layers.empty());
  EXPECT_EQ(job.model.dropout, 0.5);
  EXPECT_TRUE(job.train.nesterov);
  EXPECT_EQ(job.train.eps, 1e-6);
  EXPECT_EQ(job.train.lr_schedule, LrScheduleKind::kStep);
  EXPECT_EQ(job.train.warmup_steps, 100);
  EXPECT_EQ(job.train.checkpoint_every, 50);
  EXPECT_EQ(job.train.resume_from, "old.ckpt");
  EXPECT_EQ(parseJob(toTomlText(job), "round.toml"), job);
}

TEST(JobEngineKeys, CnnKeys) {
  const JobSpec job =
      parseJob("[model]\nkind = \"cnn\"\nchannels = [16, 32]\nkernel_size = 3\n", "job.toml");
  EXPECT_EQ(job.model.channels, (std::vector<int>{16, 32}));
  EXPECT_EQ(job.model.kernel_size, 3);
  EXPECT_EQ(onlyMessage("[model]\nkernel_size = 4\n"),
            "model.kernel_size: must be odd (1, 3, 5, 7, 9 or 11: same padding keeps the image "
            "size), got 4");
  EXPECT_EQ(onlyMessage("[model]\nkernel_size = 13\n"), "model.kernel_size: must be 1..11, got 13");
  EXPECT_EQ(onlyMessage("[model]\nchannels = []\n"),
            "model.channels: must have 1..4 entries (one per conv+pool stage), got 0");
  EXPECT_EQ(onlyMessage("[model]\ndropout = 1.0\n"), "model.dropout: must be >= 0 and < 1, got 1");
}

TEST(JobEngineKeys, AllowedValuesAreListed) {
  EXPECT_EQ(onlyMessage("[model]\nkind = \"rnn\"\n"),
            "model.kind: must be one of: mlp, cnn, gpt; got \"rnn\"");
  EXPECT_EQ(onlyMessage("[train]\noptimizer = \"lamb\"\n"),
            "train.optimizer: must be one of: sgd, adam, adamw; got \"lamb\"");
  EXPECT_EQ(onlyMessage("[train]\nlr_schedule = \"linear\"\n"),
            "train.lr_schedule: must be one of: constant, step, cosine; got \"linear\"");
  EXPECT_EQ(onlyMessage("[data]\ndataset = \"mnist\"\n"),
            "data.dataset: must be one of: fashion-mnist, spirals, moons, text; got \"mnist\"");
  EXPECT_EQ(onlyMessage("[train]\nnesterov = 1\n"),
            "train.nesterov: expected true or false, got integer");
}

TEST(JobEngineKeys, RulesAcrossKeys) {
  EXPECT_EQ(onlyMessage("[data]\ndataset = \"moons\"\n[model]\nkind = \"cnn\"\n"),
            "model.kind: \"cnn\" needs image data, and data.dataset \"moons\" gives 2-D points; "
            "use model.kind = \"mlp\" or data.dataset = \"fashion-mnist\"");
  EXPECT_EQ(onlyMessage("[train]\noptimizer = \"adam\"\nnesterov = true\n"),
            "train.nesterov: true needs train.optimizer = \"sgd\" and train.momentum > 0 (got "
            "\"adam\" with momentum 0.9)");
  EXPECT_EQ(
      onlyMessage("[train]\ncheckpoint_every = 10\n"),
      "train.checkpoint_every: needs train.checkpoint_path, the file to write checkpoints to");
  EXPECT_EQ(onlyMessage("[train]\nlr_schedule = \"cosine\"\nlr = 0.1\nlr_min = 0.2\n"),
            "train.lr_min: must be <= train.lr (0.1) for the cosine schedule to decay, got 0.2");
  // A rule is not reported on top of a key's own problem.
  EXPECT_EQ(onlyMessage("[train]\noptimizer = \"lamb\"\nnesterov = true\n"),
            "train.optimizer: must be one of: sgd, adam, adamw; got \"lamb\"");
}

// The GPT reads text and text is the GPT's; its sizes must fit; what it cannot yet run with
// is named with the way out.
TEST(JobEngineKeys, GptNamesWhatItNeedsAndWhatItCannotRunWithYet) {
  const std::string gpt = "[data]\ndataset = \"text\"\n[model]\nkind = \"gpt\"\n";
  EXPECT_TRUE(engineKeyIssues(gpt).empty());
  const JobSpec job =
      parseJob(gpt + "blocks = 2\nheads = 2\nwidth = 32\ncontext = 16\n", "job.toml");
  EXPECT_EQ(job.model.blocks, 2);
  EXPECT_EQ(job.model.heads, 2);
  EXPECT_EQ(job.model.width, 32);
  EXPECT_EQ(job.model.context, 16);
  const std::pair<std::string, std::string> cases[] = {
      {"[model]\nkind = \"gpt\"\n",
       "model.kind: \"gpt\" is a language model and trains on text: set data.dataset = \"text\" "
       "(got \"fashion-mnist\")"},
      {"[data]\ndataset = \"text\"\n",
       "data.dataset: \"text\" is a sequence of byte tokens, which only model.kind = \"gpt\" reads "
       "(got \"mlp\")"},
      {gpt + "width = 130\n", "model.width: model.heads (4) must divide model.width (130)"},
      {gpt + "heads = 3\nwidth = 128\n", "model.heads: model.heads (3) must divide model.width"},
      {gpt + "blocks = 1\n[parallel]\nranks = 5\npipeline = 5\n",
       "parallel.pipeline: must be at most the model's 4 blocks"},
      {gpt + "heads = 4\n[parallel]\nranks = 8\ntensor = 8\n",
       "parallel.tensor: must divide model.heads (4): each slice computes whole heads of the "
       "attention, got 8"},
      {gpt + "context = 0\n", "model.context: must be 1..4096, got 0"}};
  for (const auto& [text, expected] : cases) {
    const std::string message = onlyMessage(text);
    EXPECT_NE(message.find(expected), std::string::npos) << text << "\n" << message;
  }
  for (int zero : {1, 2, 3}) {
    EXPECT_TRUE(engineKeyIssues(gpt + "[parallel]\nranks = 8\npipeline = 2\ntensor = 2\nzero = " +
                                std::to_string(zero) + "\n")
                    .empty())
        << "zero " << zero;
  }
}

// Sequence parallelism splits a tensor-parallel GPT's rows: without a GPT, without slices
// or with a context the slices do not divide, it is refused naming why; in 3D it is valid.
TEST(JobEngineKeys, SequenceParallelismNamesWhatItSplits) {
  const std::string gpt = "[data]\ndataset = \"text\"\n[model]\nkind = \"gpt\"\ncontext = 30\n";
  const std::pair<std::string, std::string> cases[] = {
      {"[parallel]\nranks = 2\ntensor = 2\nsequence_parallel = true\n",
       "parallel.sequence_parallel: splits a GPT's blocks along its sequence, and model.kind = "
       "\"mlp\" has none; use false"},
      {gpt + "[parallel]\nsequence_parallel = true\n",
       "parallel.sequence_parallel: splits the rows of a tensor-parallel GPT's slices; with "
       "parallel.tensor = 1 there is one slice"},
      {gpt + "[parallel]\nranks = 4\ntensor = 4\nsequence_parallel = true\n",
       "parallel.sequence_parallel: gives each of the parallel.tensor = 4 slices an equal share "
       "of every sample's positions: model.context (30) must be a multiple of it"},
      {gpt + "[parallel]\nsequence_parallel = 1\n",
       "parallel.sequence_parallel: expected true or false, got integer"}};
  for (const auto& [text, expected] : cases) {
    const std::string message = onlyMessage(text);
    EXPECT_NE(message.find(expected), std::string::npos) << text << "\n" << message;
  }
  EXPECT_TRUE(engineKeyIssues(gpt + "[parallel]\nranks = 8\npipeline = 2\ntensor = 2\nzero = 1\n"
                                    "sequence_parallel = true\n")
                  .empty());
  EXPECT_TRUE(
      parseJob(gpt + "[parallel]\nranks = 2\ntensor = 2\nsequence_parallel = true\n", "job.toml")
          .parallel.sequence_parallel);
}

// ZeRO shards the ring's all-reduce: every feature that needs a whole gradient, another
// algorithm or a split model is named with the way out.
TEST(JobEngineKeys, ZeroNamesWhatItCannotRunWith) {
  const std::pair<std::string, std::string> cases[] = {
      {"[parallel]\nzero = 4\n", "parallel.zero: must be 0..3, got 4"},
      {"[parallel]\nzero = 1\nstrategy = \"ps-sync\"\n",
       "parallel.zero: needs parallel.strategy = \"allreduce\""},
      {"[parallel]\nzero = 1\nalgorithm = \"shm\"\n",
       "parallel.zero: needs parallel.algorithm = \"ring\""},
      {"[parallel]\nzero = 2\n[compression]\ncodec = \"topk\"\n",
       "parallel.zero: moves gradients uncompressed"},
      {"[parallel]\nzero = 1\nbucket_kb = 64\n", "leave parallel.bucket_kb = 0, got 64"},
      {"[parallel]\nzero = 2\nmicrobatches = 4\n",
       "use parallel.microbatches = 1 or parallel.zero = 1, got 4"},
      {"[train]\naccumulate_steps = 2\n[parallel]\nzero = 3\n",
       "train.accumulate_steps: parallel.zero = 3 reduces each layer's gradient"},
      {"[train]\naccumulate_steps = 2\n[parallel]\nranks = 2\npipeline = 2\n",
       "train.accumulate_steps: a pipeline accumulates over parallel.microbatches"}};
  for (const auto& [text, expected] : cases) {
    const std::string message = onlyMessage(text);
    EXPECT_NE(message.find(expected), std::string::npos) << text << "\n" << message;
  }
  EXPECT_TRUE(engineKeyIssues("[parallel]\nzero = 1\n[amp]\ndtype = \"bf16\"\n").empty());
  EXPECT_TRUE(engineKeyIssues("[parallel]\nzero = 3\n[amp]\ndtype = \"fp16\"\n").empty());
  EXPECT_TRUE(engineKeyIssues("[parallel]\nzero = 3\n").empty());
  EXPECT_TRUE(engineKeyIssues("[parallel]\nzero = 1\nranks = 4\npipeline = 2\n").empty());
}

// Priority scheduling orders the pieces of a plain all-reduced gradient: what would need
// the whole gradient, or talks during the passes, is named with the way out.
TEST(JobEngineKeys, PriorityScheduleNamesWhatItCannotRunWith) {
  const std::string priority = "[parallel]\ncomm_schedule = \"priority\"\n";
  const std::pair<std::string, std::string> cases[] = {
      {"[parallel]\ncomm_schedule = \"lifo\"\n",
       "parallel.comm_schedule: must be one of: fifo, priority; got \"lifo\""},
      {priority + "strategy = \"ps-sync\"\n", "needs parallel.strategy = \"allreduce\""},
      {priority + "algorithm = \"shm-sharded\"\n", "(got \"allreduce\", \"shm-sharded\")"},
      {priority + "[compression]\ncodec = \"topk\"\n",
       "use compression.codec = \"none\", got \"topk\""},
      {priority + "bucket_kb = 64\n", "leave parallel.bucket_kb = 0 (it sizes \"fifo\"'s buckets)"},
      {priority + "ranks = 2\ntensor = 2\n", "use parallel.zero = 0, pipeline = 1 and tensor = 1"},
      {priority + "partition_kb = 0\n", "parallel.partition_kb: must be 1..1048576, got 0"}};
  for (const auto& [text, expected] : cases) {
    const std::string message = onlyMessage(text);
    EXPECT_NE(message.find(expected), std::string::npos) << text << "\n" << message;
  }
  EXPECT_TRUE(engineKeyIssues(priority + "partition_kb = 16\ncredit_kb = 64\n").empty());
  EXPECT_TRUE(engineKeyIssues(priority + "[amp]\ndtype = \"fp16\"\n").empty());
}

// train.device: its form, a GPU that must be there, and the parts without a GPU path.
TEST(JobEngineKeys, DeviceNamesAGpuThatIsThereAndWhatCannotRunOnIt) {
  EXPECT_EQ(onlyMessage("[train]\ndevice = \"gpu0\"\n"),
            "train.device: must be \"cpu\", \"cuda\" or \"cuda:N\" (N a GPU index, 0..99), "
            "got \"gpu0\"");
  EXPECT_EQ(parseJob("[train]\ndevice = \"cpu\"\n", "job.toml").train.device, "cpu");
  std::string why;
  const int gpus = kernels::usableGpus(&why);
  const auto device_issues = [](const std::string& text) {
    std::vector<std::string> found;
    for (const auto& issue : engineKeyIssues(text))
      if (issue.key == "train.device") found.push_back(issue.message);
    return found;
  };
  if (gpus == 0) {
    EXPECT_EQ(device_issues("[train]\ndevice = \"cuda\"\n"),
              std::vector<std::string>{"\"cuda\" needs a GPU, but " + why + "; use \"cpu\""});
  } else {
    EXPECT_TRUE(device_issues("[train]\ndevice = \"cuda\"\n").empty());
    EXPECT_EQ(device_issues("[train]\ndevice = \"cuda:99\"\n").size(), 1u);
  }
  // Checked by each rank on its own host when the ranks run elsewhere.
  EXPECT_TRUE(
      device_issues("[train]\ndevice = \"cuda\"\n[launch]\nhosts = [\"a\", \"b\"]\n").empty());
  const std::string on_gpu = "[train]\ndevice = \"cuda\"\n[parallel]\n";
  const std::pair<std::string, std::string> cases[] = {
      {on_gpu + "algorithm = \"shm-sharded\"\n",
       "parallel.algorithm: \"shm-sharded\" keeps the one shared model in host shared memory"},
      {on_gpu + "comm_schedule = \"priority\"\ndevice_collectives = \"nccl\"\n",
       "parallel.device_collectives: \"nccl\" all-reduces the whole GPU gradient at once"},
      {on_gpu + "device_collectives = \"nccl\"\nstrategy = \"ps-sync\"\n",
       "parallel.device_collectives: \"nccl\" all-reduces the GPU buffers as they are: needs "
       "parallel.strategy = \"allreduce\""},
      {on_gpu + "device_collectives = \"ring\"\n",
       "parallel.device_collectives: must be one of: auto, nccl, host; got \"ring\""}};
  for (const auto& [text, expected] : cases) {
    bool seen = false;
    for (const auto& issue : engineKeyIssues(text))
      seen |= (issue.key + ": " + issue.message).find(expected) != std::string::npos;
    EXPECT_TRUE(seen) << text;
  }
  // ZeRO runs on GPUs through NCCL, or through host copies: nothing about it is refused on
  // the key itself, whatever the collectives.
  for (const std::string stage : {"1", "2", "3"}) {
    for (const std::string collectives : {"auto", "nccl", "host"}) {
      const std::string text =
          on_gpu + "zero = " + stage + "\ndevice_collectives = \"" + collectives + "\"\n";
      for (const auto& issue : engineKeyIssues(text))
        EXPECT_NE(issue.key, "parallel.zero")
            << stage << ", " << collectives << ": " << issue.message;
    }
  }
  // Nor are pipeline stages, tensor slices or priority pieces: they go through host copies.
  for (const std::string layout : {"pipeline = 2", "tensor = 2", "comm_schedule = \"priority\""}) {
    for (const auto& issue : engineKeyIssues(on_gpu + "ranks = 2\n" + layout + "\n")) {
      EXPECT_NE(issue.key, "parallel.pipeline") << issue.message;
      EXPECT_NE(issue.key, "parallel.tensor") << issue.message;
      EXPECT_NE(issue.key, "parallel.comm_schedule") << issue.message;
    }
  }
  // On the CPU the GPU's limits do not apply.
  EXPECT_TRUE(engineKeyIssues("[parallel]\nzero = 1\ndevice_collectives = \"nccl\"\n").empty());
}

TEST(JobEngineKeys, Tf32IsAGpuOptionOffByDefault) {
  EXPECT_FALSE(parseJob("", "job.toml").train.tf32);
  EXPECT_EQ(onlyMessage("[train]\ntf32 = true\n"),
            "train.tf32: TF32 is a GPU tensor-core format, and train.device = \"cpu\" computes "
            "in fp32 already: set train.tf32 = false, or train.device = \"cuda\"");
  EXPECT_NE(onlyMessage("[train]\ntf32 = 1\n").find("train.tf32"), std::string::npos);
  // On a GPU it is a choice (only the GPU's own check may speak).
  for (const auto& issue : engineKeyIssues("[train]\ndevice = \"cuda\"\ntf32 = true\n"))
    EXPECT_NE(issue.key, "train.tf32");
}

// A pipeline cut by hand: one count per stage, adding up to the blocks.
TEST(JobEngineKeys, StageLayersMustCoverTheBlocksStageByStage) {
  EXPECT_NE(
      onlyMessage("[parallel]\nranks = 2\npipeline = 2\nstage_layers = [1, 1, 1]\n")
          .find("parallel.stage_layers: must list 2 stages' blocks adding up to the model's 3"),
      std::string::npos);
  EXPECT_NE(onlyMessage("[parallel]\nranks = 2\npipeline = 2\nstage_layers = [1, 1]\n")
                .find("got 2 stages adding up to 2"),
            std::string::npos);
  EXPECT_NE(onlyMessage("[parallel]\nstage_layers = [1, 2]\n").find("set parallel.pipeline"),
            std::string::npos);
  EXPECT_TRUE(
      engineKeyIssues("[parallel]\nranks = 2\npipeline = 2\nstage_layers = [2, 1]\n").empty());
}

// Clipping needs a rank that holds the whole update's gradient and updates from it.
TEST(JobEngineKeys, GradClipNamesTheUpdatesItCannotClip) {
  const std::pair<std::string, std::string> cases[] = {
      {"[train]\ngrad_clip = 1.0\n[parallel]\nstrategy = \"ps-sync\"\n",
       "train.grad_clip: clips the gradient an update reads, and with parallel.strategy = "
       "\"ps-sync\" the servers update"},
      {"[train]\ngrad_clip = 1.0\n[parallel]\nalgorithm = \"shm-sharded\"\n",
       "\"shm-sharded\" updates one shared model chunk by chunk"},
      {"[train]\ngrad_clip = 1.0\n[parallel]\ncomm_schedule = \"priority\"\n",
       "\"priority\" updates each piece as it arrives"},
      {"[train]\ngrad_clip = -1.0\n", "train.grad_clip"}};
  for (const auto& [text, expected] : cases) {
    const std::string message = onlyMessage(text);
    EXPECT_NE(message.find(expected), std::string::npos) << text << "\n" << message;
  }
  EXPECT_TRUE(
      engineKeyIssues("[train]\ngrad_clip = 1.0\n[parallel]\nranks = 4\ntensor = 2\n").empty());
  EXPECT_TRUE(engineKeyIssues("[train]\ngrad_clip = 1.0\n[parallel]\nzero = 2\n").empty());
}

// Tensor parallelism splits Linear pairs (an MLP's, a CNN head's) over whole ranks: what it
// cannot split is named.
TEST(JobEngineKeys, TensorNamesWhatItCannotSplit) {
  const std::pair<std::string, std::string> cases[] = {
      {"[parallel]\nranks = 3\ntensor = 2\n", "parallel.tensor: must divide parallel.ranks (3)"},
      {"[model]\ndropout = 0.2\n[parallel]\ntensor = 2\n", "use model.dropout = 0, got 0.2"},
      {"[model]\nlayers = [100]\n[parallel]\nranks = 8\ntensor = 8\n",
       "100 is not a multiple of 8"},
      {"[parallel]\ntensor = 2\nstrategy = \"local-sgd\"\n",
       "needs parallel.strategy = \"allreduce\""}};
  for (const auto& [text, expected] : cases) {
    const std::string message = onlyMessage(text);
    EXPECT_NE(message.find(expected), std::string::npos) << text << "\n" << message;
  }
  EXPECT_TRUE(engineKeyIssues("[parallel]\nranks = 4\ntensor = 2\n").empty());
  EXPECT_TRUE(engineKeyIssues("[parallel]\nranks = 8\ntensor = 2\npipeline = 2\n").empty());
  EXPECT_TRUE(engineKeyIssues("[parallel]\nranks = 4\ntensor = 2\nzero = 3\n").empty());
  EXPECT_TRUE(engineKeyIssues("[model]\nkind = \"cnn\"\n[parallel]\ntensor = 2\n").empty());
  // A split model's checkpoint holds the whole model (engine/train/model_part.h).
  EXPECT_TRUE(engineKeyIssues("[parallel]\nranks = 8\ntensor = 2\npipeline = 2\n[train]\n"
                              "checkpoint_path = \"a.ckpt\"\n")
                  .empty());
}

}  // namespace
}  // namespace ranklab
