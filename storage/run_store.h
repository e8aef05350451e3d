// The SQLite run store: one file holds every run. Schema in docs/schema.md.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "storage/launcher_identity.h"
#include "storage/records.h"
#include "storage/store_error.h"

struct sqlite3;

namespace ranklab {

// Where a whole run's rows go while RunStore::storeWholeRun writes it; each is stamped with
// the run's id.
class RunRowSink {
 public:
  virtual ~RunRowSink() = default;
  virtual void add(RankRow row) = 0;  // upserted by rank
  virtual void add(StepRow row) = 0;
  virtual void add(SpanRow row) = 0;
};

// How a run stored whole ended (finishRun's fields).
struct RunEnd {
  std::string status = "done";
  double wall_s = 0, train_s = 0;
};

class RunStore {
 public:
  static constexpr int kSchemaVersion = 18;

  // Opens (creating folders and file as needed), migrates forward to kSchemaVersion and
  // marks `lost` the runs still `running` whose launcher on this host is gone.
  // A RunStore is used by one thread at a time; each thread opens its own.
  // A file that is not SQLite is a StoreError. On a full disk the file is opened read-only
  // (readOnlyReason says so, and whether marking lost runs was deferred). A file of a newer schema
  // (a newer ranklab only adds tables and columns) is opened read-only: every read works, every
  // write is a StoreError saying why; one this ranklab cannot read at all is a NewerSchemaError.
  explicit RunStore(const std::string& path);
  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  // $XDG_DATA_HOME/ranklab/runs.db, else ~/.local/share/ranklab/runs.db.
  static std::string defaultPath();

  const std::string& path() const { return path_; }
  // Why the file is read-only ("" when it is not).
  const std::string& readOnlyReason() const { return read_only_; }

  int64_t createRun(const NewRun& run);
  // A finished run (an import) stored whole, in one transaction: its row, the rows `fill`
  // hands the sink, the end `fill` returns and its step bins. No reader sees any of it
  // before it is all there; an exception, a signal or a kill while `fill` runs leaves
  // nothing (SQLite rolls the transaction back). Returns the run's id.
  int64_t storeWholeRun(const NewRun& run, const std::function<RunEnd(RunRowSink&)>& fill);
  void write(const RecordBatch& batch);  // one transaction
  // Also sums the run's steps into step_bins (summariseSteps), in the same transaction.
  void finishRun(int64_t run_id, const std::string& status, double wall_s, double train_s);
  void renameRun(int64_t run_id, const std::string& name);
  // Where the run's batch job is in its scheduler's queue (Slurm), as last read.
  void setSchedulerState(int64_t run_id, const SchedulerRecord& record);
  // Deletes the run's steps, spans and evaluations after `step` (a restart from the
  // checkpoint at `step` trains them again); returns the step rows removed.
  int64_t rollBack(int64_t run_id, int64_t step);
  // Runs still `running` whose launcher (on this host) has exited without finishing them:
  // marked `lost`, with a `lost` event, their step bins summed. Returns their ids.
  std::vector<int64_t> markLostRuns();
  // A `lost` run whose ranks still run elsewhere (a Slurm job) taken over by this process as
  // its launcher: `running` again. False when it is not lost (another took it first).
  bool adoptRun(int64_t run_id);
  void deleteRun(int64_t run_id);  // the run, all its rows and its console (consolePath)
  // The run `who` launched (a launcher process runs one run), if it has created it yet.
  std::optional<int64_t> runLaunchedBy(const LauncherIdentity& who);
  // Which process launched the run (pid 0 for runs stored before schema 10).
  std::optional<LauncherIdentity> launcherOf(int64_t run_id);

  std::vector<RunRow> listRuns();  // newest first
  std::optional<RunRow> run(int64_t run_id);
  std::optional<RunSummary> summary(int64_t run_id);
  std::vector<RankRow> ranks(int64_t run_id);
  std::vector<StepRow> steps(int64_t run_id);  // ordered by rank, step
  std::vector<EvalRow> evals(int64_t run_id);  // ordered by step, rank
  std::vector<EventRow> events(int64_t run_id);
  std::vector<ServerLoadRow> serverLoads(int64_t run_id);  // ordered by rank, time
  // The rows stored after row `after` (0: all), in the order stored; moves `after` on to
  // the last one returned (how a follower of a running run reads only what is new).
  std::vector<ServerLoadRow> serverLoadsAfter(int64_t run_id, int64_t& after);
  std::vector<SpanRow> spans(int64_t run_id);  // ordered by rank, start

  // For the workbench's views (run_queries.cpp).
  void setTags(int64_t run_id, const std::vector<std::string>& tags);  // replaces them
  std::map<int64_t, std::vector<std::string>> tags();                  // every run's, sorted
  // Every step of a run in (rank, step) order without holding them all in memory.
  void forEachStep(int64_t run_id, const std::function<void(const StepRow&)>& visit);
  // Only ranks first_rank..last_rank (so several threads can read one run).
  void forEachStep(int64_t run_id, int first_rank, int last_rank,
                   const std::function<void(const StepRow&)>& visit);
  // The last step every rank still in the run has stored (-1: none yet): where a live
  // timeline can end. A rank that left (elastic) is not waited for.
  int64_t lastCommonStep(int64_t run_id);
  // Steps first_step..last_step of every rank, ordered by rank, step (the timeline window).
  std::vector<StepRow> stepsBetween(int64_t run_id, int64_t first_step, int64_t last_step);

  // Step bins (step_bins.cpp). Replaces the run's bins: each rank's steps summed in bins of
  // stepBinWidth() steps, aligned on multiples of it.
  void summariseSteps(int64_t run_id);
  std::vector<StepBin> stepBins(int64_t run_id);  // ordered by rank, first_step; may be none
  // One rank's steps from first_step on, in order (the part of a run a view reads row by row).
  std::vector<StepRow> stepsOfRankFrom(int64_t run_id, int rank, int64_t first_step);
  // Each rank's steps from its own first step not read yet (`first_steps`: rank → step), in
  // rank then step order, through one statement: a follower of 1,024 ranks asks every poll.
  void forEachStepFrom(int64_t run_id, const std::map<int, int64_t>& first_steps,
                       const std::function<void(const StepRow&)>& visit);
  // Bins per rank at most (one more when the steps do not start on a bin boundary).
  static constexpr int64_t kStepBinsPerRank = 1000;
  // Bins in a run at most, down to kFewestStepBinsPerRank per rank: a workbench opens a run
  // of 1,024 ranks from 128,000 bins, not a million.
  static constexpr int64_t kStepBinsPerRun = 128'000;
  static constexpr int64_t kFewestStepBinsPerRank = 64;
  // The smallest power of two that keeps `steps` steps of each of `ranks` ranks within
  // those budgets.
  static int64_t stepBinWidth(int64_t steps, int64_t ranks = 1);

 private:
  // An ended run's digests, inside the caller's transaction: its step bins and rank totals.
  void writeRunDigest(int64_t run_id);
  void writeStepBins(int64_t run_id);
  void writeRankTotals(int64_t run_id);
  void openReadOnly(const NewerSchemaError& why);
  void openOnFullDisk(const StoreError& why);
  // Runs still `running` whose launcher is gone (what markLostRuns marks).
  std::vector<std::pair<int64_t, LauncherIdentity>> runsToMarkLost();
  void requireWritable(const char* op) const;  // a StoreError naming read_only_

  struct Statements;
  std::string path_;
  std::string read_only_;
  std::set<int64_t> lost_unmarked_;  // a full disk: runs to mark lost once it can be written
  RunRow shownAsLost(RunRow row) const;
  sqlite3* db_ = nullptr;
  std::unique_ptr<Statements> stmts_;
};

// Where a launch from the workbench keeps its job text and its launcher's console: a folder
// beside the store; the console of run ID is `run-ID.log` in it.
std::string launchFolder(const std::string& db_path);
std::string consolePath(const std::string& db_path, int64_t run_id);

}  // namespace ranklab
