// Run store tests: every test works on a real SQLite file in its own temporary folder.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
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

namespace ranklab {
namespace {

namespace fs = std::filesystem;

// --- helpers -------------------------------------------------------------------------------

// A second, raw connection: sees the file the way a user's sqlite3 or pandas would.
class RawFile {
 public:
  explicit RawFile(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
        SQLITE_OK)
      ADD_FAILURE() << "open " << path << ": " << sqlite3_errmsg(db_);
  }
  ~RawFile() { sqlite3_close_v2(db_); }

  void exec(const std::string& sql) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK)
      ADD_FAILURE() << sql << ": " << (message ? message : "?");
    sqlite3_free(message);
  }

  // First column of the first row, as text ("" when there is no row).
  std::string text(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    std::string result;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
      return result;
    }
    if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0))
      result = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    return result;
  }
  int64_t integer(const std::string& sql) { return std::stoll(text(sql)); }

 private:
  sqlite3* db_ = nullptr;
};

NewRun exampleRun(const std::string& name = "ring-fp16") {
  NewRun run;
  run.name = name;
  run.job_path = "/home/ada/jobs/ring.toml";
  run.job_toml = "[train]\nepochs = 3\n# quote ' and \"double\" survive\n";
  run.world = 4;
  run.strategy = "allreduce";
  run.algorithm = "ring";
  run.codec = "fp16";
  run.amp = "bf16";
  run.epochs = 3;
  return run;
}

// Every field differs and depends on (rank, step), so a swapped column shows.
StepRow exampleStep(int64_t run_id, int rank, int64_t step) {
  StepRow s;
  s.run_id = run_id;
  s.rank = rank;
  s.step = step;
  s.epoch = static_cast<int>(step / 100);
  s.samples = 32 + rank;
  s.data_ns = 1000 + step;
  s.forward_ns = 2000 + step;
  s.backward_ns = 3000 + step;
  s.compress_ns = 400 + step;
  s.comm_ns = 5000 + step;
  s.wait_ns = 600 + step;
  s.update_ns = 700 + step;
  s.loss = 2.5 / static_cast<double>(step + 1) + rank * 1e-3;
  s.bytes_tx = 1'000'000 + step;
  s.bytes_rx = 2'000'000 + step;
  s.bytes_raw = 4'000'000 + step;
  s.lr = 0.1 * (1.0 - static_cast<double>(step) / 1e5);
  s.loss_scale = 65536.0 / static_cast<double>(1 + step % 3);
  s.overflow = step % 7 == 3;
  s.staleness = static_cast<int>(step % 4);
  s.time_ns = 1'000'000'000LL * step + rank;
  return s;
}

RankRow exampleRank(int64_t run_id, int rank) {
  RankRow r;
  r.run_id = run_id;
  r.rank = rank;
  r.host = "node" + std::to_string(rank % 2);
  r.pid = 4000 + rank;
  r.status = "running";
  r.exit_status = 0;
  r.train_ns = 0;
  r.seq_gaps = 0;
  r.last_seq = 0;
  return r;
}

EvalRow exampleEval(int64_t run_id, int rank, int64_t step, double accuracy, double loss) {
  EvalRow e;
  e.run_id = run_id;
  e.rank = rank;
  e.step = step;
  e.epoch = static_cast<int>(step / 10);
  e.test_loss = loss;
  e.test_accuracy = accuracy;
  e.time_ns = 77 * step + rank;
  return e;
}

EventRow exampleEvent(int64_t run_id, int rank, int64_t step, std::string kind, std::string text) {
  EventRow e;
  e.run_id = run_id;
  e.rank = rank;
  e.step = step;
  e.kind = std::move(kind);
  e.text = std::move(text);
  e.time_ns = 1000 * step + rank;
  return e;
}

void expectSame(const RunRow& a, const RunRow& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.created, b.created);
  EXPECT_EQ(a.finished, b.finished);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.job_path, b.job_path);
  EXPECT_EQ(a.job_toml, b.job_toml);
  EXPECT_EQ(a.world, b.world);
  EXPECT_EQ(a.strategy, b.strategy);
  EXPECT_EQ(a.algorithm, b.algorithm);
  EXPECT_EQ(a.codec, b.codec);
  EXPECT_EQ(a.amp, b.amp);
  EXPECT_EQ(a.epochs, b.epochs);
  EXPECT_EQ(a.wall_s, b.wall_s);
  EXPECT_EQ(a.train_s, b.train_s);
}

void expectSame(const RankRow& a, const RankRow& b) {
  EXPECT_EQ(a.run_id, b.run_id);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.host, b.host);
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.exit_status, b.exit_status);
  EXPECT_EQ(a.train_ns, b.train_ns);
  EXPECT_EQ(a.seq_gaps, b.seq_gaps);
  EXPECT_EQ(a.last_seq, b.last_seq);
}

void expectSame(const StepRow& a, const StepRow& b) {
  SCOPED_TRACE("rank " + std::to_string(a.rank) + " step " + std::to_string(a.step));
  EXPECT_EQ(a.run_id, b.run_id);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.epoch, b.epoch);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_EQ(a.data_ns, b.data_ns);
  EXPECT_EQ(a.forward_ns, b.forward_ns);
  EXPECT_EQ(a.backward_ns, b.backward_ns);
  EXPECT_EQ(a.compress_ns, b.compress_ns);
  EXPECT_EQ(a.comm_ns, b.comm_ns);
  EXPECT_EQ(a.wait_ns, b.wait_ns);
  EXPECT_EQ(a.update_ns, b.update_ns);
  EXPECT_EQ(a.loss, b.loss);  // REAL is an IEEE double: exact round trip
  EXPECT_EQ(a.bytes_tx, b.bytes_tx);
  EXPECT_EQ(a.bytes_rx, b.bytes_rx);
  EXPECT_EQ(a.bytes_raw, b.bytes_raw);
  EXPECT_EQ(a.lr, b.lr);
  EXPECT_EQ(a.loss_scale, b.loss_scale);
  EXPECT_EQ(a.overflow, b.overflow);
  EXPECT_EQ(a.staleness, b.staleness);
  EXPECT_EQ(a.time_ns, b.time_ns);
}

void expectSame(const EvalRow& a, const EvalRow& b) {
  EXPECT_EQ(a.run_id, b.run_id);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.epoch, b.epoch);
  EXPECT_EQ(a.test_loss, b.test_loss);
  EXPECT_EQ(a.test_accuracy, b.test_accuracy);
  EXPECT_EQ(a.time_ns, b.time_ns);
}

void expectSame(const EventRow& a, const EventRow& b) {
  EXPECT_EQ(a.run_id, b.run_id);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.time_ns, b.time_ns);
}

template <typename Row>
void expectSameRows(const std::vector<Row>& actual, const std::vector<Row>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) expectSame(actual[i], expected[i]);
}

// Throws StoreError whose message contains every one of `parts`.
template <typename F>
void expectStoreError(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "expected a StoreError";
  } catch (const StoreError& e) {
    for (const std::string& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "message \"" << e.what() << "\" lacks \"" << part << "\"";
  }
}

const std::regex kIsoUtc(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)");

class RunStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "ranklab-storage-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string dbPath() const { return (dir_ / "runs.db").string(); }

  fs::path dir_;
};

// --- opening and migrating ------------------------------------------------------------------

TEST_F(RunStoreTest, NewFileIsCreatedWithFoldersAndMigrated) {
  const std::string path = (dir_ / "a" / "b" / "runs.db").string();
  { RunStore store(path); }
  ASSERT_TRUE(fs::exists(path));
  RawFile raw(path);
  EXPECT_EQ(raw.integer("PRAGMA user_version"), RunStore::kSchemaVersion);
  EXPECT_EQ(raw.text("PRAGMA journal_mode"), "wal");
  for (const char* table : {"runs", "ranks", "steps", "evals", "events", "spans"})
    EXPECT_EQ(raw.integer(std::string("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' "
                                      "AND name = '") +
                          table + "'"),
              1)
        << table;
}

TEST_F(RunStoreTest, ExistingEmptySqliteFileIsMigratedFromVersionZero) {
  {
    RawFile raw(dbPath());
    raw.exec("CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('mine')");
    EXPECT_EQ(raw.integer("PRAGMA user_version"), 0);
  }
  { RunStore store(dbPath()); }
  RawFile raw(dbPath());
  EXPECT_EQ(raw.integer("PRAGMA user_version"), RunStore::kSchemaVersion);
  EXPECT_EQ(raw.text("SELECT t FROM notes"), "mine");
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM runs"), 0);
}

TEST_F(RunStoreTest, NewerSchemaIsRefused) {
  const int newer = RunStore::kSchemaVersion + 1;
  { RawFile(dbPath()).exec("PRAGMA user_version = " + std::to_string(newer)); }
  expectStoreError([&] { RunStore store(dbPath()); }, {dbPath(), "newer ranklab"});
  RawFile raw(dbPath());
  EXPECT_EQ(raw.integer("PRAGMA user_version"), newer);  // left untouched
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM sqlite_master"), 0);
}

TEST_F(RunStoreTest, GarbageFileIsRefusedNamingTheFile) {
  const std::string text = "this is a text file, not a database\n";
  { std::ofstream(dbPath()) << text << text << text; }
  expectStoreError([&] { RunStore store(dbPath()); }, {dbPath(), "not a database"});
  std::ifstream in(dbPath());
  const std::string after((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(after, text + text + text);
}

TEST_F(RunStoreTest, FolderInPlaceOfFileIsRefused) {
  fs::create_directories(dir_ / "runs.db");
  expectStoreError([&] { RunStore store(dbPath()); }, {dbPath()});
}

TEST_F(RunStoreTest, ParentThatIsAFileIsRefused) {
  { std::ofstream(dir_ / "plain") << "x"; }
  const std::string path = (dir_ / "plain" / "runs.db").string();
  expectStoreError([&] { RunStore store(path); }, {path, "create folder"});
}

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

TEST_F(RunStoreTest, MissingRunHasNoRowAndNoSummary) {
  RunStore store(dbPath());
  EXPECT_FALSE(store.run(12345));
  EXPECT_FALSE(store.summary(12345));
  EXPECT_TRUE(store.listRuns().empty());
}

// --- whole file ------------------------------------------------------------------------------

TEST_F(RunStoreTest, ReopenKeepsEverything) {
  RecordBatch batch;
  int64_t id = 0;
  RunRow before;
  {
    RunStore store(dbPath());
    id = store.createRun(exampleRun());
    batch.ranks = {exampleRank(id, 0), exampleRank(id, 1)};
    for (int64_t k = 1; k <= 5; ++k)
      for (int r = 0; r < 2; ++r) batch.steps.push_back(exampleStep(id, r, k));
    batch.evals = {exampleEval(id, 0, 5, 0.75, 0.5)};
    batch.events = {exampleEvent(id, 1, 3, "fault", "injected")};
    store.write(batch);
    store.finishRun(id, "stopped", 3.5, 2.5);
    before = *store.run(id);
  }
  RunStore store(dbPath());
  ASSERT_EQ(store.listRuns().size(), 1u);
  expectSame(store.listRuns()[0], before);
  expectSameRows(store.ranks(id), batch.ranks);
  std::vector<StepRow> steps = batch.steps;
  std::sort(steps.begin(), steps.end(),
            [](const StepRow& a, const StepRow& b) { return a.rank < b.rank; });
  expectSameRows(store.steps(id), steps);
  expectSameRows(store.evals(id), batch.evals);
  expectSameRows(store.events(id), batch.events);
  EXPECT_EQ(store.summary(id)->test_accuracy, 0.75);
}

TEST_F(RunStoreTest, SecondStoreOnSameFileSeesWrites) {
  RunStore writer(dbPath());
  RunStore reader(dbPath());
  const int64_t id = writer.createRun(exampleRun());
  RecordBatch batch;
  batch.steps = {exampleStep(id, 0, 1)};
  writer.write(batch);
  expectSameRows(reader.steps(id), batch.steps);
}

// A view opening the file while the launcher holds the write lock waits instead of failing.
TEST_F(RunStoreTest, OpeningWhileAnotherConnectionWritesWaitsForTheLock) {
  RunStore writer(dbPath());
  const int64_t id = writer.createRun(exampleRun());
  std::atomic<bool> done{false};
  std::thread writing([&] {
    for (int64_t k = 0; k < 200; ++k) {
      RecordBatch batch;
      for (int r = 0; r < 4; ++r) batch.steps.push_back(exampleStep(id, r, k));
      writer.write(batch);
    }
    done = true;
  });
  int opened = 0;
  std::string failure;
  while (!done && failure.empty()) {
    try {
      RunStore reader(dbPath());
      reader.listRuns();
      ++opened;
    } catch (const StoreError& e) {
      failure = e.what();
    }
  }
  writing.join();
  EXPECT_EQ(failure, "") << "after " << opened << " opens";
}

// Two processes creating the same new file at once (launcher and workbench) both succeed.
TEST_F(RunStoreTest, ConcurrentFirstOpensOfANewFileBothSucceed) {
  for (int attempt = 0; attempt < 40; ++attempt) {
    const std::string path = (dir_ / ("new-" + std::to_string(attempt) + ".db")).string();
    std::string failures;
    std::mutex mutex;
    auto open = [&] {
      try {
        RunStore store(path);
        store.listRuns();
      } catch (const StoreError& e) {
        std::lock_guard lock(mutex);
        failures += std::string(e.what()) + "\n";
      }
    };
    std::thread a(open), b(open), c(open);
    a.join();
    b.join();
    c.join();
    ASSERT_EQ(failures, "") << "attempt " << attempt;
  }
}

TEST_F(RunStoreTest, TenThousandStepsInOneBatch) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun());
  RecordBatch batch;
  for (int64_t k = 0; k < 2500; ++k)
    for (int r = 0; r < 4; ++r) batch.steps.push_back(exampleStep(id, r, k));
  const auto start = std::chrono::steady_clock::now();
  store.write(batch);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("write_10000_steps_ms", std::to_string(ms));
  std::printf("wrote 10000 steps in %.1f ms\n", ms);  // one transaction: tens of ms, not seconds
  EXPECT_EQ(store.steps(id).size(), 10000u);
  EXPECT_EQ(store.summary(id)->steps, 2500);
}

TEST_F(RunStoreTest, FailingBatchWritesNothing) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun());
  RecordBatch batch;
  batch.ranks = {exampleRank(id, 0)};
  for (int64_t k = 0; k < 10000; ++k) batch.steps.push_back(exampleStep(id, 0, k));
  batch.evals = {exampleEval(id, 0, 1, 0.5, 0.5)};
  batch.events = {exampleEvent(id, 0, 1, "log", "fine"),
                  exampleEvent(id + 1000, 0, 1, "log", "no such run")};
  expectStoreError([&] { store.write(batch); }, {dbPath(), "FOREIGN KEY"});
  EXPECT_TRUE(store.ranks(id).empty());
  EXPECT_TRUE(store.steps(id).empty());
  EXPECT_TRUE(store.evals(id).empty());
  EXPECT_TRUE(store.events(id).empty());

  // The failed transaction was rolled back; the store goes on working.
  batch.events.pop_back();
  ASSERT_NO_THROW(store.write(batch));
  EXPECT_EQ(store.steps(id).size(), 10000u);
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
    RawFile(dbPath()).exec("INSERT INTO spans VALUES (" + std::to_string(id) +
                           ", 0, 1, 'forward', 10, 20)");
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

// --- default path ---------------------------------------------------------------------------

class DefaultPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    save("XDG_DATA_HOME", xdg_);
    save("HOME", home_);
  }
  void TearDown() override {
    restore("XDG_DATA_HOME", xdg_);
    restore("HOME", home_);
  }

 private:
  static void save(const char* name, std::optional<std::string>& slot) {
    if (const char* value = std::getenv(name)) slot = value;
  }
  static void restore(const char* name, const std::optional<std::string>& slot) {
    if (slot)
      setenv(name, slot->c_str(), 1);
    else
      unsetenv(name);
  }
  std::optional<std::string> xdg_, home_;
};

TEST_F(DefaultPathTest, UsesXdgDataHomeWhenSet) {
  setenv("XDG_DATA_HOME", "/data/ada", 1);
  setenv("HOME", "/home/ada", 1);
  EXPECT_EQ(RunStore::defaultPath(), "/data/ada/ranklab/runs.db");
}

TEST_F(DefaultPathTest, FallsBackToHomeWhenXdgIsEmptyOrUnset) {
  setenv("HOME", "/home/ada", 1);
  setenv("XDG_DATA_HOME", "", 1);
  EXPECT_EQ(RunStore::defaultPath(), "/home/ada/.local/share/ranklab/runs.db");
  unsetenv("XDG_DATA_HOME");
  EXPECT_EQ(RunStore::defaultPath(), "/home/ada/.local/share/ranklab/runs.db");
}

}  // namespace
}  // namespace ranklab
