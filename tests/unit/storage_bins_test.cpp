// Step bins: what finishRun sums each rank's steps into, checked against sums of the rows
// themselves; the migration that adds the table; bins follow their run.
#include <cmath>
#include <limits>
#include <map>

#include "tests/unit/storage_test_support.h"

namespace ranklab::storage_test {
namespace {

// The bin every step falls in, summed here in C++ from the rows.
std::map<std::pair<int, int64_t>, StepBin> binsFromRows(const std::vector<StepRow>& rows,
                                                        int64_t width) {
  std::map<std::pair<int, int64_t>, StepBin> bins;
  for (const StepRow& s : rows) {
    auto [it, fresh] = bins.try_emplace({s.rank, s.step / width});
    StepBin& b = it->second;
    if (fresh) {
      b.rank = s.rank;
      b.first_step = s.step;
      b.first_time_ns = s.time_ns;
      b.loss_scale_min = b.loss_scale_max = s.loss_scale;
      b.loss_min = std::numeric_limits<double>::infinity();
      b.loss_max = -b.loss_min;
    }
    b.last_step = s.step;
    b.last_time_ns = s.time_ns;
    b.steps += 1;
    b.epoch = s.epoch;
    b.samples += s.samples;
    b.data_ns += s.data_ns;
    b.forward_ns += s.forward_ns;
    b.backward_ns += s.backward_ns;
    b.compress_ns += s.compress_ns;
    b.comm_ns += s.comm_ns;
    b.wait_ns += s.wait_ns;
    b.update_ns += s.update_ns;
    if (std::isfinite(s.loss)) {
      b.loss_sum += s.loss;
      b.loss_count += 1;
      b.loss_min = std::min(b.loss_min, s.loss);
      b.loss_max = std::max(b.loss_max, s.loss);
    }
    b.bytes_tx += s.bytes_tx;
    b.bytes_rx += s.bytes_rx;
    b.bytes_raw += s.bytes_raw;
    b.loss_scale_min = std::min(b.loss_scale_min, s.loss_scale);
    b.loss_scale_max = std::max(b.loss_scale_max, s.loss_scale);
    b.staleness_sum += s.staleness;
  }
  return bins;
}

void expectSameBin(const StepBin& a, const StepBin& b) {
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.first_step, b.first_step);
  EXPECT_EQ(a.last_step, b.last_step);
  EXPECT_EQ(a.steps, b.steps);
  expectSamePhases(a, b);
  EXPECT_NEAR(a.loss_sum, b.loss_sum, 1e-12 * std::abs(b.loss_sum) + 1e-12);
  EXPECT_EQ(a.loss_count, b.loss_count);
  if (b.loss_count > 0) {
    EXPECT_EQ(a.loss_min, b.loss_min);
    EXPECT_EQ(a.loss_max, b.loss_max);
  }
  EXPECT_EQ(a.bytes_tx, b.bytes_tx);
  EXPECT_EQ(a.bytes_rx, b.bytes_rx);
  EXPECT_EQ(a.bytes_raw, b.bytes_raw);
  EXPECT_EQ(a.loss_scale_min, b.loss_scale_min);
  EXPECT_EQ(a.loss_scale_max, b.loss_scale_max);
  EXPECT_EQ(a.staleness_sum, b.staleness_sum);
  EXPECT_EQ(a.first_time_ns, b.first_time_ns);
  EXPECT_EQ(a.last_time_ns, b.last_time_ns);
}

// A run of many ranks gets fewer bins per rank: its open reads ~kStepBinsPerRun in all.
TEST(StepBinWidth, KeepsARunOfManyRanksWithinTheRunsBudget) {
  EXPECT_EQ(RunStore::stepBinWidth(2'000, 32), 2);          // 1,000 bins each, as for one rank
  EXPECT_EQ(RunStore::stepBinWidth(2'000, 1'024), 16);      // 125 bins each
  EXPECT_EQ(RunStore::stepBinWidth(2'000, 1'000'000), 32);  // never under 64 bins a rank
  EXPECT_EQ(RunStore::stepBinWidth(100, 1'024), 1);
}

TEST(StepBinWidth, KeepsEachRankWithinTheBinBudget) {
  EXPECT_EQ(RunStore::stepBinWidth(0), 1);
  EXPECT_EQ(RunStore::stepBinWidth(RunStore::kStepBinsPerRank), 1);
  EXPECT_EQ(RunStore::stepBinWidth(RunStore::kStepBinsPerRank + 1), 2);
  EXPECT_EQ(RunStore::stepBinWidth(62'500), 64);
  EXPECT_EQ(RunStore::stepBinWidth(1'000'000), 1024);
  for (int64_t steps : {999, 4'321, 65'537, 3'000'000}) {
    const int64_t width = RunStore::stepBinWidth(steps);
    EXPECT_LE((steps + width - 1) / width, RunStore::kStepBinsPerRank) << steps;
    if (width > 1) {
      EXPECT_GT((steps + width / 2 - 1) / (width / 2), RunStore::kStepBinsPerRank)
          << steps << ": a narrower bin would do";
    }
  }
}

TEST_F(RunStoreTest, FinishRunSumsStepsIntoBinsEqualToTheRows) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun());
  RecordBatch batch;
  // 2,500 steps per rank from step 3 (bins do not start on a boundary), rank 1 stops early.
  for (int r = 0; r < 2; ++r)
    for (int64_t k = 3; k < (r == 0 ? 2503 : 1800); ++k)
      batch.steps.push_back(exampleStep(id, r, k));
  batch.steps[10].loss = std::numeric_limits<double>::infinity();  // left out of the loss
  batch.steps[11].loss = 1e6;                                      // a spike kept as the max
  store.write(batch);
  EXPECT_TRUE(store.stepBins(id).empty()) << "a running run has no bins yet";
  store.finishRun(id, "done", 1, 1);

  const int64_t width = RunStore::stepBinWidth(2500);
  ASSERT_EQ(width, 4);
  const auto expected = binsFromRows(batch.steps, width);
  const std::vector<StepBin> bins = store.stepBins(id);
  ASSERT_EQ(bins.size(), expected.size());
  size_t i = 0;
  for (const auto& [key, bin] : expected) expectSameBin(bins[i++], bin);
  // Rank 0's steps 12..15: 13 has an infinite loss, 14 the spike.
  const StepBin& spiked = bins[3];
  ASSERT_EQ(spiked.first_step, 12);
  EXPECT_EQ(spiked.loss_count, 3);
  EXPECT_EQ(spiked.loss_max, 1e6);
  EXPECT_TRUE(std::isfinite(spiked.loss_sum));
}

TEST_F(RunStoreTest, BinsAreReplacedWhenARunIsFinishedAgainAndDeletedWithIt) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun());
  const int64_t other = store.createRun(exampleRun("other"));
  RecordBatch batch;
  for (int64_t k = 0; k < 50; ++k) {
    batch.steps.push_back(exampleStep(id, 0, k));
    batch.steps.push_back(exampleStep(other, 0, k));
  }
  store.write(batch);
  store.finishRun(id, "stopped", 1, 1);
  store.finishRun(other, "done", 1, 1);
  store.finishRun(id, "done", 2, 2);
  EXPECT_EQ(store.stepBins(id).size(), 50u);  // width 1: one bin per step, not twice
  store.deleteRun(id);
  EXPECT_TRUE(store.stepBins(id).empty());
  EXPECT_EQ(store.stepBins(other).size(), 50u);
  RawFile raw(dbPath());
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM step_bins WHERE run_id = " + std::to_string(id)), 0);
}

TEST_F(RunStoreTest, RunWithoutStepsFinishesWithoutBins) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun());
  store.finishRun(id, "failed", 0.5, 0);
  EXPECT_TRUE(store.stepBins(id).empty());
  EXPECT_EQ(store.run(id)->status, "failed");
}

// What version 18 added, taken away again to make an older file.
constexpr const char* kDropVersion18 = "DROP TABLE rank_totals; ";
// And what version 17 added.
const std::string kDropVersion17 =
    std::string(kDropVersion18) +
    "ALTER TABLE runs DROP COLUMN scheduler_job; ALTER TABLE runs DROP COLUMN scheduler_state; "
    "ALTER TABLE runs DROP COLUMN scheduler_reason; ALTER TABLE runs DROP COLUMN nodes; "
    "ALTER TABLE runs DROP COLUMN scheduler_exit; ";
// And what version 16 added.
const std::string kDropVersion16 = kDropVersion17 + "ALTER TABLE runs DROP COLUMN origin; ";
// And what version 15 added.
const std::string kDropVersion15 = kDropVersion16 +
                                   "ALTER TABLE steps DROP COLUMN comm_tensor_ns; ALTER TABLE "
                                   "steps DROP COLUMN comm_pipeline_ns; ";
// And what version 14 added: a file of version 13 or older lacks both.
const std::string kDropVersion14 =
    kDropVersion15 +
    "ALTER TABLE steps DROP COLUMN grad_norm; ALTER TABLE steps DROP COLUMN bytes_tensor; "
    "ALTER TABLE steps DROP COLUMN bytes_pipeline; ALTER TABLE step_bins DROP COLUMN "
    "grad_norm_sum; "
    "ALTER TABLE step_bins DROP COLUMN lr_sum; ";
// And what version 13 added: a file of version 12 or older lacks both.
const std::string kDropVersion13 = kDropVersion14 + "ALTER TABLE evals DROP COLUMN loss_nan; ";
// And what version 12 added: a file of version 11 or older lacks both.
const std::string kDropVersion12 =
    std::string(kDropVersion13) +
    "ALTER TABLE spans DROP COLUMN part; ALTER TABLE spans DROP COLUMN peer; "
    "ALTER TABLE spans DROP COLUMN chunk; ALTER TABLE spans DROP COLUMN bytes; ";
// And what version 11 added: a file of version 10 or older lacks both.
const std::string kDropVersion11 = kDropVersion12 + "ALTER TABLE steps DROP COLUMN loss_nan; ";
// And what version 10 added: a file of version 9 or older lacks both.
const std::string kDropVersion10 = kDropVersion11 +
                                   "ALTER TABLE runs DROP COLUMN launcher_host; ALTER TABLE runs "
                                   "DROP COLUMN launcher_pid; ALTER TABLE runs DROP COLUMN "
                                   "launcher_start; ";
// And what version 9 added: a file of version 8 or older lacks both.
const std::string kDropVersion9 = kDropVersion10 + "ALTER TABLE steps DROP COLUMN mem_buffers; ";
// And what version 8 added: a file of version 7 or older lacks both.
const std::string kDropVersion8 =
    std::string(kDropVersion9) +
    "ALTER TABLE steps DROP COLUMN mem_params; ALTER TABLE steps DROP COLUMN mem_grads; "
    "ALTER TABLE steps DROP COLUMN mem_optimizer; ALTER TABLE steps DROP COLUMN mem_activations; "
    "ALTER TABLE steps DROP COLUMN allreduces; ALTER TABLE steps DROP COLUMN reduce_scatters; "
    "ALTER TABLE steps DROP COLUMN all_gathers; ALTER TABLE steps DROP COLUMN sends; "
    "ALTER TABLE steps DROP COLUMN recvs; ";
// And what version 7 added: a file of version 6 or older lacks both.
const std::string kDropVersion7 = kDropVersion8 +
                                  "ALTER TABLE steps DROP COLUMN stashed; "
                                  "ALTER TABLE steps DROP COLUMN stashed_bytes; ";

// An ended run's per-rank totals are summed once, when it ends, and read back as they were
// summed; a version 17 file's ended runs (no totals stored) are still summed over their steps.
TEST_F(RunStoreTest, AnEndedRunsTotalsAreStoredOnceAndReadAsSummed) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun());
  std::vector<StepRow> steps;
  for (int rank : {0, 1})
    for (int64_t step = 1; step <= 5; ++step) steps.push_back(exampleStep(id, rank, step));
  steps.back().mem_activations = 123456789;
  store.write(RecordBatch{{}, steps, {}, {}, {}, {}});
  const RunSummary live = *store.summary(id);
  EXPECT_EQ(RawFile(dbPath()).integer("SELECT COUNT(*) FROM rank_totals"), 0);
  store.finishRun(id, "done", 1, 1);
  EXPECT_EQ(RawFile(dbPath()).integer("SELECT COUNT(*) FROM rank_totals"), 2);
  // Steps written after the end (never by ranklab) show the stored totals are what is read.
  store.write(RecordBatch{{}, {exampleStep(id, 0, 6)}, {}, {}, {}, {}});
  const RunSummary ended = *store.summary(id);
  ASSERT_EQ(ended.ranks.size(), 2u);
  EXPECT_EQ(ended.steps, live.steps);
  EXPECT_EQ(ended.samples, live.samples);
  EXPECT_EQ(ended.bytes_tx, live.bytes_tx);
  EXPECT_EQ(ended.ranks[1].memory.activations_peak, 123456789);
  EXPECT_EQ(ended.ranks[0].compute_s, live.ranks[0].compute_s);

  RawFile(dbPath()).exec(std::string(kDropVersion18) + "PRAGMA user_version = 17");
  RunStore reopened(dbPath());
  EXPECT_EQ(reopened.summary(id)->steps, 6);  // summed over the steps again
}

// A version 7 file's steps gain the memory ledger and the collective counts, zero for the
// old rows, and the run's summary reads them as zeros.
TEST_F(RunStoreTest, VersionSevenStepsGainTheLedgerAndCollectiveColumns) {
  int64_t id = 0;
  {
    RunStore store(dbPath());
    id = store.createRun(exampleRun());
    StepRow step = exampleStep(id, 0, 1);
    step.mem_params = 400;
    step.reduce_scatters = 3;
    store.write(RecordBatch{{}, {step}, {}, {}, {}, {}});
    EXPECT_EQ(store.steps(id)[0].mem_params, 400);
  }
  { RawFile(dbPath()).exec(kDropVersion8 + "PRAGMA user_version = 7"); }
  RunStore store(dbPath());
  EXPECT_EQ(RawFile(dbPath()).integer("PRAGMA user_version"), RunStore::kSchemaVersion);
  const auto steps = store.steps(id);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].mem_params, 0);
  EXPECT_EQ(steps[0].reduce_scatters, 0);
  EXPECT_EQ(steps[0].stashed, exampleStep(id, 0, 1).stashed);
}

// A diverged step's NaN loss reads back as NaN (it was stored as 0), stays out of the bins'
// loss, and a version 10 file's old rows keep what they had.
TEST_F(RunStoreTest, ANanLossReadsBackAsNanAndStaysOutOfTheBins) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun());
  StepRow diverged = exampleStep(id, 0, 2);
  diverged.loss = std::numeric_limits<double>::quiet_NaN();
  StepRow infinite = exampleStep(id, 0, 3);
  infinite.loss = std::numeric_limits<double>::infinity();
  store.write(RecordBatch{{}, {exampleStep(id, 0, 1), diverged, infinite}, {}, {}, {}, {}});
  const auto steps = store.steps(id);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].loss, exampleStep(id, 0, 1).loss);
  EXPECT_TRUE(std::isnan(steps[1].loss));
  EXPECT_TRUE(std::isinf(steps[2].loss));
  store.finishRun(id, "failed", 1, 1);
  int64_t finite = 0;
  double sum = 0;
  for (const StepBin& bin : store.stepBins(id)) {
    finite += bin.loss_count;
    sum += bin.loss_sum;
  }
  EXPECT_EQ(finite, 1);
  EXPECT_EQ(sum, exampleStep(id, 0, 1).loss);

  RawFile(dbPath()).exec(std::string(kDropVersion11) + "PRAGMA user_version = 10");
  RunStore reopened(dbPath());
  EXPECT_EQ(RawFile(dbPath()).integer("PRAGMA user_version"), RunStore::kSchemaVersion);
  EXPECT_EQ(reopened.steps(id)[1].loss, 0);  // what version 10 had kept of it
}

// A version 9 file's runs gain the launcher's identity, unknown (0) for the old rows: a run
// still `running` there is never taken for lost.
TEST_F(RunStoreTest, VersionNineRunsGainTheLauncherAndAreNeverTakenForLost) {
  int64_t id = 0;
  {
    RunStore store(dbPath());
    id = store.createRun(exampleRun());
  }
  { RawFile(dbPath()).exec(kDropVersion10 + "PRAGMA user_version = 9"); }
  RunStore store(dbPath());
  EXPECT_EQ(RawFile(dbPath()).integer("PRAGMA user_version"), RunStore::kSchemaVersion);
  EXPECT_EQ(RawFile(dbPath()).integer("SELECT launcher_pid FROM runs"), 0);
  EXPECT_EQ(store.run(id)->status, "running");
}

// A version 8 file's steps gain the ledger's scratch column, zero for the old rows.
TEST_F(RunStoreTest, VersionEightStepsGainTheScratchColumn) {
  int64_t id = 0;
  {
    RunStore store(dbPath());
    id = store.createRun(exampleRun());
    StepRow step = exampleStep(id, 0, 1);
    step.mem_buffers = 4'200;
    store.write(RecordBatch{{}, {step}, {}, {}, {}, {}});
    EXPECT_EQ(store.steps(id)[0].mem_buffers, 4'200);
    EXPECT_EQ(store.summary(id)->ranks.at(0).memory.buffers, 4'200);
  }
  { RawFile(dbPath()).exec(std::string(kDropVersion9) + "PRAGMA user_version = 8"); }
  RunStore store(dbPath());
  EXPECT_EQ(RawFile(dbPath()).integer("PRAGMA user_version"), RunStore::kSchemaVersion);
  const auto steps = store.steps(id);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].mem_buffers, 0);
  EXPECT_EQ(steps[0].mem_params, exampleStep(id, 0, 1).mem_params);
}

// A version 16 file's runs gain the scheduler's columns, empty (local runs); a Slurm job's
// state then goes onto the row, and a queued run shows as pending.
TEST_F(RunStoreTest, VersionSixteenRunsGainTheSchedulersColumns) {
  int64_t id = 0;
  {
    RunStore store(dbPath());
    id = store.createRun(exampleRun());
  }
  { RawFile(dbPath()).exec(std::string(kDropVersion17) + "PRAGMA user_version = 16"); }
  RunStore store(dbPath());
  EXPECT_EQ(RawFile(dbPath()).integer("PRAGMA user_version"), RunStore::kSchemaVersion);
  EXPECT_EQ(store.run(id)->scheduler_job, "");
  EXPECT_EQ(shownStatus(*store.run(id)), "running");
  store.setSchedulerState(id, {"12", "PENDING", "Resources", "", ""});
  const RunRow queued = *store.run(id);
  EXPECT_EQ(queued.scheduler_reason, "Resources");
  EXPECT_EQ(shownStatus(queued), "pending") << "a queued job's launcher is alive: not lost";
  store.setSchedulerState(id, {"12", "RUNNING", "", "n1", ""});
  EXPECT_EQ(shownStatus(*store.run(id)), "running");
  EXPECT_EQ(store.run(id)->nodes, "n1");
}

// A version 6 file's steps gain the pipeline's stash columns, zero for the old rows.
TEST_F(RunStoreTest, VersionSixStepsGainTheStashColumns) {
  int64_t id = 0;
  {
    RunStore store(dbPath());
    id = store.createRun(exampleRun());
    store.write(RecordBatch{{}, {exampleStep(id, 0, 1)}, {}, {}, {}, {}});
  }
  { RawFile(dbPath()).exec(kDropVersion7 + "PRAGMA user_version = 6"); }
  RunStore store(dbPath());
  EXPECT_EQ(RawFile(dbPath()).integer("PRAGMA user_version"), RunStore::kSchemaVersion);
  const auto steps = store.steps(id);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].stashed, 0);
  EXPECT_EQ(steps[0].stashed_bytes, 0);
}

TEST_F(RunStoreTest, VersionFourFileGainsTheBinsTableAndKeepsItsRuns) {
  int64_t id = 0;
  {
    RunStore store(dbPath());
    id = store.createRun(exampleRun());
    store.write(RecordBatch{{}, {exampleStep(id, 0, 1)}, {}, {}, {}, {}});
  }
  {
    RawFile raw(dbPath());
    raw.exec(kDropVersion7 + "DROP TABLE step_bins; PRAGMA user_version = 4");
  }
  RunStore store(dbPath());
  RawFile raw(dbPath());
  EXPECT_EQ(raw.integer("PRAGMA user_version"), RunStore::kSchemaVersion);
  EXPECT_EQ(store.steps(id).size(), 1u);
  EXPECT_TRUE(store.stepBins(id).empty()) << "old runs are not summed: readers use the rows";
  store.finishRun(id, "done", 1, 1);
  EXPECT_EQ(store.stepBins(id).size(), 1u);
}

// A version 13 file's bins lack the learning rate's and the gradient norm's sums: the
// migration sums the rate from each bin's steps (their norm was never recorded: 0).
TEST_F(RunStoreTest, VersionThirteenBinsGainTheirStepsLearningRates) {
  int64_t id = 0;
  {
    RunStore store(dbPath());
    id = store.createRun(exampleRun());
    RecordBatch batch;
    for (int64_t k = 0; k < 2'500; ++k) {
      StepRow step = exampleStep(id, 0, k);
      step.lr = 0.001 * static_cast<double>(k % 3);
      step.grad_norm = 2.0;
      batch.steps.push_back(step);
    }
    store.write(batch);
    store.finishRun(id, "done", 1, 1);
    double norms = 0;
    for (const StepBin& bin : store.stepBins(id)) norms += bin.grad_norm_sum;
    EXPECT_DOUBLE_EQ(norms, 2.0 * 2'500);
  }
  RawFile(dbPath()).exec(std::string(kDropVersion14) + "PRAGMA user_version = 13");
  RunStore store(dbPath());
  EXPECT_EQ(RawFile(dbPath()).integer("PRAGMA user_version"), RunStore::kSchemaVersion);
  const auto bins = store.stepBins(id);
  ASSERT_GT(bins.size(), 1u);
  double rates = 0, norms = 0;
  for (const StepBin& bin : bins) {
    rates += bin.lr_sum;
    norms += bin.grad_norm_sum;
  }
  EXPECT_NEAR(rates, 0.001 * (833 + 2 * 833), 1e-9);  // 834 zeros, 833 ones and 833 twos
  EXPECT_EQ(norms, 0.0);
  EXPECT_EQ(store.steps(id)[0].grad_norm, 0.0);
}

// A version 5 file's bins lack bytes_raw: the migration sums it from each bin's steps.
TEST_F(RunStoreTest, VersionFiveBinsGainTheirStepsRawBytes) {
  int64_t id = 0;
  std::vector<StepRow> rows;
  {
    RunStore store(dbPath());
    id = store.createRun(exampleRun());
    RecordBatch batch;
    for (int64_t k = 0; k < 2'500; ++k)
      for (int r = 0; r < 2; ++r) batch.steps.push_back(exampleStep(id, r, k));
    store.write(batch);
    store.finishRun(id, "done", 1, 1);
    rows = store.steps(id);
  }
  {
    RawFile raw(dbPath());
    raw.exec("ALTER TABLE step_bins DROP COLUMN bytes_raw; " + std::string(kDropVersion7) +
             "PRAGMA user_version = 5");
  }
  RunStore store(dbPath());
  const std::vector<StepBin> bins = store.stepBins(id);
  const auto expected = binsFromRows(rows, RunStore::stepBinWidth(2'500));
  ASSERT_EQ(bins.size(), expected.size());
  for (const StepBin& b : bins) {
    EXPECT_GT(b.bytes_raw, b.bytes_tx) << "the example steps are compressed";
    expectSameBin(b, expected.at({b.rank, b.first_step / RunStore::stepBinWidth(2'500)}));
  }
}

TEST_F(RunStoreTest, StepsOfRankFromReadsOneRanksTailInOrder) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun());
  RecordBatch batch;
  for (int64_t k = 20; k >= 0; --k)
    for (int r = 0; r < 3; ++r) batch.steps.push_back(exampleStep(id, r, k));
  store.write(batch);
  std::vector<StepRow> expected;
  for (int64_t k = 15; k <= 20; ++k) expected.push_back(exampleStep(id, 1, k));
  expectSameRows(store.stepsOfRankFrom(id, 1, 15), expected);
  EXPECT_TRUE(store.stepsOfRankFrom(id, 1, 21).empty());
  EXPECT_TRUE(store.stepsOfRankFrom(id, 7, 0).empty());
}

}  // namespace
}  // namespace ranklab::storage_test
