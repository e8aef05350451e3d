// Run store tests on the file itself: creating, migrating and refusing files, reopening,
// several connections at once, and the default path.
#include <gtest/gtest.h>
#include <sqlite3.h>

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
#include "tests/unit/storage_test_support.h"

namespace ranklab {
namespace {

using namespace storage_test;  // NOLINT: the shared examples and comparisons
namespace fs = std::filesystem;

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

// A newer ranklab's file that holds none of our tables cannot even be read: refused.
TEST_F(RunStoreTest, NewerSchemaIsRefused) {
  const int newer = RunStore::kSchemaVersion + 1;
  { RawFile(dbPath()).exec("PRAGMA user_version = " + std::to_string(newer)); }
  expectStoreError([&] { RunStore store(dbPath()); },
                   {dbPath(), "newer ranklab", "cannot read it"});
  RawFile raw(dbPath());
  EXPECT_EQ(raw.integer("PRAGMA user_version"), newer);  // left untouched
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM sqlite_master"), 0);
}

// A newer ranklab's file (it only adds tables and columns) opens read-only: its runs read
// as before, every write is refused saying why, and nothing in the file changes.
TEST_F(RunStoreTest, NewerSchemaOpensReadOnlyAndIsNeverWritten) {
  const int newer = RunStore::kSchemaVersion + 1;
  {
    RunStore store(dbPath());
    store.createRun(exampleRun("from-the-future"));
  }
  {
    RawFile raw(dbPath());
    raw.exec(
        "ALTER TABLE runs ADD COLUMN future INTEGER NOT NULL DEFAULT 7; PRAGMA user_version = " +
        std::to_string(newer));
  }
  RunStore store(dbPath());
  EXPECT_NE(store.readOnlyReason().find("newer ranklab"), std::string::npos);
  ASSERT_EQ(store.listRuns().size(), 1u);
  EXPECT_EQ(store.listRuns()[0].name, "from-the-future");
  EXPECT_TRUE(store.summary(1));
  expectStoreError([&] { store.createRun(exampleRun()); },
                   {dbPath(), "newer ranklab", "read-only", "cannot store a new run"});
  expectStoreError([&] { store.renameRun(1, "x"); }, {"read-only", "cannot rename a run"});
  expectStoreError([&] { store.deleteRun(1); }, {"read-only", "cannot delete a run"});
  RawFile raw(dbPath());
  EXPECT_EQ(raw.integer("PRAGMA user_version"), newer);
  EXPECT_EQ(raw.integer("SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(raw.text("SELECT name FROM runs"), "from-the-future");
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
  expectStoreError([&] { RunStore store(dbPath()); }, {dbPath(), "is a folder; pass a file"});
}

TEST_F(RunStoreTest, ParentThatIsAFileIsRefused) {
  { std::ofstream(dir_ / "plain") << "x"; }
  const std::string path = (dir_ / "plain" / "runs.db").string();
  expectStoreError([&] { RunStore store(path); }, {path, "create folder"});
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
