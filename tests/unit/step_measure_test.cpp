// A run's step by the prediction's measure (storage/analysis/step_measure.h): the slowest
// rank's median period and median phases, the largest ledger; and a "prediction" event read
// back, a broken one ignored.
#include <gtest/gtest.h>

#include "storage/analysis/step_measure.h"

namespace ranklab {
namespace {

// `steps` steps of `rank`, each `period_ms` after the last, forward = `forward_ms` but step 5's
// (an outlier the median leaves out), and `memory` bytes in its ledger.
std::vector<StepRow> rankSteps(int rank, int steps, int64_t period_ms, int64_t forward_ms,
                               int64_t memory) {
  std::vector<StepRow> rows;
  for (int i = 1; i <= steps; ++i) {
    StepRow s;
    s.rank = rank;
    s.step = i;
    s.time_ns = i * period_ms * 1000000;
    s.forward_ns = (i == 5 ? 100 : forward_ms) * 1000000;
    s.mem_params = memory / 2;
    s.mem_activations = memory - memory / 2;
    rows.push_back(s);
  }
  return rows;
}

TEST(StepMeasure, TheSlowestRanksMedianStepAndTheLargestLedger) {
  std::vector<StepRow> rows = rankSteps(0, 10, 10, 4, 1000);
  const std::vector<StepRow> slow = rankSteps(1, 10, 12, 7, 800);
  rows.insert(rows.end(), slow.begin(), slow.end());
  const MeasuredStep m = measuredStep(rows);
  EXPECT_DOUBLE_EQ(m.step_s, 0.012);
  EXPECT_EQ(m.memory_bytes, 1000);
  ASSERT_TRUE(m.phases.has_value());
  EXPECT_EQ((*m.phases)[1], 7000000);  // forward: rank 1's median, step 5's 100 ms aside
  EXPECT_EQ((*m.phases)[0], 0);
}

TEST(StepMeasure, NoStepsMeasureNothing) {
  const MeasuredStep m = measuredStep(std::vector<StepRow>{});
  EXPECT_EQ(m.step_s, 0);
  EXPECT_FALSE(m.phases.has_value());
}

TEST(StepMeasure, ThePeriodSkipsTheFirstSteps) {
  // Steps end at 0, 50, 60, 70, ...: the first periods (compilation, warm-up) are skipped.
  EXPECT_DOUBLE_EQ(stepPeriodSeconds({{0, 50000000, 60000000, 70000000, 80000000, 90000000}}, 1),
                   0.01);
  EXPECT_DOUBLE_EQ(stepPeriodSeconds({{0, 50000000}}, 1), 0);
}

EventRow predictionEvent(const std::string& text) {
  EventRow e;
  e.rank = -1;
  e.kind = "prediction";
  e.text = text;
  return e;
}

TEST(StepMeasure, APredictionEventIsReadBack) {
  EventRow other;
  other.kind = "traffic";
  other.text = R"({"step_s": 9})";
  const auto p = predictionOf(
      {predictionEvent(R"({"simulated_run": 3, "step_s": 0.25, "memory_bytes": 5000000,)"
                       R"( "phases": {"forward": 0.1, "comm": 0.002}})"),
       other, predictionEvent("not json")});
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->simulated_run, 3);
  EXPECT_DOUBLE_EQ(p->step_s, 0.25);
  EXPECT_EQ(p->memory_bytes, 5000000);
  ASSERT_TRUE(p->phases.has_value());
  EXPECT_EQ((*p->phases)[1], 100000000);  // forward
  EXPECT_EQ((*p->phases)[5], 2000000);    // comm
  EXPECT_EQ((*p->phases)[0], 0);          // data: not listed
}

TEST(StepMeasure, NoPredictionEventNoPrediction) {
  EXPECT_FALSE(predictionOf({}).has_value());
  EXPECT_FALSE(predictionOf({predictionEvent("[1, 2]")}).has_value());
  const auto bare = predictionOf({predictionEvent(R"({"simulated_run": 4, "step_s": 0.1})")});
  ASSERT_TRUE(bare.has_value());
  EXPECT_FALSE(bare->phases.has_value());
}

TEST(StepMeasure, TheErrorIsSignedAndRelative) {
  EXPECT_DOUBLE_EQ(relativeError(1.2, 1.0), 0.19999999999999996);
  EXPECT_DOUBLE_EQ(relativeError(0.5, 1.0), -0.5);
  EXPECT_DOUBLE_EQ(relativeError(0.5, 0), 0);
}

}  // namespace
}  // namespace ranklab
