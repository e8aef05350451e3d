// `analyze` on runs stored through the real store: a rank slower every step is a chronic
// straggler and a random rank last each step is none; a run that did not finish names the
// ranks behind, with their last step, collective and phase.
#include <gtest/gtest.h>

#include <random>

#include "storage/analysis/run_analysis.h"
#include "tests/support/sync_run_rows.h"
#include "tests/unit/storage_test_support.h"

namespace ranklab::storage_test {
namespace {

using testing::kAllreducesPerStep;
using testing::storeSyncRun;
using testing::SyncRunShape;

constexpr int64_t kMs = 1'000'000;

// 10 ms of compute, give or take half a millisecond, the same for a given seed.
std::function<int64_t(int, int64_t)> jittered(unsigned seed, int slow_rank, double slower) {
  return [seed, slow_rank, slower](int rank, int64_t step) {
    std::mt19937 rng(seed * 1'000'003u + unsigned(step) * 1'009u + unsigned(rank));
    const int64_t ns = 10 * kMs + int64_t(rng() % kMs) - kMs / 2;
    return rank == slow_rank ? int64_t(double(ns) * slower) : ns;
  };
}

// One rank, drawn afresh each step, 2 ms slower than the rest.
std::function<int64_t(int, int64_t)> randomLastRank(unsigned seed, int world) {
  return [seed, world](int rank, int64_t step) {
    std::mt19937 rng(seed * 7'919u + unsigned(step));
    return rank == int(rng() % unsigned(world)) ? 12 * kMs : 10 * kMs;
  };
}

size_t chronicCount(const RunAnalysis& a) {
  return size_t(std::count_if(a.stragglers.begin(), a.stragglers.end(),
                              [](const StragglerStats& s) { return s.kind == "chronic"; }));
}

class RunAnalysisTest : public RunStoreTest {};

TEST_F(RunAnalysisTest, ARankSlowerEveryStepIsAChronicStraggler) {
  RunStore store(dbPath());
  const int64_t id =
      storeSyncRun(store, {.world = 8, .steps = 200, .compute_ns = jittered(1, 3, 1.2)});
  const RunAnalysis a = analyzeRun(store, id);
  ASSERT_EQ(a.stragglers.size(), 8u);
  EXPECT_EQ(a.stragglers[0].rank, 3);
  EXPECT_EQ(a.stragglers[0].kind, "chronic");
  EXPECT_EQ(a.stragglers[0].last_arrivals, 200);
  EXPECT_DOUBLE_EQ(a.stragglers[0].last_share, 1.0);
  EXPECT_DOUBLE_EQ(a.stragglers[0].recent_share, 1.0);
  for (size_t i = 1; i < a.stragglers.size(); ++i) EXPECT_EQ(a.stragglers[i].kind, "none");
  EXPECT_EQ(a.chronic.window, 100);
  EXPECT_DOUBLE_EQ(a.chronic.share_above, 0.5);
  EXPECT_FALSE(a.hang) << "a run that ended done has no hang section";
}

TEST_F(RunAnalysisTest, ARandomRankLastEachStepNamesNoneChronic) {
  RunStore store(dbPath());
  const int64_t id =
      storeSyncRun(store, {.world = 8, .steps = 200, .compute_ns = randomLastRank(1, 8)});
  const RunAnalysis a = analyzeRun(store, id);
  EXPECT_EQ(chronicCount(a), 0u);
  double shares = 0;
  for (const StragglerStats& s : a.stragglers) {
    shares += s.last_share;
    EXPECT_EQ(s.kind, s.last_arrivals > 0 ? "moving" : "none") << "rank " << s.rank;
  }
  EXPECT_NEAR(shares, 1.0, 1e-9) << "some rank is last at every step";
}

// Of two ranks a random one is last about half the time: more than half is chance, not chronic.
TEST_F(RunAnalysisTest, OfTwoRanksARandomOneLastIsNotChronicByChance) {
  RunStore store(dbPath());
  for (unsigned seed = 1; seed <= 10; ++seed) {
    const int64_t id =
        storeSyncRun(store, {.world = 2, .steps = 100, .compute_ns = randomLastRank(seed, 2)});
    const RunAnalysis a = analyzeRun(store, id);
    EXPECT_EQ(chronicCount(a), 0u) << "seed " << seed << ": rank " << a.stragglers[0].rank
                                   << " last in " << a.stragglers[0].recent_share;
    EXPECT_NEAR(a.chronic.share_above, 0.65, 1e-9);
  }
}

// Chronic is about the last 100 steps: a rank slow early and fast since is moving.
TEST_F(RunAnalysisTest, ARankThatWasSlowOnlyEarlyIsMoving) {
  RunStore store(dbPath());
  const auto early = [](int rank, int64_t step) {
    return rank == 1 && step <= 150 ? 12 * kMs : rank == 2 ? 11 * kMs : 10 * kMs;
  };
  const RunAnalysis a =
      analyzeRun(store, storeSyncRun(store, {.world = 4, .steps = 300, .compute_ns = early}));
  const auto of = [&](int rank) {
    return *std::find_if(a.stragglers.begin(), a.stragglers.end(),
                         [rank](const StragglerStats& s) { return s.rank == rank; });
  };
  EXPECT_EQ(of(1).kind, "moving");
  EXPECT_DOUBLE_EQ(of(1).last_share, 0.5);
  EXPECT_EQ(of(2).kind, "chronic");
  EXPECT_DOUBLE_EQ(of(2).recent_share, 1.0);
}

EventRow eventOf(int rank, int64_t step, std::string kind, std::string text) {
  EventRow e;
  e.rank = rank;
  e.step = step;
  e.kind = std::move(kind);
  e.text = std::move(text);
  return e;
}

// Rank 1 stopped after step 6 (a checkpoint begun after it), the others went on to step 10.
TEST_F(RunAnalysisTest, ARankWhoseRowsStopIsNamedBehindWithItsLastStepCollectiveAndPhase) {
  SpanRow checkpoint;
  checkpoint.rank = 1;
  checkpoint.step = 6;
  checkpoint.kind = "checkpoint";
  checkpoint.start_ns = 7 * 100 * kMs - kMs;  // after its step 6 ended (at 614 ms)
  checkpoint.end_ns = checkpoint.start_ns + 5 * kMs;
  RunStore store(dbPath());
  const int64_t id =
      storeSyncRun(store, {.world = 4,
                           .status = "failed",
                           .stopped_rank = 1,
                           .stopped_step = 6,
                           .spans = {checkpoint},
                           .events = {eventOf(1, 6, "failure", "rank 1 hung after step 6")}});
  const RunAnalysis a = analyzeRun(store, id);
  ASSERT_TRUE(a.hang);
  EXPECT_EQ(a.hang->status, "failed");
  EXPECT_EQ(a.hang->failure, "rank 1 hung after step 6");
  EXPECT_EQ(a.hang->median_last_step, 10);
  ASSERT_EQ(a.hang->ranks_behind.size(), 1u);
  const RankProgress& p = a.hang->ranks_behind[0];
  EXPECT_EQ(p.rank, 1);
  EXPECT_EQ(p.host, "node0");
  EXPECT_EQ(p.last_step, 6);
  EXPECT_EQ(p.last_collective, 6 * kAllreducesPerStep);
  EXPECT_EQ(p.phase, "checkpoint");
}

// A synchronous hang: the others wait in the next collective, level with the stuck rank; the
// launcher's verdict names it. A rank that never stepped is the furthest behind.
TEST_F(RunAnalysisTest, LevelRanksNameTheOneTheLauncherFoundHungAndOneThatNeverStepped) {
  RunStore store(dbPath());
  const int64_t id = storeSyncRun(store, {.world = 4,
                                          .status = "stopped",
                                          .stopped_rank = 3,
                                          .stopped_step = 0,
                                          .events = {eventOf(2, 10, "failure", "rank 2 hung")}});
  const RunAnalysis a = analyzeRun(store, id);
  ASSERT_TRUE(a.hang);
  ASSERT_EQ(a.hang->ranks_behind.size(), 2u);
  EXPECT_EQ(a.hang->ranks_behind[0].rank, 3);
  EXPECT_EQ(a.hang->ranks_behind[0].last_step, -1);
  EXPECT_EQ(a.hang->ranks_behind[0].last_collective, 0);
  EXPECT_EQ(a.hang->ranks_behind[0].phase, "starting");
  EXPECT_EQ(a.hang->ranks_behind[1].rank, 2);
  EXPECT_EQ(a.hang->ranks_behind[1].last_step, 10);
  EXPECT_EQ(a.hang->ranks_behind[1].last_collective, 10 * kAllreducesPerStep);
  EXPECT_EQ(a.hang->ranks_behind[1].phase, "update");
}

}  // namespace
}  // namespace ranklab::storage_test
