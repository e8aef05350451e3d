// The training loop with ranks as threads over the in-memory transport.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "comm/steady_clock.h"
#include "engine/data/datasets.h"
#include "engine/data/shard_loader.h"
#include "engine/data/text_dataset.h"
#include "engine/job/job_file.h"
#include "engine/model/models.h"
#include "engine/optim/optimizer.h"
#include "engine/train/thread_policy.h"
#include "engine/train/trainer.h"
#include "tests/support/thread_ranks.h"

namespace ranklab {
namespace {

using testing::trainWithThreads;

JobSpec smallJob(int ranks, const std::string& algorithm) {
  JobSpec job;
  job.model.layers = {32};
  job.train.epochs = 2;
  job.train.batch_size = 25;
  job.parallel.ranks = ranks;
  job.parallel.algorithm = algorithm;
  return job;
}

TEST(Trainer, SameSeedGivesTheSameLossCurveBitForBit) {
  const auto a = trainWithThreads(smallJob(2, "ring"));
  const auto b = trainWithThreads(smallJob(2, "ring"));
  ASSERT_EQ(a[0].losses.size(), 2u * 4000 / 2 / 25);
  EXPECT_EQ(a[0].losses, b[0].losses);
  EXPECT_EQ(a[1].losses, b[1].losses);
}

TEST(Trainer, LearnsAndEveryRankAgreesOnTheEvaluation) {
  const auto ranks = trainWithThreads(smallJob(3, "ring"));
  ASSERT_EQ(ranks[0].evals.size(), 2u);
  EXPECT_GT(ranks[0].evals.back().test_accuracy, 0.65);
  EXPECT_LT(ranks[0].evals.back().test_loss, ranks[0].losses.front());
  for (const auto& r : ranks)
    EXPECT_EQ(r.evals.back().test_accuracy, ranks[0].evals.back().test_accuracy);
}

TEST(Trainer, RingAndNativeAllreduceTrainAlike) {
  const auto ring = trainWithThreads(smallJob(2, "ring"));
  const auto native = trainWithThreads(smallJob(2, "mpi"));
  // Sums of two terms are order-independent, so the curves agree closely.
  ASSERT_EQ(ring[0].losses.size(), native[0].losses.size());
  for (size_t i = 0; i < ring[0].losses.size(); ++i) {
    ASSERT_NEAR(ring[0].losses[i], native[0].losses[i], 1e-4) << "step " << i + 1;
  }
}

TEST(Trainer, MaxStepsStopsEarlyAndStillEvaluates) {
  JobSpec job = smallJob(2, "ring");
  job.train.max_steps = 7;
  const auto ranks = trainWithThreads(job);
  EXPECT_EQ(ranks[0].losses.size(), 7u);
  EXPECT_EQ(ranks[0].evals.size(), 1u);
}

TEST(Trainer, BatchLargerThanTheShardIsAClearError) {
  JobSpec job = smallJob(1, "ring");
  job.train.batch_size = 5000;
  ThreadRendezvous rendezvous(1);
  ThreadCommunicator comm(rendezvous, 0);
  testing::RunRecorder recorder;
  try {
    train(job, comm, testing::smallTrainSet(), testing::smallTestSet(), recorder);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("train.batch_size 5000"), std::string::npos) << e.what();
  }
}

TEST(Trainer, PrefetchingChangesNothing) {
  JobSpec job = smallJob(2, "ring");
  job.train.max_steps = 50;
  job.data.prefetch = 0;
  const auto direct = trainWithThreads(job);
  job.data.prefetch = 3;
  const auto prefetched = trainWithThreads(job);
  EXPECT_EQ(direct[0].losses, prefetched[0].losses);
  EXPECT_EQ(direct[1].losses, prefetched[1].losses);
}

// The trainer warms the GEMM kernels up with a pass before the clock starts; the steps
// after it are the ones a bare model, loader and optimizer take (dropout masks included).
TEST(Trainer, KernelWarmUpLeavesTheModelAsItWas) {
  JobSpec job = smallJob(1, "ring");
  job.model.dropout = 0.3;
  job.train.momentum = 0.9;
  job.train.max_steps = 3;
  const auto trained = trainWithThreads(job);
  const Dataset& data = testing::smallTrainSet();
  Network model = makeModel(job.model, {data.height, data.width, 1}, data.classes, job.train.seed);
  model.setDropoutStream(job.train.seed, 0);
  auto optimizer = makeOptimizer(job.train, model.parameterCount());
  ShardLoader loader(data, 0, 1, job.train.batch_size, job.train.seed);
  loader.startEpoch(1);
  std::vector<float> images(static_cast<size_t>(job.train.batch_size) * data.features);
  std::vector<uint8_t> labels(job.train.batch_size);
  for (int step = 0; step < 3; ++step) {
    loader.batch(step, images.data(), labels.data());
    const BatchLoss loss = model.forward(images.data(), labels.data(), job.train.batch_size);
    model.zeroGrads();
    model.backward(images.data(), labels.data(), job.train.batch_size);
    optimizer->step(model.params(), model.grads(), job.train.lr);
    EXPECT_EQ(trained[0].losses.at(step), loss.loss_sum / job.train.batch_size) << "step " << step;
  }
}

// Every span_every-th step reports its device's work piece by piece, in the order it ran:
// each layer's forward, the loss head's forward and backward, each layer's backward, the
// update, all before the step's record was made.
TEST(Trainer, SampledStepsReportTheirDevicesWorkPieceByPiece) {
  JobSpec job = smallJob(2, "ring");  // Linear 784-32 with its ReLU absorbed, Linear 32-10
  job.train.max_steps = 10;
  job.telemetry.span_every = 4;
  const int64_t before = steadyNowNs();
  const auto ranks = trainWithThreads(job);
  for (const auto& rank : ranks) {
    ASSERT_EQ(rank.device.size(), 2u) << "steps 4 and 8";
    for (const auto& [step, spans] : rank.device) {
      EXPECT_TRUE(step == 4 || step == 8) << step;
      std::vector<std::string> kinds;
      for (const DeviceSpan& s : spans)
        kinds.push_back(std::string(s.kind) + (s.layer >= 0 ? std::to_string(s.layer) : ""));
      EXPECT_EQ(kinds, (std::vector<std::string>{"dev-fwd0", "dev-fwd2", "dev-loss", "dev-loss",
                                                 "dev-bwd2", "dev-bwd0", "dev-update"}));
      for (size_t i = 0; i < spans.size(); ++i) {
        EXPECT_GE(spans[i].begin_ns, i ? spans[i - 1].end_ns : before) << kinds[i];
        EXPECT_GE(spans[i].end_ns, spans[i].begin_ns) << kinds[i];
      }
    }
  }
}

// Telemetry batches fast steps; the observer hears of each evaluation and checkpoint before
// it, so the last steps are not held through it.
TEST(Trainer, ObserverHearsOfEveryPauseBeforeItComes) {
  JobSpec job = smallJob(2, "ring");  // 4000 samples / 2 ranks / 25: 80 steps an epoch
  job.train.checkpoint_every = 30;
  job.train.checkpoint_path = (std::filesystem::temp_directory_path() /
                               ("ranklab-pause-" + std::to_string(::getpid()) + ".ckpt"))
                                  .string();
  const auto ranks = trainWithThreads(job);
  std::filesystem::remove(job.train.checkpoint_path);
  // Checkpoints after steps 30, 60, 90, 120, 150; evaluations after 80 and 160.
  const std::vector<size_t> expected{30, 60, 80, 90, 120, 150, 160};
  for (const auto& rank : ranks) EXPECT_EQ(rank.pauses, expected);
}

TEST(Trainer, SameJobWithDropoutAdamAndCosineIsBitForBitReproducible) {
  JobSpec job = smallJob(2, "ring");
  job.model.dropout = 0.3;
  job.train.optimizer = OptimizerKind::kAdamW;
  job.train.lr = 0.003;
  job.train.weight_decay = 0.01;
  job.train.lr_schedule = LrScheduleKind::kCosine;
  job.train.warmup_steps = 20;
  const auto a = trainWithThreads(job), b = trainWithThreads(job);
  EXPECT_EQ(a[0].losses, b[0].losses);
  EXPECT_EQ(a[1].losses, b[1].losses);
  EXPECT_NE(a[0].losses, a[1].losses);  // each rank its own shard and dropout masks
}

TEST(Trainer, SpiralsTeachingJobLearnsInSeconds) {
  JobSpec job;
  job.data.dataset = DatasetKind::kSpirals;
  job.model.layers = {64, 64};
  job.train.optimizer = OptimizerKind::kAdam;
  job.train.lr = 0.01;
  job.train.epochs = 20;
  job.train.batch_size = 50;
  job.parallel.ranks = 2;
  const DataSplits data = loadJobData(
      [] {
        DataSpec spec;
        spec.dataset = DatasetKind::kSpirals;
        spec.samples = 3000;
        spec.test_samples = 1000;
        return spec;
      }(),
      1);
  const auto ranks = trainWithThreads(job, data.train, data.test);
  EXPECT_GT(ranks[0].evals.back().test_accuracy, 0.85);  // chance is 1/3
}

TEST(Trainer, CnnTrainsOnImages) {
  JobSpec job = smallJob(1, "ring");
  job.model.kind = ModelKind::kCnn;
  job.model.channels = {4, 8};
  job.model.layers = {};
  job.train.batch_size = 50;
  job.train.epochs = 1;
  const auto ranks = trainWithThreads(job);
  ASSERT_EQ(ranks[0].evals.size(), 1u);
  EXPECT_GT(ranks[0].evals.back().test_accuracy, 0.6);
}

// train.eval_every: evaluations inside the epoch, on the first eval_batches batches of each
// rank's share, then the epoch's own over all of it.
TEST(Trainer, EvalEveryEvaluatesInsideTheEpoch) {
  JobSpec job = smallJob(2, "ring");
  job.train.epochs = 1;
  job.train.eval_every = 4;
  job.train.eval_batches = 1;
  job.train.max_steps = 10;
  const auto ranks = trainWithThreads(job);
  for (const auto& rank : ranks) {
    std::vector<int64_t> steps;
    for (const EvalStats& e : rank.evals) steps.push_back(e.step);
    EXPECT_EQ(steps, (std::vector<int64_t>{4, 8, 10}));
    EXPECT_EQ(rank.evals[0].test_loss, ranks[0].evals[0].test_loss);  // every rank agrees
  }
}

// A tiny GPT learns a repeated line: its validation loss falls far below a uniform guess's
// ln 256 and its first rank (alone) writes text in the line's characters at each evaluation.
TEST(Trainer, AGptLearnsTextAndItsFirstRankWritesIt) {
  // 41 bytes, prime to the context of 16: the windows start at every phase of the line.
  std::string line = "the quick brown fox jumps over lazy dogs\n", text;
  while (text.size() < 20000) text += line;
  const std::vector<uint8_t> bytes(text.begin(), text.end());
  const Dataset train_set = textWindows({bytes.begin(), bytes.begin() + 18000}, 16);
  const Dataset test_set = textWindows({bytes.begin() + 18000, bytes.end()}, 16);
  JobSpec job;
  job.data.dataset = DatasetKind::kText;
  job.data.path = defaultDataPath(job.data.dataset);
  job.model.kind = ModelKind::kGpt;
  job.model.context = 16;
  job.model.width = 32;
  job.model.heads = 2;
  job.model.blocks = 1;
  job.train.optimizer = OptimizerKind::kAdamW;
  job.train.lr = 0.01;
  job.train.batch_size = 16;
  job.train.epochs = 4;
  job.train.eval_every = 20;
  job.train.eval_batches = 2;
  job.train.sample_chars = 60;
  job.parallel.ranks = 2;
  const auto ranks = trainWithThreads(job, train_set, test_set);
  EXPECT_LT(ranks[0].evals.back().test_loss, 0.5);  // ln 256 = 5.55
  const auto samples = [](const testing::RunRecorder& r) {
    std::vector<std::string> texts;
    for (const std::string& e : r.events)
      if (e.rfind("sample: ", 0) == 0) texts.push_back(e.substr(8));
    return texts;
  };
  EXPECT_TRUE(samples(ranks[1]).empty());
  const std::vector<std::string> written = samples(ranks[0]);
  ASSERT_EQ(written.size(), ranks[0].evals.size());
  // The model writes only the line's characters (the other 228 bytes are all but ruled
  // out at this loss), starting from the newline as the line does.
  const std::string& last = written.back();
  EXPECT_EQ(last.find_first_not_of(line), std::string::npos) << last;
  EXPECT_EQ(last.substr(0, 4), "\nthe") << last;
  std::printf("sample after %lld steps: %s\n", static_cast<long long>(ranks[0].evals.back().step),
              last.c_str());
}

// PowerSGD compresses a GPT's matrices as PyTorch's hook does every 2-D tensor: each
// block's four Linears and the embedding's tables; only the LayerNorms and biases go whole.
TEST(Trainer, PowerSgdCompressesAGptsBlocksAndTables) {
  std::string line = "the quick brown fox jumps over lazy dogs\n", text;
  while (text.size() < 8000) text += line;
  const std::vector<uint8_t> bytes(text.begin(), text.end());
  const Dataset train_set = textWindows({bytes.begin(), bytes.begin() + 7000}, 16);
  const Dataset test_set = textWindows({bytes.begin() + 7000, bytes.end()}, 16);
  JobSpec job;
  job.data.dataset = DatasetKind::kText;
  job.data.path = defaultDataPath(job.data.dataset);
  job.model.kind = ModelKind::kGpt;
  job.model.context = 16;
  job.model.width = 64;
  job.model.heads = 2;
  job.model.blocks = 2;
  job.train.batch_size = 8;
  job.train.max_steps = 6;
  job.train.sample_chars = 0;
  job.parallel.ranks = 2;
  job.compression.codec = "powersgd";
  const auto ranks = trainWithThreads(job, train_set, test_set);
  const StepStats& s = ranks[0].stats.back();
  std::printf("gpt, powersgd rank 4: %lld of %lld bytes sent\n", static_cast<long long>(s.bytes_tx),
              static_cast<long long>(s.bytes_raw));
  EXPECT_LT(s.bytes_tx * 4, s.bytes_raw);
  EXPECT_TRUE(std::isfinite(ranks[0].evals.back().test_loss));
}

TEST(ThreadPolicy, CoresPerRankUnlessTheJobSays) {
  ParallelSpec parallel;
  parallel.ranks = 4;
  EXPECT_EQ(blasThreadsFor(parallel, 2), 1);  // oversubscribed: never fewer than one
  EXPECT_EQ(blasThreadsFor(parallel, 16), 4);
  EXPECT_EQ(blasThreadsFor(parallel, 18), 4);
  EXPECT_EQ(blasThreadsFor(parallel, 16, 2), 8) << "on hosts: the ranks of this host share it";
  parallel.ranks = 1;
  EXPECT_EQ(blasThreadsFor(parallel, 8), 8);
  parallel.threads = 3;
  EXPECT_EQ(blasThreadsFor(parallel, 8), 3);
}

}  // namespace
}  // namespace ranklab
