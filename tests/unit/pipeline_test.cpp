// Pipeline parallelism with ranks as threads: the pass orders, the stage split, and whole
// runs whose loss curves follow one rank training the same model on the same global batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/model/models.h"
#include "engine/train/pipeline_schedule.h"
#include "tests/support/guarded_device.h"
#include "tests/support/thread_ranks.h"

namespace ranklab {
namespace {

int peakInFlight(const std::vector<PipelineSchedule::Pass>& passes) {
  int in_flight = 0, peak = 0;
  for (const auto& pass : passes) {
    in_flight += pass.forward ? 1 : -1;
    peak = std::max(peak, in_flight);
  }
  return peak;
}

TEST(PipelineOrder, OneFOneBHoldsAtMostStagesLeftWhileGpipeHoldsEveryMicroBatch) {
  for (int p : {2, 3, 4}) {
    for (int m : {1, 2, 4, 8}) {
      for (int s = 0; s < p; ++s) {
        const auto ofob = PipelineSchedule::passOrder(PipelineOrder::k1F1B, s, p, m);
        const auto gpipe = PipelineSchedule::passOrder(PipelineOrder::kGpipe, s, p, m);
        EXPECT_EQ(peakInFlight(ofob), std::min(p - s, m)) << p << " stages, stage " << s;
        EXPECT_EQ(peakInFlight(gpipe), m);
        ASSERT_EQ(ofob.size(), 2u * m);
        // Micro-batches go forward and backward in order, each backward after its forward.
        int next_forward = 0, next_backward = 0;
        for (const auto& pass : ofob) {
          EXPECT_EQ(pass.micro, pass.forward ? next_forward++ : next_backward++);
          EXPECT_LE(next_backward, next_forward);
        }
      }
    }
  }
}

// A GPT's blocks: the embedding (a lookup: width per position), each transformer block
// (12 width^2 + context * width), the final LayerNorm and the head's copy of the table
// (vocab * width). Width 128, context 64, 4 blocks: 0.2 M each, the head 0.03 M, so two
// stages take two blocks each, and four stages one each (the head with the last).
TEST(StageBoundaries, AGptsTransformerBlocksCountTheirLinearsAndAttention) {
  const Network gpt = makeGpt({256, 64, 128, 4, 4, 0.f}, 1, cpuDevice(), nullptr, true);
  // Layers: embed, h0, h1, h2, h3, ln_f, lm_head.
  EXPECT_EQ(stageBoundaries(gpt, 2), (std::vector<size_t>{0, 3, 7}));
  EXPECT_EQ(stageBoundaries(gpt, 4), (std::vector<size_t>{0, 2, 3, 4, 7}));
}

TEST(StageBoundaries, BalanceCountedWorkAndNeverSplitALayerFromItsRelu) {
  const Network deep = makeMlp({1, 1, 784}, {1024, 1024, 1024, 1024}, 10, 0.f, 1);
  // Multiply-adds per sample: fc0 2 x 802,816 (no input gradient), fc1..fc3 3 x 1,048,576,
  // fc4 3 x 10,240: best split fc0 fc1 | rest.
  EXPECT_EQ(stageBoundaries(deep, 2), (std::vector<size_t>{0, 4, 9}));
  const auto four = stageBoundaries(deep, 4);
  for (size_t cut : four) {
    if (cut > 0 && cut < deep.layers().size()) {
      EXPECT_FALSE(deep.layers()[cut]->paramTensors().empty()) << "cut at layer " << cut;
    }
  }
  // By hand (parallel.stage_layers): fc0 alone, then the other four blocks.
  EXPECT_EQ(stageBoundaries(deep, std::vector<int>{1, 4}), (std::vector<size_t>{0, 2, 9}));
  EXPECT_EQ(stageBoundaries(deep, std::vector<int>{5}), (std::vector<size_t>{0, 9}));
  EXPECT_THROW(stageBoundaries(deep, std::vector<int>{1, 3}), std::invalid_argument);
  EXPECT_THROW(stageBoundaries(deep, std::vector<int>{0, 5}), std::invalid_argument);
  // The CNN's convolutions hold few parameters but most of the work (counted at each of
  // their output positions): conv0 0.45 M, conv1 10.8 M, fc0 1.2 M, fc1 0.004 M. By
  // parameters, three stages would be conv0 conv1 | fc0 | fc1.
  const Network cnn = makeCnn({28, 28, 1}, {32, 64}, 3, {128}, 10, 0.f, 1);
  ASSERT_EQ(cnn.layers()[3]->name(), "conv1");
  ASSERT_EQ(cnn.layers()[7]->name(), "fc0");
  EXPECT_EQ(stageBoundaries(cnn, 3), (std::vector<size_t>{0, 3, 7, cnn.layers().size()}));
  const Network small = makeMlp({1, 1, 4}, {3}, 2, 0.f, 1);
  try {
    stageBoundaries(small, 3);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("has 2 blocks"), std::string::npos) << e.what();
  }
}

JobSpec pipelineJob(int ranks, int stages, const std::string& schedule, int microbatches) {
  JobSpec job;
  job.model.layers = {48, 32, 24};
  job.train.batch_size = 24;
  job.train.max_steps = 20;
  job.parallel.ranks = ranks;
  job.parallel.pipeline = stages;
  job.parallel.schedule = choiceFrom<PipelineOrder>(schedule);
  job.parallel.microbatches = microbatches;
  return job;
}

void expectSameCurve(const std::vector<double>& got, const std::vector<double>& want,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5 * want[i]) << what << " step " << i + 1;
}

TEST(Pipeline, BothSchedulesFollowOneRankOnTheSameGlobalBatch) {
  const auto one = testing::trainWithThreads(pipelineJob(1, 1, "1f1b", 1));
  for (const std::string schedule : {"gpipe", "1f1b"}) {
    for (int m : {1, 2, 4}) {
      for (int stages : {2, 3}) {
        const auto ranks = testing::trainWithThreads(pipelineJob(stages, stages, schedule, m));
        const std::string what =
            schedule + " m=" + std::to_string(m) + " p=" + std::to_string(stages);
        for (const auto& rank : ranks) expectSameCurve(rank.losses, one[0].losses, what);
        EXPECT_NEAR(ranks[0].evals.back().test_accuracy, one[0].evals.back().test_accuracy, 1e-3)
            << what;
        // Micro-batches held for backward: GPipe every one, 1F1B at most the stages left.
        for (int r = 0; r < stages; ++r) {
          const int64_t held = schedule == "gpipe" ? m : std::min(stages - r, m);
          EXPECT_EQ(ranks[r].stats.back().stashed, held) << what << " stage " << r;
          EXPECT_GT(ranks[r].stats.back().stashed_bytes, 0) << what << " stage " << r;
        }
        // Every stage but the last waits for its neighbours: a bubble is measured.
        int64_t wait = 0;
        for (const auto& s : ranks[0].stats) wait += s.wait_ns;
        EXPECT_GT(wait, 0) << what;
      }
    }
  }
}

// Stages on a device whose memory the host may not touch, as a GPU's
// (tests/support/guarded_device.h: a host read of it crashes, a host pointer in a device
// operation throws): activations, their gradients and evaluation's outputs cross stages as
// host copies, and the run is the CPU's bit for bit, alone and with two data replicas
// (gradients all-reduced on host copies). A checkpoint is taken and read back on the way.
TEST(Pipeline, StagesOffTheHostSendHostCopiesAndFollowTheCpuBitForBit) {
  testing::registerGuardedDevices();
  for (const auto& [ranks, schedule] : {std::pair{2, "gpipe"}, {2, "1f1b"}, {4, "1f1b"}}) {
    JobSpec cpu = pipelineJob(ranks, 2, schedule, 2);
    cpu.train.checkpoint_every = 10;
    cpu.train.checkpoint_path = ::testing::TempDir() + "ranklab-guarded-pipeline.ckpt";
    JobSpec off = cpu;
    off.train.device = "guarded";
    off.parallel.device_collectives = DeviceCollectives::kHost;
    const auto want = testing::trainWithThreads(cpu);
    const auto got = testing::trainWithThreads(off);
    const std::string what = std::string(schedule) + " on " + std::to_string(ranks) + " ranks";
    for (size_t r = 0; r < want.size(); ++r) {
      EXPECT_EQ(got[r].losses, want[r].losses) << what << " rank " << r;
      EXPECT_EQ(got[r].evals.back().test_loss, want[r].evals.back().test_loss) << what;
      EXPECT_EQ(got[r].stats.back().bytes_tx, want[r].stats.back().bytes_tx) << what;
    }
  }
}

// A sampled step's device pieces cover every micro-batch, whichever copy of the stage ran it:
// GPipe's 4 micro-batches on 4 copies, each with its layers' forward and backward, and the
// last stage's loss head twice each.
TEST(Pipeline, DeviceTracesCoverEveryMicroBatch) {
  JobSpec job = pipelineJob(2, 2, "gpipe", 4);
  job.telemetry.span_every = 10;
  const auto ranks = testing::trainWithThreads(job);
  for (size_t stage = 0; stage < 2; ++stage) {
    ASSERT_EQ(ranks[stage].device.size(), 2u) << "steps 10 and 20";
    for (const auto& [step, spans] : ranks[stage].device) {
      std::map<std::string, int> count;
      for (const DeviceSpan& s : spans) ++count[s.kind];
      EXPECT_EQ(count["dev-fwd"], count["dev-bwd"]) << "stage " << stage;
      EXPECT_GT(count["dev-fwd"], 0) << "stage " << stage;
      EXPECT_EQ(count["dev-fwd"] % 4, 0) << "stage " << stage;
      EXPECT_EQ(count["dev-loss"], stage == 1 ? 8 : 0) << "stage " << stage;
      EXPECT_EQ(count["dev-update"], 1) << "stage " << stage;
    }
  }
}

TEST(Pipeline, DataTimesPipelineFollowsDataParallelOnTheSameGlobalBatch) {
  const auto data = testing::trainWithThreads(pipelineJob(2, 1, "1f1b", 2));
  const auto hybrid = testing::trainWithThreads(pipelineJob(4, 2, "1f1b", 2));
  for (int r = 0; r < 4; ++r)
    expectSameCurve(hybrid[r].losses, data[r / 2].losses, "rank " + std::to_string(r));
}

}  // namespace
}  // namespace ranklab
