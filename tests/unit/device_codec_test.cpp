// The codecs with a device path (topk, threshold, randomk, sign, fp16, bf16, qsgd) on a device
// whose memory the host may not touch (tests/support/guarded_device.h): momentum correction, error
// feedback and the selection run on the device (engine/train/device_codec_sync.h), only the
// selected values and indices cross to the host, and each run is the CPU's codec bit for bit: SGD
// with DGC's momentum correction (the default) and without, fp32 and fp16 values, with and without
// error feedback, 1 and 3 ranks, Adam; one step of each moving pairs, not the gradient; and
// runs resumed from a checkpoint holding the device's residual and velocity.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/model/compute_device.h"
#include "engine/train/device_codec_sync.h"
#include "engine/train/strategy_registry.h"
#include "tests/support/guarded_device.h"
#include "tests/support/guarded_runs.h"
#include "tests/support/temp_folder.h"
#include "tests/support/thread_ranks.h"
#include "tests/support/thread_world.h"

namespace ranklab {
namespace {

using testing::kSmallMlpParameters;
using testing::kSmallMlpSteps;

JobSpec topkJob() {
  JobSpec job = testing::smallMlpJob();
  job.compression.codec = "topk";
  job.compression.ratio = 0.05;
  return job;
}

// The runs of topkJob() the device path must follow bit for bit, each named.
std::vector<testing::JobVariant> encodedVariants() {
  return {{"2 ranks", [](JobSpec&) {}},
          {"3 ranks", [](JobSpec& j) { j.parallel.ranks = 3; }},
          {"1 rank", [](JobSpec& j) { j.parallel.ranks = 1; }},
          {"fp16 values", [](JobSpec& j) { j.compression.value_dtype = ValueDtype::kFp16; }},
          {"no error feedback", [](JobSpec& j) { j.compression.error_feedback = false; }},
          {"no momentum correction", [](JobSpec& j) { j.compression.momentum_correction = false; }},
          {"adam",
           [](JobSpec& j) {
             j.train.optimizer = OptimizerKind::kAdam;
             j.train.lr = 0.001;
           }},
          {"threshold",
           [](JobSpec& j) {
             j.compression.codec = "threshold";
             j.compression.threshold = 0.02;
           }},
          {"randomk", [](JobSpec& j) { j.compression.codec = "randomk"; }},
          {"randomk, 3 ranks, adam",
           [](JobSpec& j) {
             j.compression.codec = "randomk";
             j.parallel.ranks = 3;
             j.train.optimizer = OptimizerKind::kAdam;
             j.train.lr = 0.001;
           }},
          {"sign", [](JobSpec& j) { j.compression.codec = "sign"; }},
          {"sign, 3 ranks, buckets of 100, no error feedback",
           [](JobSpec& j) {
             j.compression.codec = "sign";
             j.compression.bucket = 100;
             j.compression.error_feedback = false;
             j.parallel.ranks = 3;
           }},
          {"fp16", [](JobSpec& j) { j.compression.codec = "fp16"; }},
          {"bf16, 3 ranks",
           [](JobSpec& j) {
             j.compression.codec = "bf16";
             j.parallel.ranks = 3;
           }},
          {"bf16, 1 rank, no error feedback",
           [](JobSpec& j) {
             j.compression.codec = "bf16";
             j.compression.error_feedback = false;
             j.parallel.ranks = 1;
           }},
          {"threshold, 3 ranks, fp16 values",
           [](JobSpec& j) {
             j.compression.codec = "threshold";
             j.compression.threshold = 0.02;
             j.compression.value_dtype = ValueDtype::kFp16;
             j.parallel.ranks = 3;
           }},
          {"qsgd", [](JobSpec& j) { j.compression.codec = "qsgd"; }},
          {"qsgd, 3 ranks, 2 bits, buckets of 100",
           [](JobSpec& j) {
             j.compression.codec = "qsgd";
             j.compression.bits = 2;
             j.compression.bucket = 100;
             j.parallel.ranks = 3;
           }},
          // Its own gradient rounded stochastically: the device draws the host's stream.
          {"qsgd, 1 rank, 7 bits, no error feedback", [](JobSpec& j) {
             j.compression.codec = "qsgd";
             j.compression.bits = 7;
             j.compression.error_feedback = false;
             j.parallel.ranks = 1;
           }}};
}

TEST(DeviceCodec, EncodesOnTheDeviceAndFollowsTheCpuBitForBit) {
  testing::registerGuardedDevices();
  for (const auto& [what, apply] : encodedVariants()) {
    JobSpec cpu = topkJob();
    apply(cpu);
    const auto runs = testing::runOnCpuAndGuarded(cpu, what);
    const auto& got = runs.on_device;
    EXPECT_TRUE(testing::anyEventSays(got[0], cpu.compression.codec + " encoded on the GPU"))
        << what << ": no device event says where the codec ran";
    for (int r = 0; r < cpu.parallel.ranks; ++r) {
      EXPECT_EQ(runs.counted[r].codec_encodes, kSmallMlpSteps) << what << " rank " << r;
      // Losses and evaluation's outputs come down; a whole gradient never does (a
      // host-staged codec would download kSmallMlpSteps * kSmallMlpParameters floats).
      const int64_t floats = runs.counted[r].floats_downloaded;
      EXPECT_LT(floats, kSmallMlpSteps * static_cast<int64_t>(kSmallMlpParameters) / 10)
          << what << " rank " << r;
      if (r == 0) {
        std::printf(
            "%s: %lld floats downloaded in %lld steps (the gradient: %zu); the last "
            "step sent %lld bytes (%lld uncompressed)\n",
            what.c_str(), static_cast<long long>(floats), static_cast<long long>(kSmallMlpSteps),
            kSmallMlpParameters, static_cast<long long>(got[r].stats.back().bytes_tx),
            static_cast<long long>(got[r].stats.back().bytes_raw));
      }
    }
  }
}

// Without error feedback the host ring encodes the raw gradient's chunks itself, hop by
// hop: there is no first encode of this rank's own to move, so a ring codec stays
// host-staged.
TEST(DeviceCodec, ARingCodecWithoutErrorFeedbackOnSeveralRanksStaysOnTheHost) {
  testing::registerGuardedDevices();
  for (const std::string codec : {"fp16", "qsgd"}) {
    JobSpec cpu = topkJob();
    cpu.compression.codec = codec;
    cpu.compression.error_feedback = false;
    const auto runs = testing::runOnCpuAndGuarded(cpu, codec + " without error feedback");
    EXPECT_EQ(runs.counted[0].codec_encodes, 0) << codec << " encoded on the device";
    EXPECT_TRUE(testing::anyEventSays(runs.on_device[0], "gradients copied to the host"))
        << codec << ": no device event says the gradient went to the host";
  }
}

// One step on 3 ranks of each codec (the sparse ones sending about 1 % of 10,000 elements):
// a sparse mean goes up as scattered pairs (nothing through upload()), no float comes down
// through download(), and every rank's gradient is what the CPU's all-reduce with the
// codec leaves.
class DeviceCodecStep : public ::testing::TestWithParam<std::string> {};

TEST_P(DeviceCodecStep, MovesPayloadsNotTheGradient) {
  testing::registerGuardedDevices();
  constexpr int kRanks = 3;
  constexpr size_t kCount = 10000;
  JobSpec job = topkJob();
  job.parallel.ranks = kRanks;
  job.compression.codec = GetParam();
  job.compression.ratio = 0.01;
  job.compression.threshold = 0.9999;  // |sin| that large: about 1 %
  auto gradientOf = [](int rank) {
    std::vector<float> g(kCount);
    for (size_t i = 0; i < kCount; ++i)
      g[i] = std::sin(0.37f * static_cast<float>(i) + static_cast<float>(rank));
    return g;
  };
  std::vector<std::vector<float>> want(kRanks), got(kRanks);
  std::vector<int64_t> up(kRanks), down(kRanks);
  testing::onEveryRank(kRanks, [&](Communicator& comm) {
    std::unique_ptr<GradientSync> cpu = makeGradientSync(job, comm).sync;
    std::vector<float> params(kCount, 0.f);
    want[comm.rank()] = gradientOf(comm.rank());
    cpu->start(params.data(), kCount);
    cpu->sync(want[comm.rank()].data(), kCount);
  });
  testing::onEveryRank(kRanks, [&](Communicator& comm) {
    const int r = comm.rank();
    testing::GuardedDevice& device = testing::guarded(r);
    DeviceCodecSync sync(comm, allreduceOf(job.parallel), codecOptions(job), device);
    auto grads = device.allocate(kCount);
    const std::vector<float> mine = gradientOf(r);
    device.upload(grads->data(), mine.data(), kCount);
    sync.start(nullptr, kCount);
    const int64_t up_before = device.floats_uploaded, down_before = device.floats_downloaded;
    sync.sync(grads->data(), kCount);
    up[r] = device.floats_uploaded - up_before;
    down[r] = device.floats_downloaded - down_before;
    got[r].resize(kCount);
    device.download(got[r].data(), grads->data(), kCount);
  });
  const bool dense =
      GetParam() == "sign" || GetParam() == "fp16" || GetParam() == "bf16" || GetParam() == "qsgd";
  const auto sent = std::count_if(want[0].begin(), want[0].end(), [](float v) { return v != 0; });
  EXPECT_GT(sent, 0) << "nothing sent";
  if (!dense) {
    EXPECT_LT(sent, static_cast<int64_t>(kCount / 10)) << "not sparse";
  }
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(got[r], want[r]) << "rank " << r;
    // A sparse mean goes up as pairs; sign's, the casts' and qsgd's are dense.
    EXPECT_EQ(up[r], dense ? static_cast<int64_t>(kCount) : 0) << "rank " << r;
    EXPECT_EQ(down[r], 0) << "rank " << r << ": the gradient came down";
  }
}

INSTANTIATE_TEST_SUITE_P(Codecs, DeviceCodecStep,
                         ::testing::Values("topk", "threshold", "randomk", "sign", "fp16", "bf16",
                                           "qsgd"));

// The checkpoint holds the device's residual and velocity; randomk's also the position of
// its shared random stream, qsgd's that of its rounding stream (the ring's partial sums),
// powersgd's its step and warm-start Q (engine/train/powersgd_sync.h).
class DeviceCodecResume : public ::testing::TestWithParam<std::string> {};

TEST_P(DeviceCodecResume, TakesTheCodecsStateBackOntoTheDevice) {
  testing::registerGuardedDevices();
  testing::TempFolder folder;
  JobSpec job = topkJob();
  job.compression.codec = GetParam();
  const auto uninterrupted = testing::trainWithThreads(job);
  JobSpec first = job;
  first.train.device = "guarded";
  first.train.max_steps = kSmallMlpSteps / 2;
  first.train.checkpoint_path = folder.file("sparse.ckpt");
  testing::trainWithThreads(first);
  JobSpec rest = job;
  rest.train.device = "guarded";
  rest.train.resume_from = folder.file("sparse.ckpt");
  const auto resumed = testing::trainWithThreads(rest);
  for (size_t r = 0; r < resumed.size(); ++r) {
    ASSERT_EQ(resumed[r].losses.size(), static_cast<size_t>(kSmallMlpSteps / 2)) << "rank " << r;
    for (size_t i = 0; i < resumed[r].losses.size(); ++i)
      EXPECT_EQ(resumed[r].losses[i], uninterrupted[r].losses[kSmallMlpSteps / 2 + i])
          << "rank " << r << " step " << resumed[r].steps[i];
    for (const std::string& e : resumed[r].events)
      EXPECT_EQ(e.find("warning"), std::string::npos) << e;
  }
}

INSTANTIATE_TEST_SUITE_P(Codecs, DeviceCodecResume,
                         ::testing::Values("topk", "randomk", "sign", "bf16", "qsgd", "powersgd"));

}  // namespace
}  // namespace ranklab
