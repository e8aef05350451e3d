// Parts of a run's life that rewrite the store: a restart's roll-back, and runs whose
// launcher died without finishing them (found and marked `lost` when the store is opened).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "storage/run_store.h"
#include "tests/unit/storage_test_support.h"

namespace ranklab {
namespace {

using namespace storage_test;  // NOLINT: the shared examples and comparisons

TEST_F(RunStoreTest, RollBackRemovesTheStepsSpansAndEvalsAfterTheStep) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun());
  RecordBatch batch;
  for (int rank = 0; rank < 2; ++rank) {
    for (int64_t step = 1; step <= 10; ++step) batch.steps.push_back(exampleStep(id, rank, step));
    batch.evals.push_back(exampleEval(id, rank, 5, 0.5, 1.0));
    batch.evals.push_back(exampleEval(id, rank, 10, 0.6, 0.9));
    batch.spans.push_back({id, rank, 8, "checkpoint", 1, 2});
  }
  batch.events.push_back(exampleEvent(id, 1, 9, "fault", "kill"));
  store.write(batch);

  EXPECT_EQ(store.rollBack(id, 6), 8);
  EXPECT_EQ(store.steps(id).size(), 12u);
  for (const auto& s : store.steps(id)) EXPECT_LE(s.step, 6);
  EXPECT_EQ(store.evals(id).size(), 2u);
  EXPECT_TRUE(store.spans(id).empty());
  EXPECT_EQ(store.events(id).size(), 1u) << "events are history: a roll-back keeps them";
}

TEST_F(RunStoreTest, ACommunicationPieceKeepsItsHopPeerChunkAndBytes) {
  RunStore store(dbPath());
  const int64_t id = store.createRun(exampleRun());
  RecordBatch batch;
  batch.spans.push_back({id, 2, 50, "ring-ag", 100, 180, 4, 3, 1, 235148});
  batch.spans.push_back({id, 2, 50, "evaluate", 200, 300});
  store.write(batch);
  const std::vector<SpanRow> spans = store.spans(id);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].kind, "ring-ag");
  EXPECT_TRUE(isCommSpan(spans[0]));
  EXPECT_EQ(spans[0].part, 4);
  EXPECT_EQ(spans[0].peer, 3);
  EXPECT_EQ(spans[0].chunk, 1);
  EXPECT_EQ(spans[0].bytes, 235148);
  EXPECT_FALSE(isCommSpan(spans[1]));
  EXPECT_EQ(spans[1].part, -1) << "a span that is no piece has none";
  EXPECT_EQ(spans[1].peer, -1);
}

TEST_F(RunStoreTest, ARunWhoseLauncherExitedIsMarkedLostOnTheNextOpen) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // a launcher that creates a run and dies without finishing it
    RunStore store(dbPath());
    store.createRun(exampleRun("orphan"));
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  RunStore store(dbPath());
  const int64_t mine = store.createRun(exampleRun("mine"));
  const auto orphan = store.run(1);
  ASSERT_TRUE(orphan);
  EXPECT_EQ(orphan->status, "lost");
  EXPECT_FALSE(orphan->finished.empty());
  const auto events = store.events(1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "lost");
  EXPECT_NE(events[0].text.find("pid " + std::to_string(child)), std::string::npos)
      << events[0].text;
  // A run whose launcher lives (this process) is left running, on this open and the next.
  RunStore again(dbPath());
  EXPECT_EQ(again.run(mine)->status, "running");
  EXPECT_TRUE(again.markLostRuns().empty());
}

// A run launched from the workbench has its launcher's console beside the store; deleting the
// run deletes it too, and nothing else there.
TEST_F(RunStoreTest, DeletingARunDeletesItsConsole) {
  RunStore store(dbPath());
  const int64_t first = store.createRun(exampleRun("first"));
  const int64_t second = store.createRun(exampleRun("second"));
  fs::create_directories(launchFolder(dbPath()));
  EXPECT_EQ(consolePath(dbPath(), first), (dir_ / "launches" / "run-1.log").string());
  for (int64_t id : {first, second}) std::ofstream(consolePath(dbPath(), id)) << "console\n";
  store.deleteRun(first);
  EXPECT_FALSE(fs::exists(consolePath(dbPath(), first)));
  EXPECT_TRUE(fs::exists(consolePath(dbPath(), second)));
  store.deleteRun(second);  // and a run without one is deleted all the same
  EXPECT_FALSE(store.run(second));
}

// A recorder killed with SIGKILL in the middle of its writes, 100 times over one file: the
// file passes SQLite's integrity check every time, every batch is there whole or not at
// all, nothing committed earlier is lost, and the killed writer's run is marked lost.
TEST_F(RunStoreTest, AWriterKilledMidWriteNeverDamagesTheFileOrLosesWhatWasCommitted) {
  constexpr int kKills = 100;
  constexpr int kBatchRows = 256;
  std::mt19937 random(20261124);
  int64_t committed = 0;
  // The schema first: a kill in the first open's migration leaves an empty file (the next
  // open migrates it), which is not what this test looks at.
  { RunStore created(dbPath()); }
  for (int kill = 1; kill <= kKills; ++kill) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {  // a recorder writing batches as fast as it can, until it is killed
      try {
        RunStore store(dbPath());
        const int64_t id = store.createRun(exampleRun());
        for (int64_t batch_no = 0;; ++batch_no) {
          RecordBatch batch;
          for (int i = 0; i < kBatchRows; ++i)
            batch.steps.push_back(exampleStep(id, i % 4, batch_no * kBatchRows / 4 + i / 4 + 1));
          store.write(batch);
        }
      } catch (const std::exception& e) {  // never back into the test runner from a child
        std::fprintf(stderr, "writer %d: %s\n", kill, e.what());
      }
      _exit(3);
    }
    usleep(std::uniform_int_distribution<int>(3'000, 15'000)(random));
    ::kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer of kill " << kill << " exited with status "
                                     << WEXITSTATUS(status) << " before it was killed";

    RawFile raw(dbPath());
    ASSERT_EQ(raw.text("PRAGMA integrity_check"), "ok") << "after kill " << kill;
    const int64_t rows = raw.integer("SELECT COUNT(*) FROM steps");
    ASSERT_GE(rows, committed) << "after kill " << kill;
    ASSERT_EQ(raw.integer("SELECT COUNT(*) FROM (SELECT COUNT(*) AS n FROM steps GROUP BY "
                          "run_id HAVING n % " +
                          std::to_string(kBatchRows) + " != 0)"),
              0)
        << "a batch half there after kill " << kill;
    committed = rows;
    { RunStore store(dbPath()); }  // marks the killed writer's run
    ASSERT_EQ(raw.integer("SELECT COUNT(*) FROM runs WHERE status != 'lost'"), 0);
  }
  std::printf("%d kills: integrity ok every time, %lld step rows kept\n", kKills,
              static_cast<long long>(committed));
}

}  // namespace
}  // namespace ranklab
