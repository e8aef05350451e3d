// Each rank builds its part of the model alone (issue 61): its device allocates the part's
// parameters and gradients, which equal the part's formula (estimateMemory), not the whole
// model's, and the part holds the whole model's values where its map says.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "comm/silent_peers.h"
#include "engine/model/models.h"
#include "engine/sim/model_parts.h"
#include "engine/train/memory_estimate.h"
#include "engine/train/model_part.h"
#include "tests/support/ledger_device.h"
#include "tests/support/tiny_gpt.h"

namespace ranklab {
namespace {

// The CPU, counting the floats its buffers hold now and at most.
class PeakCountingDevice : public testing::LedgerDevice {
 public:
  std::unique_ptr<DeviceBuffer> allocate(size_t floats) const override {
    live_ += floats;
    peak_ = std::max(peak_, live_);
    return std::make_unique<Counted>(cpuDevice().allocate(floats), live_);
  }
  size_t peakFloats() const { return peak_; }

 private:
  class Counted : public DeviceBuffer {
   public:
    Counted(std::unique_ptr<DeviceBuffer> buffer, size_t& live)
        : buffer_(std::move(buffer)), live_(live) {}
    ~Counted() override { live_ -= buffer_->size(); }
    float* data() override { return buffer_->data(); }
    size_t size() const override { return buffer_->size(); }

   private:
    std::unique_ptr<DeviceBuffer> buffer_;
    size_t& live_;
  };
  mutable size_t live_ = 0, peak_ = 0;
};

struct Layout {
  std::string name;
  JobSpec job;
  size_t largest_part = 0;  // worked out by hand where given
};

JobSpec split(JobSpec job, int pipeline, int tensor, bool sequence = false) {
  job.parallel.pipeline = pipeline;
  job.parallel.tensor = tensor;
  job.parallel.sequence_parallel = sequence;
  job.parallel.ranks = pipeline * tensor;
  return job;
}

std::vector<Layout> layouts() {
  JobSpec mlp;
  mlp.model.layers = {512, 512, 256, 256};  // two pairs split, the classifier whole
  JobSpec cnn;
  cnn.model.kind = ModelKind::kCnn;
  cnn.model.channels = {4, 8};
  cnn.model.kernel_size = 3;
  cnn.model.layers = {64};
  const JobSpec gpt = testing::tinyGpt({});
  // 784-512-512-256-256-10 in 8 slices: fc0 and fc2 hold 1/8 of their rows, fc1 and fc3 of
  // their columns and their whole biases, fc4 all of itself.
  const size_t mlp_slice = (784 * 512 + 512) / 8 + (512 * 512 / 8 + 512) + (512 * 256 + 256) / 8 +
                           (256 * 256 / 8 + 256) + (256 * 10 + 10);
  // The embedding (256 tokens and 16 positions of 32) and ln_f whole; of each of 2 blocks its
  // LayerNorms whole, a quarter of c_attn and c_fc, a quarter of each c_proj's columns and
  // its whole bias.
  const size_t gpt_slice = (256 + 16) * 32 + 64 +
                           2 * (2 * 64 + (3 * 32 * 32 + 96) / 4 + (32 * 32 / 4 + 32) +
                                (32 * 128 + 128) / 4 + (128 * 32 / 4 + 32));
  return {{"mlp, 8 slices", split(mlp, 1, 8), mlp_slice},
          {"mlp, 2 stages x 4 slices", split(mlp, 2, 4)},
          {"mlp, 3 stages", split(mlp, 3, 1)},
          {"cnn, 2 stages x 2 slices", split(cnn, 2, 2)},
          {"gpt, 2 stages x 4 slices", split(gpt, 2, 4)},
          {"gpt, 4 sequence-parallel slices", split(gpt, 1, 4, true), gpt_slice}};
}

TEST(ModelPart, EachRankAllocatesItsPartAloneAndHoldsTheWholeModelsValues) {
  for (const Layout& layout : layouts()) {
    SCOPED_TRACE(layout.name);
    const JobSpec& job = layout.job;
    const Dataset shape = shapeOnlyDataset(job);
    const MemoryEstimate formula = estimateMemory(job);
    Network whole = makeModel(job.model, {shape.height, shape.width, 1}, shape.classes,
                              job.train.seed, cpuDevice(), job.parallel.pipeline > 1);
    const std::vector<float> whole_values(whole.params(), whole.params() + whole.parameterCount());
    size_t largest = 0, peak = 0;
    for (int rank = 0; rank < job.parallel.ranks; ++rank) {
      const int slice = coordsOf(rank, degreesOf(job, job.parallel.ranks)).slice;
      SilentPeers peers(slice, job.parallel.tensor);
      TensorGroup group(peers, job.parallel.sequence_parallel);
      TensorGroup* tensor = job.parallel.tensor > 1 ? &group : nullptr;
      PeakCountingDevice device;
      const Network part = stageModel(job, shape, rank, job.parallel.ranks, device, tensor);
      const size_t floats = part.parameterCount();
      largest = std::max(largest, floats);
      peak = std::max(peak, device.peakFloats());
      // Parameters and gradients as the formula says; nothing of the whole model on the device.
      EXPECT_EQ(2 * floats * sizeof(float), formula.ranks[rank].params + formula.ranks[rank].grads)
          << "rank " << rank;
      EXPECT_GE(device.peakFloats(), 2 * floats);
      EXPECT_LE(device.peakFloats(), 2 * floats + 8 * static_cast<size_t>(job.model.width) *
                                                      job.model.blocks)  // SP's LayerNorm sums
          << "rank " << rank;
      // The part's values are the whole model's, where its map places them.
      const ModelPartMap map = mapModelPart(job, shape, tensor, part);
      EXPECT_EQ(map.whole_count, whole.parameterCount());
      EXPECT_EQ(map.whole_model, whole.describe());
      const std::vector<float> expected = map.partOf(whole_values);
      ASSERT_EQ(expected.size(), floats);
      EXPECT_EQ(std::memcmp(expected.data(), part.params(), floats * sizeof(float)), 0)
          << "rank " << rank;
    }
    if (layout.largest_part > 0) {
      EXPECT_EQ(largest, layout.largest_part);
    }
    std::printf(
        "%s: the largest part holds %zu of the model's %zu parameters (%.3f); device peak at "
        "start-up %zu floats, 2 x part + %zu (the whole model's 2 x %zu)\n",
        layout.name.c_str(), largest, whole.parameterCount(),
        static_cast<double>(largest) / static_cast<double>(whole.parameterCount()), peak,
        peak - 2 * largest, whole.parameterCount());
  }
}

}  // namespace
}  // namespace ranklab
