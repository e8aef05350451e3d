// Shared by the run store tests: example rows, field-by-field comparisons, a raw SQLite
// connection and a fixture that gives every test its own temporary folder.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <initializer_list>
#include <regex>
#include <string>
#include <vector>

#include "storage/run_store.h"

namespace ranklab::storage_test {

namespace fs = std::filesystem;

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

inline NewRun exampleRun(const std::string& name = "ring-fp16") {
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
inline StepRow exampleStep(int64_t run_id, int rank, int64_t step) {
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
  s.mem_params = 4'000'000 + rank;
  s.mem_grads = 2'000'000 + rank;
  s.mem_optimizer = 8'000'000 + rank;
  s.mem_activations = 100'000 + step;
  s.mem_buffers = 40'000 + step;
  s.reduce_scatters = 1 + step % 3;
  s.all_gathers = 1;
  s.sends = step % 5;
  s.time_ns = 1'000'000'000LL * step + rank;
  return s;
}

inline RankRow exampleRank(int64_t run_id, int rank) {
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

inline EvalRow exampleEval(int64_t run_id, int rank, int64_t step, double accuracy, double loss) {
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

inline EventRow exampleEvent(int64_t run_id, int rank, int64_t step, std::string kind,
                             std::string text) {
  EventRow e;
  e.run_id = run_id;
  e.rank = rank;
  e.step = step;
  e.kind = std::move(kind);
  e.text = std::move(text);
  e.time_ns = 1000 * step + rank;
  return e;
}

inline void expectSame(const RunRow& a, const RunRow& b) {
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

inline void expectSame(const RankRow& a, const RankRow& b) {
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

// What a step row and a bin of steps (StepBin) both hold: the epoch, the samples and each
// phase's time (a bin's being its steps' sums).
template <typename StepOrBin>
inline void expectSamePhases(const StepOrBin& a, const StepOrBin& b) {
  EXPECT_EQ(a.epoch, b.epoch);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_EQ(a.data_ns, b.data_ns);
  EXPECT_EQ(a.forward_ns, b.forward_ns);
  EXPECT_EQ(a.backward_ns, b.backward_ns);
  EXPECT_EQ(a.compress_ns, b.compress_ns);
  EXPECT_EQ(a.comm_ns, b.comm_ns);
  EXPECT_EQ(a.wait_ns, b.wait_ns);
  EXPECT_EQ(a.update_ns, b.update_ns);
}

inline void expectSame(const StepRow& a, const StepRow& b) {
  SCOPED_TRACE("rank " + std::to_string(a.rank) + " step " + std::to_string(a.step));
  EXPECT_EQ(a.run_id, b.run_id);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.step, b.step);
  expectSamePhases(a, b);
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

inline void expectSame(const EvalRow& a, const EvalRow& b) {
  EXPECT_EQ(a.run_id, b.run_id);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.epoch, b.epoch);
  EXPECT_EQ(a.test_loss, b.test_loss);
  EXPECT_EQ(a.test_accuracy, b.test_accuracy);
  EXPECT_EQ(a.time_ns, b.time_ns);
}

inline void expectSame(const EventRow& a, const EventRow& b) {
  EXPECT_EQ(a.run_id, b.run_id);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.time_ns, b.time_ns);
}

template <typename Row>
inline void expectSameRows(const std::vector<Row>& actual, const std::vector<Row>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) expectSame(actual[i], expected[i]);
}

// Throws StoreError whose message contains every one of `parts`.
template <typename F>
inline void expectStoreError(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "expected a StoreError";
  } catch (const StoreError& e) {
    for (const std::string& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "message \"" << e.what() << "\" lacks \"" << part << "\"";
  }
}

inline const std::regex kIsoUtc(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)");

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

}  // namespace ranklab::storage_test
