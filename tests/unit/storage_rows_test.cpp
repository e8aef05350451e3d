// Run store tests on the rows: every table round-trips, summaries match their closed form,
// rename and delete.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "storage/run_store.h"
#include "tests/unit/storage_test_support.h"

namespace ranklab {
namespace {

using namespace storage_test;  // NOLINT: the shared examples and comparisons
namespace fs = std::filesystem;

// --- round trips ----------------------------------------------------------------------------

TEST_F(RunStoreTest, RunRoundTripAndFinish) {
  RunStore store(dbPath());
  const NewRun in = exampleRun();
  const int64_t id = store.createRun(in);
  std::optional<RunRow> row = store.run(id);
  ASSERT_TRUE(row);
  EXPECT_EQ(row->id, id);
  EXPECT_EQ(row->name, in.name);
  EXPECT_TRUE(std::regex_match(row->created, kIsoUtc)) << row->created;
  EXPECT_EQ(row->finished, "");
  EXPECT_EQ(row->status, "running");
  EXPECT_EQ(row->job_path, in.job_path);
  EXPECT_EQ(row->job_toml, in.job_toml);
  EXPECT_EQ(row->world, in.world);
  EXPECT_EQ(row->strategy, in.strategy);
  EXPECT_EQ(row->algorithm, in.algorithm);
  EXPECT_EQ(row->codec, in.codec);
  EXPECT_EQ(row->amp, in.amp);
  EXPECT_EQ(row->epochs, in.epochs);
  EXPECT_EQ(row->wall_s, 0.0);
  EXPECT_EQ(row->train_s, 0.0);
  EXPECT_EQ(RawFile(dbPath()).text("SELECT typeof(finished) FROM runs"), "null");

  store.finishRun(id, "done", 12.5, 10.25);
  std::optional<RunRow> done = store.run(id);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status, "done");
  EXPECT_TRUE(std::regex_match(done->finished, kIsoUtc)) << done->finished;
  EXPECT_LE(done->created, done->finished);
  EXPECT_EQ(done->created, row->created);
  EXPECT_EQ(done->wall_s, 12.5);
  EXPECT_EQ(done->train_s, 10.25);
}

TEST_F(RunStoreTest, RanksAreUpsertedByRunAndRank) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun());
  RecordBatch hello;
  for (int r = 0; r < 3; ++r) hello.ranks.push_back(exampleRank(id, r));
  store.write(hello);
  expectSameRows(store.ranks(id), hello.ranks);

  RankRow bye = hello.ranks[1];
  bye.status = "failed";
  bye.exit_status = 137;
  bye.train_ns = 9'876'543'210;
  bye.seq_gaps = 4;
  bye.last_seq = 1234;
  bye.host = "node9";
  bye.pid = 99;
  RecordBatch last;
  last.ranks.push_back(bye);
  store.write(last);
  expectSameRows(store.ranks(id), {hello.ranks[0], bye, hello.ranks[2]});
}

TEST_F(RunStoreTest, StepsRoundTripOrderedByRankThenStep) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun());
  RecordBatch batch;
  std::vector<StepRow> expected;
  for (int rank = 0; rank < 3; ++rank)
    for (int64_t step = 1; step <= 20; ++step) expected.push_back(exampleStep(id, rank, step));
  // Arrival order interleaves ranks and runs backwards.
  for (auto it = expected.rbegin(); it != expected.rend(); ++it) batch.steps.push_back(*it);
  store.write(batch);
  expectSameRows(store.steps(id), expected);
}

TEST_F(RunStoreTest, ResentStepReplacesInsteadOfFailing) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun());
  RecordBatch batch;
  batch.steps = {exampleStep(id, 0, 1), exampleStep(id, 0, 2)};
  store.write(batch);
  batch.steps[1].loss = 0.125;
  batch.steps[1].bytes_tx = 42;
  ASSERT_NO_THROW(store.write(batch));
  expectSameRows(store.steps(id), batch.steps);
}

TEST_F(RunStoreTest, EvalsRoundTripOrderedByStepThenRank) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun());
  RecordBatch batch;
  batch.evals = {exampleEval(id, 1, 20, 0.8, 0.5), exampleEval(id, 0, 20, 0.7, 0.6),
                 exampleEval(id, 0, 10, 0.6, 0.9)};
  store.write(batch);
  expectSameRows(store.evals(id), {batch.evals[2], batch.evals[1], batch.evals[0]});
}

// Issue 33, item 3: a NaN test loss came back as 0 (SQLite binds NaN as NULL, and the
// column's default replaced it), so a diverged run looked like the best one.
TEST_F(RunStoreTest, ANonFiniteTestLossStaysNonFiniteAndMarksTheRunDiverged) {
  RunStore store(dbPath());
  const int64_t nan_run = store.createRun(exampleRun());
  const int64_t inf_run = store.createRun(exampleRun());
  const int64_t fine_run = store.createRun(exampleRun());
  RecordBatch batch;
  batch.evals = {exampleEval(nan_run, 0, 10, 0.9, 0.3),
                 exampleEval(nan_run, 0, 20, 0.1, std::nan("")),
                 exampleEval(nan_run, 1, 20, 0.1, 2.0), exampleEval(inf_run, 0, 20, 0.1, HUGE_VAL),
                 exampleEval(fine_run, 0, 20, 0.8, 0.4)};
  store.write(batch);
  const auto evals = store.evals(nan_run);
  ASSERT_EQ(evals.size(), 3u);
  EXPECT_EQ(evals[0].test_loss, 0.3);
  EXPECT_TRUE(std::isnan(evals[1].test_loss)) << evals[1].test_loss;
  const auto nan_summary = store.summary(nan_run);
  EXPECT_TRUE(nan_summary->diverged) << "one rank's NaN at the last evaluation";
  EXPECT_TRUE(std::isnan(nan_summary->test_loss.value_or(0))) << "never 0, never the mean of 2";
  EXPECT_TRUE(store.summary(inf_run)->diverged);
  EXPECT_FALSE(store.summary(fine_run)->diverged);
  EXPECT_EQ(store.summary(fine_run)->test_loss, 0.4);
}

// The evals' loss_nan column came with schema 13: a store written by schema 12 keeps every
// evaluation through the migration.
TEST_F(RunStoreTest, AStoreOfSchema12KeepsItsEvaluationsThroughTheMigration) {
  int64_t id = 0;
  {
    RunStore store(dbPath());
    id = store.createRun(exampleRun());
    RecordBatch batch;
    batch.evals = {exampleEval(id, 0, 10, 0.7, 0.6), exampleEval(id, 0, 20, 0.8, 0.5)};
    store.write(batch);
  }
  {
    RawFile raw(dbPath());  // back to schema 12, as the previous ranklab wrote it
    raw.exec(
        "DROP TABLE rank_totals; "
        "ALTER TABLE runs DROP COLUMN scheduler_job; ALTER TABLE runs DROP COLUMN "
        "scheduler_state; ALTER TABLE runs DROP COLUMN scheduler_reason; ALTER TABLE runs DROP "
        "COLUMN nodes; ALTER TABLE runs DROP COLUMN scheduler_exit; "
        "ALTER TABLE runs DROP COLUMN origin; "
        "ALTER TABLE steps DROP COLUMN comm_tensor_ns; ALTER TABLE steps DROP COLUMN "
        "comm_pipeline_ns; "
        "ALTER TABLE steps DROP COLUMN grad_norm; ALTER TABLE steps DROP COLUMN bytes_tensor; "
        "ALTER TABLE steps DROP COLUMN bytes_pipeline; ALTER TABLE step_bins DROP COLUMN "
        "grad_norm_sum; ALTER TABLE step_bins DROP COLUMN lr_sum; ALTER TABLE evals DROP COLUMN "
        "loss_nan; PRAGMA user_version = 12;");
  }
  RunStore store(dbPath());
  EXPECT_EQ(RawFile(dbPath()).integer("PRAGMA user_version"), RunStore::kSchemaVersion);
  const auto evals = store.evals(id);
  ASSERT_EQ(evals.size(), 2u);
  EXPECT_EQ(evals[1].test_loss, 0.5);
  EXPECT_EQ(evals[1].test_accuracy, 0.8);
  EXPECT_FALSE(store.summary(id)->diverged);
}

TEST_F(RunStoreTest, EventsRoundTripInArrivalOrder) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun());
  RecordBatch batch;
  batch.events = {exampleEvent(id, 2, 50, "straggler", "rank 2 is 3.1x slower"),
                  exampleEvent(id, -1, 0, "log", "mpirun said:\n  'hello' \"quoted\" ünïcode"),
                  exampleEvent(id, 0, 10, "checkpoint", "")};
  store.write(batch);
  expectSameRows(store.events(id), batch.events);
}

TEST_F(RunStoreTest, RowsOfOtherRunsStayApart) {
  RunStore store(dbPath());
  const int64_t a = store.createRun(exampleRun("a"));
  const int64_t b = store.createRun(exampleRun("b"));
  RecordBatch batch;
  batch.steps = {exampleStep(a, 0, 1), exampleStep(b, 0, 1), exampleStep(b, 0, 2)};
  store.write(batch);
  EXPECT_EQ(store.steps(a).size(), 1u);
  EXPECT_EQ(store.steps(b).size(), 2u);
  EXPECT_TRUE(store.steps(b + 1).empty());
}

// --- summary --------------------------------------------------------------------------------

// World 4: rank r takes 10 - 2r steps (rank 3 says hello and never steps). Step k of rank r:
// 32 samples, data 1000(r+1) ns, forward 2000, backward 3000, compress 400, update 500,
// comm 7000(r+1), wait 100k, bytes_tx 1024(r+1).
TEST_F(RunStoreTest, SummaryMatchesClosedForm) {
  RunStore store(dbPath());
  NewRun spec = exampleRun();
  spec.world = 4;
  const int64_t id = store.createRun(spec);
  const int64_t other = store.createRun(exampleRun("noise"));
  RecordBatch batch;
  for (int r = 0; r < 4; ++r) batch.ranks.push_back(exampleRank(id, r));
  for (int r = 0; r < 3; ++r) {
    for (int64_t k = 1; k <= 10 - 2 * r; ++k) {
      StepRow s = exampleStep(id, r, k);
      s.samples = 32;
      s.data_ns = 1000 * (r + 1);
      s.forward_ns = 2000;
      s.backward_ns = 3000;
      s.compress_ns = 400;
      s.update_ns = 500;
      s.comm_ns = 7000 * (r + 1);
      s.wait_ns = 100 * k;
      s.bytes_tx = 1024 * (r + 1);
      batch.steps.push_back(s);
    }
  }
  for (int64_t k = 1; k <= 50; ++k) batch.steps.push_back(exampleStep(other, 0, k));
  batch.evals = {exampleEval(id, 0, 5, 0.5, 1.0),  exampleEval(id, 1, 5, 0.5, 1.0),
                 exampleEval(id, 2, 8, 0.1, 2.0),  exampleEval(id, 0, 10, 0.8, 0.4),
                 exampleEval(id, 1, 10, 0.9, 0.2), exampleEval(other, 0, 99, 0.0, 9.0)};
  store.write(batch);
  store.finishRun(id, "done", 5.0, 4.0);

  std::optional<RunSummary> s = store.summary(id);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->run.id, id);
  EXPECT_EQ(s->run.status, "done");
  EXPECT_EQ(s->steps, 10);
  EXPECT_EQ(s->samples, 32 * (10 + 8 + 6));
  EXPECT_DOUBLE_EQ(s->samples_per_s, 32.0 * 24 / 4.0);
  ASSERT_TRUE(s->test_accuracy);
  ASSERT_TRUE(s->test_loss);
  EXPECT_DOUBLE_EQ(*s->test_accuracy, (0.8 + 0.9) / 2);
  EXPECT_DOUBLE_EQ(*s->test_loss, (0.4 + 0.2) / 2);
  EXPECT_EQ(s->bytes_tx, 1024 * (10 * 1 + 8 * 2 + 6 * 3));
  // bytes_raw 4,000,000 + step; overflow on steps 3 and 10 (step % 7 == 3), ranks agree.
  int64_t raw = 0;
  for (int64_t n : {10, 8, 6}) raw += 4'000'000 * n + n * (n + 1) / 2;
  EXPECT_EQ(s->bytes_raw, raw);
  EXPECT_EQ(s->overflow_steps, 2);
  ASSERT_EQ(s->ranks.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const int64_t n = r < 3 ? 10 - 2 * r : 0;
    const RankSummary& rs = s->ranks[r];
    EXPECT_EQ(rs.rank, r);
    EXPECT_EQ(rs.steps, n);
    EXPECT_DOUBLE_EQ(rs.compute_s, n * (1000.0 * (r + 1) + 2000 + 3000 + 400 + 500) / 1e9);
    EXPECT_DOUBLE_EQ(rs.comm_s, n * 7000.0 * (r + 1) / 1e9);
    EXPECT_DOUBLE_EQ(rs.wait_s, 100.0 * n * (n + 1) / 2 / 1e9);
    EXPECT_EQ(rs.bytes_tx, n * 1024 * (r + 1));
    EXPECT_EQ(rs.overflow_steps, n >= 10 ? 2 : n >= 3 ? 1 : 0);
  }
}

// Server loads keep what the replies would have been uncompressed (schema 4); the summary
// adds the servers' replies to the run's bytes, rows without bytes_raw counting as sent.
TEST_F(RunStoreTest, ServerLoadsKeepTheirUncompressedBytes) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun());
  RecordBatch batch;
  for (int64_t k = 0; k < 3; ++k) {
    ServerLoadRow compressed{id, 4, 0, 0, 100, 250, 10, 0, 4000, 1000, 7, 8, 9, 1, k, 0, 100 * k};
    compressed.bytes_raw = 8000;
    ServerLoadRow legacy{id, 5, 1, 100, 200, 250, 10, 0, 4000, 3000, 7, 8, 9, 1, k, 0, 100 * k};
    batch.server_loads.push_back(compressed);
    batch.server_loads.push_back(legacy);  // bytes_raw 0: written before schema 4
  }
  store.write(batch);
  const auto rows = store.serverLoads(id);
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0].bytes_raw, 8000);
  EXPECT_EQ(rows[0].bytes_tx, 1000);
  EXPECT_EQ(rows[3].bytes_raw, 0);
  const std::optional<RunSummary> s = store.summary(id);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->servers.size(), 2u);
  EXPECT_EQ(s->servers[0].bytes_tx, 3000);
  EXPECT_EQ(s->servers[0].bytes_raw, 24000);
  EXPECT_EQ(s->servers[1].bytes_raw, 9000) << "no bytes_raw: sent uncompressed";
  EXPECT_EQ(s->bytes_tx, 3000 + 9000);
  EXPECT_EQ(s->bytes_raw, 24000 + 9000);
}

TEST_F(RunStoreTest, SummaryOfRunWithoutRowsIsZero) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun());
  std::optional<RunSummary> s = store.summary(id);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->steps, 0);
  EXPECT_EQ(s->samples, 0);
  EXPECT_EQ(s->samples_per_s, 0.0);  // train_s is 0: no division
  EXPECT_FALSE(s->test_accuracy);
  EXPECT_FALSE(s->test_loss);
  EXPECT_EQ(s->bytes_tx, 0);
  EXPECT_TRUE(s->ranks.empty());
}

// A live timeline ends at the last step every rank has; a rank that left is not waited for.
TEST_F(RunStoreTest, LastCommonStepWaitsForTheSlowestRankButNotForOneThatLeft) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun());
  RecordBatch batch;
  for (int rank = 0; rank < 3; ++rank) {
    batch.ranks.push_back(exampleRank(id, rank));
    for (int64_t step = 1; step <= 10 - 3 * rank; ++step)
      batch.steps.push_back(exampleStep(id, rank, step));
  }
  store.write(batch);
  EXPECT_EQ(store.lastCommonStep(id), 4);  // rank 2 reached step 4
  batch = {};
  batch.ranks.push_back(exampleRank(id, 2));
  batch.ranks.back().status = "left";
  store.write(batch);
  EXPECT_EQ(store.lastCommonStep(id), 7);
}

TEST_F(RunStoreTest, MissingRunHasNoRowAndNoSummary) {
  RunStore store(dbPath());
  EXPECT_FALSE(store.run(12345));
  EXPECT_FALSE(store.summary(12345));
  EXPECT_TRUE(store.listRuns().empty());
}

// --- rename and delete ----------------------------------------------------------------------

TEST_F(RunStoreTest, DeleteCascadesToEveryTable) {
  RunStore store(dbPath());
  const int64_t gone = store.createRun(exampleRun("gone"));
  const int64_t kept = store.createRun(exampleRun("kept"));
  for (int64_t id : {gone, kept}) {
    RecordBatch batch;
    batch.ranks = {exampleRank(id, 0)};
    batch.steps = {exampleStep(id, 0, 1), exampleStep(id, 0, 2)};
    batch.evals = {exampleEval(id, 0, 2, 0.5, 0.5)};
    batch.events = {exampleEvent(id, 0, 2, "log", "x")};
    store.write(batch);
    RawFile(dbPath()).exec(
        "INSERT INTO spans (run_id, rank, step, phase, start_ns, end_ns) "
        "VALUES (" +
        std::to_string(id) + ", 0, 1, 'forward', 10, 20)");
  }
  store.deleteRun(gone);
  EXPECT_FALSE(store.run(gone));
  RawFile raw(dbPath());
  for (const char* table : {"runs", "ranks", "steps", "evals", "events", "spans"}) {
    const std::string column = std::string(table) == "runs" ? "id" : "run_id";
    const std::string count = std::string("SELECT COUNT(*) FROM ") + table + " WHERE " + column;
    EXPECT_EQ(raw.integer(count + " = " + std::to_string(gone)), 0) << table;
    EXPECT_GT(raw.integer(count + " = " + std::to_string(kept)), 0) << table;
  }
}

TEST_F(RunStoreTest, IdsAreNotReusedAfterDelete) {
  RunStore store(dbPath());
  const int64_t first = store.createRun(exampleRun("first"));
  const int64_t second = store.createRun(exampleRun("second"));
  store.deleteRun(second);
  const int64_t third = store.createRun(exampleRun("third"));
  EXPECT_GT(third, second);
  std::vector<RunRow> runs = store.listRuns();  // newest first
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, third);
  EXPECT_EQ(runs[0].name, "third");
  EXPECT_EQ(runs[1].id, first);
}

TEST_F(RunStoreTest, RenameChangesOnlyTheName) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun("old"));
  RunRow before = *store.run(id);
  store.renameRun(id, "new name");
  RunRow after = *store.run(id);
  EXPECT_EQ(after.name, "new name");
  before.name = "new name";
  expectSame(after, before);
}

TEST_F(RunStoreTest, MissingIdIsAnErrorNamingIt) {
  RunStore store(dbPath());
  store.createRun(exampleRun());
  expectStoreError([&] { store.renameRun(777, "x"); }, {dbPath(), "rename run", "777"});
  expectStoreError([&] { store.deleteRun(778); }, {dbPath(), "delete run", "778"});
  expectStoreError([&] { store.finishRun(779, "done", 1, 1); }, {dbPath(), "finish run", "779"});
}

}  // namespace
}  // namespace ranklab
