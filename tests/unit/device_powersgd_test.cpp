// powersgd on a device whose memory the host may not touch (tests/support/guarded_device.h):
// its products run on the device (engine/train/powersgd_sync.h), only P, Q and the
// uncompressed rest cross to the host, and each run is the CPU's powersgd bit for bit: 1, 2
// and 3 ranks, ranks 1, 2 and 4 of the approximation, with and without warm start and error
// feedback, SGD and Adam, one and two hidden layers; one step's transfers against the
// formula (a run resumed from a checkpoint: device_codec_test's DeviceCodecResume).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "comm/collectives/allreduce_registry.h"
#include "engine/train/powersgd_sync.h"
#include "engine/train/strategy_registry.h"
#include "tests/support/feedback_sums.h"
#include "tests/support/guarded_device.h"
#include "tests/support/guarded_runs.h"
#include "tests/support/thread_ranks.h"
#include "tests/support/thread_world.h"

namespace ranklab {
namespace {

using testing::kSmallMlpSteps;

JobSpec powersgdJob() {
  JobSpec job = testing::smallMlpJob();
  job.compression.codec = "powersgd";
  return job;
}

// What a step of powersgd downloads of an MLP on 784 inputs and 10 classes: per weight
// matrix (out, in) its P and Q, (out + in) * min(rank, out, in) floats, and every bias.
int64_t powersgdFloatsPerStep(const JobSpec& job) {
  std::vector<int> widths = {784};
  widths.insert(widths.end(), job.model.layers.begin(), job.model.layers.end());
  widths.push_back(10);
  int64_t floats = 0;
  for (size_t l = 0; l + 1 < widths.size(); ++l) {
    const int in = widths[l], out = widths[l + 1];
    floats += static_cast<int64_t>(out + in) * std::min({job.compression.rank, out, in}) + out;
  }
  return floats;
}

std::vector<testing::JobVariant> powersgdVariants() {
  return {{"2 ranks", [](JobSpec&) {}},
          {"3 ranks, rank 1",
           [](JobSpec& j) {
             j.parallel.ranks = 3;
             j.compression.rank = 1;
           }},
          {"1 rank", [](JobSpec& j) { j.parallel.ranks = 1; }},
          {"rank 4, no warm start",
           [](JobSpec& j) {
             j.compression.rank = 4;
             j.compression.warm_start = false;
           }},
          {"no error feedback", [](JobSpec& j) { j.compression.error_feedback = false; }},
          {"adam",
           [](JobSpec& j) {
             j.train.optimizer = OptimizerKind::kAdam;
             j.train.lr = 0.001;
           }},
          {"two hidden layers", [](JobSpec& j) {
             j.model.layers = {64, 32};
           }}};
}

TEST(DevicePowerSgd, RunsItsProductsOnTheDeviceAndFollowsTheCpuBitForBit) {
  testing::registerGuardedDevices();
  for (const auto& [what, apply] : powersgdVariants()) {
    JobSpec cpu = powersgdJob();
    apply(cpu);
    const auto runs = testing::runOnCpuAndGuarded(cpu, what);
    EXPECT_TRUE(testing::anyEventSays(runs.on_device[0], "powersgd's products on the GPU"))
        << what << ": no device event says where powersgd ran";
    const int64_t per_step = powersgdFloatsPerStep(cpu);
    for (int r = 0; r < cpu.parallel.ranks; ++r) {
      // P = M Q, Q = M^T P and the reconstruction per weight matrix and step, at least.
      const int matrices = static_cast<int>(cpu.model.layers.size()) + 1;
      EXPECT_GE(runs.counted[r].gemms, 3 * matrices * kSmallMlpSteps) << what;
      // What powersgd sends comes down, and next to nothing else (a host-staged codec would
      // download kSmallMlpSteps * kSmallMlpParameters floats).
      const int64_t floats = runs.counted[r].floats_downloaded;
      EXPECT_GE(floats, kSmallMlpSteps * per_step) << what << " rank " << r;
      EXPECT_LE(floats, kSmallMlpSteps * (per_step + 64)) << what << " rank " << r;
      if (r == 0) {
        std::printf("%s: %lld floats downloaded in %lld steps (P, Q and the rest: %lld a step)\n",
                    what.c_str(), static_cast<long long>(floats),
                    static_cast<long long>(kSmallMlpSteps), static_cast<long long>(per_step));
      }
    }
  }
}

// Two steps on 3 ranks of a 10,000-float gradient holding two matrices (40 x 100 and
// 50 x 100) and 1,000 floats outside them: every rank's gradient is what the CPU's
// compressed all-reduce leaves, and what crosses is P, the rest and Q down, Q, P^, the
// summed Q and the summed rest up: exactly, per step.
TEST(DevicePowerSgd, MovesItsSmallMatricesNotTheGradient) {
  testing::registerGuardedDevices();
  constexpr int kRanks = 3;
  constexpr size_t kCount = 10000;
  const std::vector<MatrixBlock> matrices = {{0, 40, 100}, {4100, 50, 100}};
  JobSpec job = powersgdJob();
  job.parallel.ranks = kRanks;
  auto gradientOf = [](int rank, int step) {
    std::vector<float> g(kCount);
    for (size_t i = 0; i < kCount; ++i)
      g[i] = std::sin(0.37f * static_cast<float>(i) + static_cast<float>(rank + 5 * step));
    return g;
  };
  std::vector<std::vector<float>> want(kRanks), got(kRanks);
  std::vector<int64_t> up(kRanks), down(kRanks);
  testing::onEveryRank(kRanks, [&](Communicator& comm) {
    std::unique_ptr<GradientSync> cpu = makeGradientSync(job, comm, matrices).sync;
    std::vector<float> params(kCount, 0.f);
    cpu->start(params.data(), kCount);
    for (int step = 0; step < 2; ++step) {
      want[comm.rank()] = gradientOf(comm.rank(), step);
      cpu->sync(want[comm.rank()].data(), kCount);
    }
  });
  testing::onEveryRank(kRanks, [&](Communicator& comm) {
    const int r = comm.rank();
    testing::GuardedDevice& device = testing::guarded(r);
    PowerSgdSync sync(comm, allreduceOf(job.parallel), codecOptions(job, matrices), device);
    auto grads = device.allocate(kCount);
    sync.start(nullptr, kCount);
    const int64_t up_before = device.floats_uploaded, down_before = device.floats_downloaded;
    for (int step = 0; step < 2; ++step) {
      const std::vector<float> mine = gradientOf(r, step);
      device.upload(grads->data(), mine.data(), kCount);
      sync.sync(grads->data(), kCount);
    }
    up[r] = device.floats_uploaded - up_before - 2 * static_cast<int64_t>(kCount);
    down[r] = device.floats_downloaded - down_before;
    got[r].resize(kCount);
    device.download(got[r].data(), grads->data(), kCount);
  });
  const int64_t rank = job.compression.rank, p = (40 + 50) * rank, q = (100 + 100) * rank;
  const int64_t rest = kCount - 40 * 100 - 50 * 100;
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(got[r], want[r]) << "rank " << r;
    EXPECT_EQ(down[r], 2 * (p + rest + q)) << "rank " << r;
    EXPECT_EQ(up[r], 2 * (q + p + q + rest)) << "rank " << r;
  }
  std::printf("per step and rank: %lld floats down, %lld up, for a gradient of %zu\n",
              static_cast<long long>(down[0] / 2), static_cast<long long>(up[0] / 2), kCount);
}

// On the CPU powersgd is the same PowerSgdSync, its products the CPU's kernels. Every rank's
// W is (r + 1) times one rank-1 matrix, so the sum is rank 1 and rank 1 recovers the mean on
// every world, every rank the same; the bias travels uncompressed.
TEST(PowerSgdSync, RecoversALowRankMeanOnEveryWorld) {
  const int rows = 12, cols = 20;
  const size_t count = rows * cols + rows;
  CodecOptions options;
  options.codec = "powersgd";
  options.rank = 1;
  options.matrices = {{0, rows, cols}};
  const auto matrix = [&](size_t i) {
    return 0.1f * ((i / cols) % 5 - 2.f) * std::sin(0.5f * (i % cols));
  };
  for (int world : {1, 2, 3, 5, 8}) {
    std::vector<std::vector<float>> out(world);
    testing::onEveryRank(world, [&](Communicator& comm) {
      std::vector<float> data(count);
      for (size_t i = 0; i < count; ++i)
        data[i] = i < size_t(rows * cols) ? (comm.rank() + 1) * matrix(i) : float(comm.rank());
      PowerSgdSync sync(comm, AllreduceChoice("ring"), options, cpuDevice());
      sync.start(nullptr, count);
      const SyncStats stats = sync.sync(data.data(), count);
      if (comm.size() > 1) {
        EXPECT_LT(stats.bytes_tx, stats.bytes_raw / 4) << world;
      }
      out[comm.rank()] = data;
    });
    for (int r = 1; r < world; ++r) ASSERT_EQ(out[r], out[0]) << world << " ranks, rank " << r;
    const float mean = (world + 1) / 2.f;
    for (size_t i = 0; i < size_t(rows * cols); ++i)
      ASSERT_NEAR(out[0][i], mean * matrix(i), 1e-5) << world << " ranks, " << i;
    for (size_t i = rows * cols; i < count; ++i)
      ASSERT_NEAR(out[0][i], (world - 1) / 2.f, 1e-6) << world << " ranks, bias " << i;
  }
}

// A small MLP-like layout: W0 (16, 24), b0 (16), W1 (4, 16), b1 (4).
constexpr size_t kLayoutCount = 16 * 24 + 16 + 4 * 16 + 4;
CodecOptions layoutPowerSgd(bool error_feedback) {
  CodecOptions o;
  o.codec = "powersgd";
  o.rank = 1;
  o.error_feedback = error_feedback;
  o.matrices = {{0, 16, 24}, {16 * 24 + 16, 4, 16}};
  return o;
}

// One rank, so what a step returns is what it sent: over many steps sum(sent) + residual ==
// sum(raw), the residual being what error feedback kept (on the device, read back through
// the checkpoint's state).
TEST(PowerSgdSync, SentPlusResidualEqualsRawOverSteps) {
  testing::onEveryRank(1, [&](Communicator& comm) {
    PowerSgdSync sync(comm, AllreduceChoice("ring"), layoutPowerSgd(true), cpuDevice());
    sync.start(nullptr, kLayoutCount);
    const testing::FeedbackSums sums = testing::sumDriftingSteps(
        kLayoutCount, [&](std::vector<float>& g) { sync.sync(g.data(), kLayoutCount); });
    const std::vector<float> residual = sync.saveCodecState().tensors.at("residual");
    ASSERT_EQ(residual.size(), kLayoutCount);
    const testing::FeedbackGap gap = testing::feedbackGap(sums, residual);
    EXPECT_LT(gap.worst, 1e-5 * sums.largest + 1e-7) << "largest difference " << gap.worst;
    EXPECT_GT(gap.residual_norm, 0) << "a rank-1 approximation left nothing behind";
  });
}

// M = u v^T scaled: rank 1, so a rank-1 step reproduces it; the biases pass through as they
// are; a rank-4 block only shrinks (a projection); no residual is kept without feedback.
TEST(PowerSgdSync, ReproducesALowRankMatrixAndPassesTheRestThrough) {
  testing::onEveryRank(1, [&](Communicator& comm) {
    PowerSgdSync sync(comm, AllreduceChoice("ring"), layoutPowerSgd(false), cpuDevice());
    sync.start(nullptr, kLayoutCount);
    std::vector<float> g(kLayoutCount);
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 24; ++c) g[r * 24 + c] = 0.01f * (r - 7.5f) * std::cos(0.3f * c);
    for (size_t i = 16 * 24; i < kLayoutCount; ++i) g[i] = 0.001f * static_cast<float>(i % 11);
    const auto original = g;
    sync.sync(g.data(), kLayoutCount);
    for (size_t i = 0; i < 16 * 24; ++i) ASSERT_NEAR(g[i], original[i], 1e-6) << i;
    for (size_t i = 16 * 24; i < 16 * 24 + 16; ++i) ASSERT_EQ(g[i], original[i]) << "bias " << i;
    double err = 0, norm = 0;
    const size_t w1 = 16 * 24 + 16;
    for (size_t i = w1; i < w1 + 64; ++i) {
      err += (double(g[i]) - original[i]) * (double(g[i]) - original[i]);
      norm += double(original[i]) * original[i];
    }
    EXPECT_LE(err, norm * (1 + 1e-6));
    EXPECT_EQ(sync.saveCodecState().tensors.count("residual"), 0u);
  });
}

}  // namespace
}  // namespace ranklab
