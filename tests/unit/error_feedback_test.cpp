// Error feedback through the whole compressed all-reduce (one rank, so the output is
// exactly what this rank sent): over many steps sum(sent) + residual == sum(raw), for
// every lossy codec but powersgd (device_powersgd_test.cpp: its products run where the
// gradient is). And PowerSGD's layout.
#include <gtest/gtest.h>

#include <vector>

#include "comm/codecs/compressed_allreduce.h"
#include "comm/codecs/powersgd.h"
#include "comm/collectives/allreduce_registry.h"
#include "comm/memory/thread_communicator.h"
#include "tests/support/feedback_sums.h"

namespace ranklab {
namespace {

// A small MLP-like layout: W0 (16, 24), b0 (16), W1 (4, 16), b1 (4).
constexpr size_t kCount = 16 * 24 + 16 + 4 * 16 + 4;
std::vector<MatrixBlock> layout() {
  return {{0, 16, 24}, {16 * 24 + 16, 4, 16}};
}

CodecOptions optionsFor(const std::string& codec) {
  CodecOptions o;
  o.codec = codec;
  o.bits = 2;
  o.bucket = 32;
  o.ratio = 0.05;
  o.threshold = 2e-3;
  return o;
}

class FeedbackCodecs : public ::testing::TestWithParam<std::string> {};

TEST_P(FeedbackCodecs, SentPlusResidualEqualsRawOverSteps) {
  ThreadRendezvous rendezvous(1);
  ThreadCommunicator comm(rendezvous, 0);
  CompressedAllreduce reduce(comm, AllreduceChoice("ring"), optionsFor(GetParam()), kCount);
  const testing::FeedbackSums sums = testing::sumDriftingSteps(kCount, [&](std::vector<float>& g) {
    reduce.run(g.data(), kCount);  // one rank: g becomes what was sent
  });
  ASSERT_NE(reduce.errorFeedback(), nullptr);
  const auto& residual = reduce.errorFeedback()->residual();
  ASSERT_EQ(residual.size(), kCount);
  const testing::FeedbackGap gap = testing::feedbackGap(sums, residual);
  // Only float rounding may separate the two sides.
  EXPECT_LT(gap.worst, 1e-5 * sums.largest + 1e-7)
      << GetParam() << ": largest difference " << gap.worst;
  if (GetParam() != "fp16" && GetParam() != "bf16") {
    EXPECT_GT(gap.residual_norm, 0) << "a lossy codec left nothing behind";
  }
}

TEST_P(FeedbackCodecs, WithoutFeedbackNothingIsKept) {
  ThreadRendezvous rendezvous(1);
  ThreadCommunicator comm(rendezvous, 0);
  auto options = optionsFor(GetParam());
  options.error_feedback = false;
  CompressedAllreduce reduce(comm, AllreduceChoice("ring"), options, kCount);
  std::vector<float> g(kCount, 1e-3f);
  reduce.run(g.data(), kCount);
  EXPECT_EQ(reduce.errorFeedback(), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Codecs, FeedbackCodecs,
                         ::testing::Values("fp16", "bf16", "qsgd", "topk", "randomk", "threshold",
                                           "sign"));

// DGC: momentum is applied before compression, and topk clears the velocity of what it
// sent. Step 1 sends index 0 (4); step 2 has no gradient: the velocity of index 1 (1,
// halved) plus its residual (1) is 1.5, and index 0, masked, stays silent.
TEST(MomentumCorrection, AppliesMomentumBeforeCompressionAndMasksWhatWasSent) {
  ThreadRendezvous rendezvous(1);
  ThreadCommunicator comm(rendezvous, 0);
  CodecOptions options;
  options.codec = "topk";
  options.ratio = 0.25;
  options.local_momentum = 0.5f;
  CompressedAllreduce reduce(comm, AllreduceChoice("ring"), options, 4);
  std::vector<float> g = {4.f, 1.f, 0.f, 0.f};
  reduce.run(g.data(), 4);
  EXPECT_EQ(g, (std::vector<float>{4.f, 0.f, 0.f, 0.f}));
  g.assign(4, 0.f);
  reduce.run(g.data(), 4);
  EXPECT_EQ(g, (std::vector<float>{0.f, 1.5f, 0.f, 0.f})) << "without masking index 0 sends 2";
}

// P and Q of rank 1 per block, the biases uncompressed beside P (the products:
// device_powersgd_test.cpp's PowerSgdSync tests).
TEST(PowerSgd, LaysOutPAndTheRestThenQ) {
  PowerSgd power(layout(), kCount, 1, true, 5);
  // P and Q of rank 1: (16 + 24) + (4 + 16) floats, plus the 20 biases uncompressed.
  EXPECT_EQ(power.firstBuffer().size(), 16u + 4u + 20u);
  EXPECT_EQ(power.secondBuffer().size(), 24u + 16u);
  EXPECT_EQ(power.restOffset(), 16u + 4u);
}

TEST(PowerSgd, RankIsCappedByTheMatrixShape) {
  PowerSgd power({{0, 3, 50}}, 150, 8, true, 1);
  EXPECT_EQ(power.effectiveRank(0), 3);
  EXPECT_THROW(PowerSgd({{0, 10, 10}, {50, 10, 10}}, 120, 2, true, 1), std::invalid_argument);
}

}  // namespace
}  // namespace ranklab
