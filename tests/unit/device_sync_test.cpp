// The gradient sync of a model whose buffers the engine may not read (a GPU's): each
// strategy over a transport that copies to the host (StagedTransport) leaves on the device
// exactly what it leaves on the host when run there; on the CPU the strategy is used as it is.
#include <gtest/gtest.h>

#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/train/allreduce_sync.h"
#include "engine/train/local_sgd_sync.h"
#include "engine/train/strategy_registry.h"
#include "engine/train/zero_sync.h"
#include "tests/support/guarded_device.h"
#include "tests/support/guarded_runs.h"
#include "tests/support/ledger_device.h"
#include "tests/support/thread_ranks.h"
#include "tests/support/thread_world.h"

namespace ranklab {
namespace {

using testing::DetachedDevice;
using testing::onEveryRank;

constexpr size_t kCount = 1000;
constexpr int kRanks = 3;

// Rank r's gradient: distinct per rank and per element.
std::vector<float> gradientOf(int rank) {
  std::vector<float> g(kCount);
  for (size_t i = 0; i < kCount; ++i) g[i] = 0.001f * static_cast<float>(i) + rank;
  return g;
}

// What one step leaves in each rank's gradient on `device`; the gradient handed over in two
// slices, the last first, as backward does.
std::vector<std::vector<float>> syncOnEveryRank(const JobSpec& job, const ComputeDevice& device) {
  std::vector<std::vector<float>> results(kRanks);
  onEveryRank(kRanks, [&](Communicator& comm) {
    std::unique_ptr<GradientSync> sync = makeGradientSync(job, comm, {}, device).sync;
    std::vector<float> params(kCount, 0.5f), grads = gradientOf(comm.rank());
    sync->start(params.data(), kCount);
    sync->startStep();
    sync->beginStep(0.1);
    sync->gradientReady(grads.data(), 600, kCount - 600);
    sync->gradientReady(grads.data(), 0, 600);
    sync->sync(grads.data(), kCount);
    sync->finish();
    results[comm.rank()] = grads;
  });
  return results;
}

// Each bucket (or the whole gradient) goes down once and its mean comes up once: the
// parameters stay where they are.
TEST(Transport, AStagedAllreduceLeavesTheMeanGradientOnTheDeviceAsTheHostRingDoes) {
  for (int bucket_kb : {0, 1}) {
    JobSpec job;
    job.parallel.ranks = kRanks;
    job.parallel.bucket_kb = bucket_kb;
    job.parallel.device_collectives = DeviceCollectives::kHost;
    DetachedDevice device;
    const auto direct = syncOnEveryRank(job, cpuDevice());
    const auto staged = syncOnEveryRank(job, device);
    EXPECT_EQ(staged, direct) << "bucket_kb " << bucket_kb;
    EXPECT_FLOAT_EQ(direct[0][10], 0.01f + 1.f);  // the mean of 0, 1 and 2 added
    const int buckets = bucket_kb == 0 ? 1 : 4;   // 1,000 floats in buckets of 256
    EXPECT_EQ(device.downloads.load(), kRanks * buckets) << "bucket_kb " << bucket_kb;
    EXPECT_EQ(device.uploads.load(), kRanks * buckets) << "bucket_kb " << bucket_kb;
  }
}

TEST(Transport, LocalSgdAveragesModelsThroughHostCopies) {
  JobSpec job;
  job.parallel.ranks = kRanks;
  job.parallel.strategy = "local-sgd";
  job.parallel.average_every = 1;
  job.parallel.device_collectives = DeviceCollectives::kHost;
  DetachedDevice device;
  std::vector<std::vector<float>> models(kRanks);
  onEveryRank(kRanks, [&](Communicator& comm) {
    std::unique_ptr<GradientSync> sync = makeGradientSync(job, comm, {}, device).sync;
    std::vector<float> params(kCount, static_cast<float>(comm.rank()));
    sync->start(params.data(), kCount);
    sync->startStep();
    std::vector<float> grads = gradientOf(comm.rank());
    sync->sync(grads.data(), kCount);
    sync->afterUpdate(params.data(), kCount);
    models[comm.rank()] = params;
  });
  for (const auto& model : models) EXPECT_EQ(model, std::vector<float>(kCount, 1.f));
}

TEST(DeviceSync, OnTheCpuIsTheStrategyItself) {
  JobSpec job;
  job.parallel.ranks = 2;
  onEveryRank(2, [&](Communicator& comm) {
    MadeSync made = makeGradientSync(job, comm, {}, cpuDevice());
    EXPECT_EQ(made.how, "");
    EXPECT_NE(dynamic_cast<AllreduceSync*>(made.sync.get()), nullptr);
  });
}

TEST(DeviceSync, ADetachedDeviceWithoutNcclStagesAndSaysWhy) {
  JobSpec job;
  job.parallel.ranks = 2;
  job.parallel.strategy = "local-sgd";
  DetachedDevice device;
  std::mutex guard;
  std::vector<std::string> hows;
  onEveryRank(2, [&](Communicator& comm) {
    MadeSync made = makeGradientSync(job, comm, {}, device);
    EXPECT_NE(dynamic_cast<LocalSgdSync*>(made.sync.get()), nullptr);
    std::lock_guard lock(guard);
    hows.push_back(made.how);
  });
  ASSERT_EQ(hows.size(), 2u);
  EXPECT_NE(hows[0].find("gradients copied to the host for local-sgd (not NCCL: "),
            std::string::npos)
      << hows[0];
}

TEST(DeviceSync, RefusesWhatHasNoGpuPathEvenInAJobBuiltInCode) {
  DetachedDevice device;
  JobSpec job;
  job.parallel.ranks = 1;
  job.parallel.algorithm = "shm-sharded";
  onEveryRank(1, [&](Communicator& comm) {
    EXPECT_THROW(makeGradientSync(job, comm, {}, device), std::invalid_argument);
  });
  // Priority pieces are ordered on host copies: NCCL, asked for by name, is refused.
  job.parallel.algorithm = "ring";
  job.parallel.comm_schedule = CommSchedule::kPriority;
  job.parallel.device_collectives = DeviceCollectives::kNccl;
  onEveryRank(1, [&](Communicator& comm) {
    EXPECT_THROW(makeGradientSync(job, comm, {}, device), std::invalid_argument);
  });
}

// The message of the std::invalid_argument makeGradientSync throws on every rank ("" if none).
std::string refusalOf(const JobSpec& job, const ComputeDevice& device) {
  std::mutex guard;
  std::string said;
  onEveryRank(job.parallel.ranks, [&](Communicator& comm) {
    try {
      makeGradientSync(job, comm, {}, device);
    } catch (const std::invalid_argument& e) {
      std::lock_guard lock(guard);
      said = e.what();
    }
  });
  return said;
}

// ZeRO on a GPU without NCCL (two ranks on one GPU, which NCCL refuses, or "host") is the
// same ZeroSync over the host ring through host copies, saying why; "nccl" asked by name is
// refused, saying why not.
TEST(DeviceSync, ZeroOnAGpuWithoutNcclStagesAndSaysWhy) {
  DetachedDevice device;  // "detached": both ranks on GPU 0
  JobSpec job;
  job.parallel.ranks = 2;
  job.parallel.zero = 2;
  for (const std::string collectives : {"auto", "host"}) {
    job.parallel.device_collectives = choiceFrom<DeviceCollectives>(collectives);
    std::mutex guard;
    std::vector<std::string> hows;
    onEveryRank(2, [&](Communicator& comm) {
      MadeSync made = makeGradientSync(job, comm, {}, device);
      EXPECT_NE(dynamic_cast<ZeroSync*>(made.sync.get()), nullptr) << collectives;
      std::lock_guard lock(guard);
      hows.push_back(made.how);
    });
    EXPECT_NE(hows[0].find("ZeRO stage 2: gradients copied to the host for the ring's "
                           "reduce-scatters"),
              std::string::npos)
        << hows[0];
    EXPECT_NE(hows[0].find(collectives == "host" ? "(parallel.device_collectives = \"host\")"
                                                 : "(not NCCL: "),
              std::string::npos)
        << hows[0];
  }
  job.parallel.device_collectives = DeviceCollectives::kNccl;
  const std::string said = refusalOf(job, device);
  EXPECT_NE(said.find("parallel.device_collectives = \"nccl\": "), std::string::npos) << said;
}

}  // namespace
}  // namespace ranklab

namespace ranklab {
namespace {

// A layer written once hands its device the pointers it was given: a host buffer where the
// device's memory belongs (which a GPU would fault on) is refused, naming the argument.
TEST(GuardedDevice, ALayerWrittenOnceRefusesHostMemoryNamingTheArgument) {
  const testing::GuardedDevice device(99);
  const std::unique_ptr<Layer> relu =
      device.makeLayer({.kind = LayerKind::kReLU, .name = "relu0", .input = {1, 1, 4}});
  std::vector<float> x(8, 1.f), y(8);
  try {
    relu->forward(x.data(), y.data(), 2, {});
    FAIL() << "a host input was taken";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "guarded:99: relu's input is not this device's memory");
  }
}

// Every host-staged path a GPU without NCCL takes: each strategy, bucketing, priority, a
// codec, micro-batches, AMP, ZeRO and a CNN.
std::vector<testing::JobVariant> hostStagedVariants() {
  return {{"ring", [](JobSpec&) {}},
          {"bucket_kb 4", [](JobSpec& j) { j.parallel.bucket_kb = 4; }},
          // Each piece all-reduced through host copies, then updated on the device.
          {"priority",
           [](JobSpec& j) {
             j.parallel.comm_schedule = CommSchedule::kPriority;
             j.parallel.partition_kb = 16;
           }},
          {"ps-sync", [](JobSpec& j) { j.parallel.strategy = "ps-sync"; }},
          {"local-sgd",
           [](JobSpec& j) {
             j.parallel.strategy = "local-sgd";
             j.parallel.average_every = 3;
           }},
          // Ring codecs without error feedback stay host-staged (the others: device_codec_test;
          // a parameter server's compressed pushes: device_ps_test).
          {"qsgd, no error feedback",
           [](JobSpec& j) {
             j.compression.codec = "qsgd";
             j.compression.error_feedback = false;
           }},

          {"microbatches 2", [](JobSpec& j) { j.parallel.microbatches = 2; }},
          {"bf16", [](JobSpec& j) { j.amp.dtype = AmpDtype::kBf16; }},
          {"adamw",
           [](JobSpec& j) {
             j.train.optimizer = OptimizerKind::kAdamW;
             j.train.lr = 0.001;
           }},
          // ZeRO's one algorithm over the host ring through host copies (StagedTransport):
          // the shards, scratches and optimizer state are the device's.
          {"zero 1", [](JobSpec& j) { j.parallel.zero = 1; }},
          {"zero 2, adamw",
           [](JobSpec& j) {
             j.parallel.zero = 2;
             j.train.optimizer = OptimizerKind::kAdamW;
             j.train.lr = 0.001;
           }},
          {"zero 3, bf16",
           [](JobSpec& j) {
             j.parallel.zero = 3;
             j.amp.dtype = AmpDtype::kBf16;
           }},
          // Max-pooling, ReLU, dropout and flatten written once: their passes run on the
          // device's checked operations with its memory locked between them.
          {"cnn, dropout 0.2, bf16", [](JobSpec& j) {
             j.model.kind = ModelKind::kCnn;
             j.model.channels = {4, 8};
             j.model.kernel_size = 3;
             j.model.dropout = 0.2;
             j.amp.dtype = AmpDtype::kBf16;
           }}};
}

// Whole runs on a device whose memory the host may not touch (tests/support/guarded_device.h:
// a host read crashes, a host pointer in a device operation throws), through every variant
// above, each with a checkpoint. The device computes with the CPU's kernels, so each run is
// the CPU's bit for bit.
TEST(DeviceSync, EveryHostStagedRunOffTheHostIsTheCpusBitForBit) {
  testing::registerGuardedDevices();
  for (const auto& [what, apply] : hostStagedVariants()) {
    JobSpec cpu = testing::smallMlpJob();
    cpu.train.checkpoint_every = 6;
    cpu.train.checkpoint_path = ::testing::TempDir() + "ranklab-guarded-sync.ckpt";
    apply(cpu);
    JobSpec off = cpu;
    off.train.device = "guarded";
    off.parallel.device_collectives = DeviceCollectives::kHost;
    const auto want = testing::trainWithThreads(cpu);
    const auto got = testing::trainWithThreads(off);
    ASSERT_EQ(got.size(), want.size()) << what;
    EXPECT_TRUE(testing::anyEventSays(got[0], "gradients copied to the host"))
        << what << ": not host-staged";
    for (size_t r = 0; r < want.size(); ++r) {
      EXPECT_EQ(got[r].losses, want[r].losses) << what << " rank " << r;
      ASSERT_EQ(got[r].evals.size(), want[r].evals.size()) << what << " rank " << r;
      if (!want[r].evals.empty()) {  // a parameter server evaluates nothing
        EXPECT_EQ(got[r].evals.back().test_loss, want[r].evals.back().test_loss) << what;
      }
    }
  }
}

}  // namespace
}  // namespace ranklab
