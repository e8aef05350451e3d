#include "storage/run_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <system_error>

#include "storage/launcher_identity.h"
#include "storage/rank_totals.h"
#include "storage/schema.h"
#include "storage/statement.h"
#include "storage/store_files.h"
#include "storage/store_rows.h"

namespace ranklab {
namespace {

using sqlite::Query;
using sqlite::Statement;
using namespace store_rows;  // NOLINT: the rows' readers and writers

// A NewRun and its launcher; created on the store's clock, status the table's 'running'.
std::string insertRunSql() {
  const std::string columns = columnsOf<NewRun>() + ", launcher_host, launcher_pid, launcher_start";
  return "INSERT INTO runs (created, " + columns +
         ")\nVALUES (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), " + placeholdersFor(columns) + ")";
}

constexpr const char* kFinishRun = R"sql(
UPDATE runs SET status = ?, wall_s = ?, train_s = ?,
                finished = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
WHERE id = ?)sql";

// Each shard over the whole run.
constexpr const char* kServerTotals = R"sql(
SELECT rank, shard, MIN(key_begin), MAX(key_end), SUM(pushes), SUM(pulls), SUM(bytes_rx),
       SUM(bytes_tx), SUM(busy_ns), SUM(idle_ns), MAX(max_staleness),
       SUM(CASE WHEN bytes_raw > 0 THEN bytes_raw ELSE bytes_tx END)
FROM server_loads WHERE run_id = ? GROUP BY rank, shard ORDER BY rank)sql";

// The last evaluation, averaged over the ranks that reported at that step, and whether any
// rank's loss there was not finite (NaN, flagged; or +-inf); NULLs if none.
constexpr const char* kLatestEval = R"sql(
SELECT AVG(test_accuracy), AVG(test_loss), MAX(loss_nan != 0 OR ABS(test_loss) > 1.7e308)
FROM evals
WHERE run_id = ?1 AND step = (SELECT MAX(step) FROM evals WHERE run_id = ?1))sql";

void addRankTotals(Statement& statement, RunSummary& s) {
  Query q(statement);
  q.bind(s.run.id);
  while (q.next()) {
    RankSummary r;
    r.rank = q.integer();
    r.steps = q.int64();
    const int64_t samples = q.int64();
    r.compute_s = static_cast<double>(q.int64()) / 1e9;
    r.comm_s = static_cast<double>(q.int64()) / 1e9;
    r.wait_s = static_cast<double>(q.int64()) / 1e9;
    r.bytes_tx = q.int64();
    r.bytes_raw = q.int64();
    r.overflow_steps = q.int64();
    r.comm_hidden_s = static_cast<double>(q.int64()) / 1e9;
    r.mean_staleness = q.real();
    r.stashed_peak = q.int64();
    r.stashed_bytes_peak = q.int64();
    r.memory = {q.int64(), q.int64(), q.int64(), q.int64()};
    r.collectives = {q.real(), q.real(), q.real(), q.real(), q.real()};
    r.memory.buffers = q.int64();
    r.bytes_tensor = q.int64();
    r.bytes_pipeline = q.int64();
    s.steps = std::max(s.steps, r.steps);
    s.samples += samples;
    s.bytes_tx += r.bytes_tx;
    s.bytes_raw += r.bytes_raw;
    s.overflow_steps = std::max(s.overflow_steps, r.overflow_steps);
    s.ranks.push_back(r);
  }
}

void addServerTotals(Statement& statement, RunSummary& s) {
  Query q(statement);
  q.bind(s.run.id);
  while (q.next()) {
    ServerSummary r;
    r.rank = q.integer();
    r.shard = q.integer();
    r.key_begin = q.int64();
    r.key_end = q.int64();
    r.pushes = q.int64();
    r.pulls = q.int64();
    r.bytes_rx = q.int64();
    r.bytes_tx = q.int64();
    r.busy_s = static_cast<double>(q.int64()) / 1e9;
    r.idle_s = static_cast<double>(q.int64()) / 1e9;
    r.max_staleness = q.int64();
    r.bytes_raw = q.int64();
    s.bytes_tx += r.bytes_tx;
    s.bytes_raw += r.bytes_raw;
    s.servers.push_back(r);
  }
}

void addLatestEval(Statement& statement, RunSummary& s) {
  Query q(statement);
  q.bind(s.run.id);
  if (!q.next() || q.nextIsNull()) return;  // no evaluation yet
  s.test_accuracy = q.real();
  s.test_loss = q.real();
  s.diverged = q.boolean();
  if (s.diverged) s.test_loss = std::numeric_limits<double>::quiet_NaN();
}

constexpr const char* kLatestEvent = R"sql(
SELECT step, text FROM events WHERE run_id = ? AND kind = ? ORDER BY id DESC LIMIT 1)sql";

void addLatestSample(Statement& latest_event, RunSummary& s) {
  Query q(latest_event);
  q.bind(s.run.id, "sample");
  if (!q.next()) return;
  s.sample_step = q.int64();
  s.sample = q.text();
}

// A text run's "bigram baseline 2.4412 nats/token: ..." event, as its number.
void addBigramBaseline(Statement& latest_event, RunSummary& s) {
  Query q(latest_event);
  q.bind(s.run.id, "baseline");
  if (!q.next()) return;
  q.int64();
  const std::string text = q.text(), prefix = "bigram baseline ";
  if (text.rfind(prefix, 0) != 0) return;
  char* end = nullptr;
  const double nats = std::strtod(text.c_str() + prefix.size(), &end);
  if (end != text.c_str() + prefix.size()) s.bigram_baseline = nats;
}

constexpr const char* kRankEvents = R"sql(
SELECT rank, text FROM events WHERE run_id = ? AND kind = ? ORDER BY id)sql";

// Each rank's latest event of `kind`, handed to `take` with the rank's summary.
void addRankEvents(Statement& statement, RunSummary& s, const char* kind,
                   const std::function<void(RankSummary&, const std::string&)>& take) {
  Query q(statement);
  q.bind(s.run.id, kind);
  while (q.next()) {
    const int rank = q.integer();
    const std::string text = q.text();
    for (RankSummary& r : s.ranks)
      if (r.rank == rank) take(r, text);
  }
}

void addRestarts(Statement& count_events, RunSummary& s) {
  Query q(count_events);
  q.bind(s.run.id, "restart");
  if (q.next()) s.restarts = q.int64();
}

void createParentFolders(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) throw sqlite::error(path, "create folder " + parent.string(), ec.message());
}

// A rank's row, inserted or, when (run_id, rank) is there, every other column replaced.
std::string upsertRankSql() {
  std::string updates;
  const RankRow columns;
  visitColumns(columns, [&](const char* name, const auto&) {
    if (std::string_view(name) == "run_id" || std::string_view(name) == "rank") return;
    updates += std::string(updates.empty() ? "" : ", ") + name + " = excluded." + name;
  });
  return insertSql<RankRow>("INSERT", "ranks") + " ON CONFLICT (run_id, rank) DO UPDATE SET " +
         updates;
}

}  // namespace

// Every statement the store runs, prepared once when the file is opened.
struct RunStore::Statements {
  Statements(sqlite3* db, const std::string& file)
      : insertRun(db, file, "insert run", insertRunSql().c_str()),
        finishRun(db, file, "finish run", kFinishRun),
        renameRun(db, file, "rename run", "UPDATE runs SET name = ? WHERE id = ?"),
        setScheduler(db, file, "set scheduler state",
                     "UPDATE runs SET scheduler_job = ?, scheduler_state = ?, scheduler_reason = "
                     "?, nodes = ?, scheduler_exit = ? WHERE id = ?"),
        deleteRun(db, file, "delete run", "DELETE FROM runs WHERE id = ?"),
        listRuns(db, file, "list runs", selectSql<RunRow>("runs", "ORDER BY id DESC").c_str()),
        selectRun(db, file, "read run", selectSql<RunRow>("runs", "WHERE id = ?").c_str()),
        upsertRank(db, file, "upsert rank", upsertRankSql().c_str()),
        replaceStep(db, file, "insert step", replaceStepSql().c_str()),
        replaceEval(db, file, "insert eval",
                    insertSql<EvalRow>("INSERT OR REPLACE", "evals", "loss_nan").c_str()),
        insertEvent(db, file, "insert event", insertSql<EventRow>("INSERT", "events").c_str()),
        selectRanks(db, file, "read ranks",
                    selectSql<RankRow>("ranks", "WHERE run_id = ? ORDER BY rank").c_str()),
        selectSteps(db, file, "read steps",
                    selectStepsSql("run_id = ? ORDER BY rank, step").c_str()),
        selectEvals(db, file, "read evals",
                    selectSql<EvalRow>("evals", "WHERE run_id = ? ORDER BY step, rank", "loss_nan")
                        .c_str()),
        selectEvents(db, file, "read events",
                     selectSql<EventRow>("events", "WHERE run_id = ? ORDER BY id").c_str()),
        rankTotals(db, file, "sum steps per rank", rank_totals::selectSql(false).c_str()),
        storedRankTotals(db, file, "read rank totals", rank_totals::selectSql(true).c_str()),
        hasRankTotals(db, file, "find rank totals", rank_totals::kHasTotals),
        latestEval(db, file, "read latest eval", kLatestEval),
        insertServerLoad(db, file, "insert server load",
                         insertSql<ServerLoadRow>("INSERT", "server_loads").c_str()),
        selectServerLoads(
            db, file, "read server loads",
            selectSql<ServerLoadRow>("server_loads", "WHERE run_id = ? ORDER BY rank, time_ns")
                .c_str()),
        serverTotals(db, file, "sum server loads per shard", kServerTotals),
        insertSpan(db, file, "insert span", insertSql<SpanRow>("INSERT", "spans").c_str()),
        selectSpans(
            db, file, "read spans",
            selectSql<SpanRow>("spans", "WHERE run_id = ? ORDER BY rank, start_ns").c_str()),
        latestEvent(db, file, "read latest event", kLatestEvent),
        rankEvents(db, file, "read each rank's events of a kind", kRankEvents),
        countEvents(db, file, "count events",
                    "SELECT COUNT(*) FROM events WHERE run_id = ? AND kind = ?") {}

  Statement insertRun, finishRun, renameRun, setScheduler, deleteRun, listRuns, selectRun;
  Statement upsertRank, replaceStep, replaceEval, insertEvent;
  Statement selectRanks, selectSteps, selectEvals, selectEvents;
  Statement rankTotals, storedRankTotals, hasRankTotals, latestEval;
  Statement insertServerLoad, selectServerLoads, serverTotals;
  Statement insertSpan, selectSpans;
  Statement latestEvent, rankEvents, countEvents;
};

RunStore::RunStore(const std::string& path) : path_(path) {
  createParentFolders(path_);
  // SQLite would only say "unable to open database file".
  if (std::filesystem::is_directory(path_))
    throw sqlite::error(path_, "open", "is a folder; pass a file, e.g. " + path_ + "/runs.db");
  prepareStoreFiles(path_);
  // One connection per thread (never shared): SQLite's own locking would only cost time.
  constexpr int kFlags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path_.c_str(), &db_, kFlags, nullptr) != SQLITE_OK) {
    StoreError failure = sqlite::error(db_, path_, "open");
    sqlite3_close_v2(db_);  // a handle is returned even on failure
    throw failure;
  }
  try {
    schema::prepare(db_, path_, kSchemaVersion);
    stmts_ = std::make_unique<Statements>(db_, path_);
    markLostRuns();
  } catch (const NewerSchemaError& newer) {
    openReadOnly(newer);
  } catch (const StoreError& failed) {
    if (!sqlite::diskIsFull(db_)) {
      stmts_.reset();
      sqlite3_close_v2(db_);
      throw;
    }
    openOnFullDisk(failed);
  }
}

// Opening writes (WAL files, the schema, runs marked lost): on a full disk the store is
// read without writing a byte, so people can look at their runs when they most need to.
void RunStore::openOnFullDisk(const StoreError& why) {
  stmts_.reset();
  sqlite3_close_v2(db_);
  db_ = nullptr;
  std::string cause = why.what();  // "<path>: <op>: <SQLite's words>"
  if (cause.rfind(path_ + ": ", 0) == 0) cause.erase(0, path_.size() + 2);
  const std::string reason = path_ + ": the disk is full (" + cause +
                             "), so it was opened read-only (free some space to write to it)";
  const std::string wal = path_ + "-wal";
  std::error_code error;
  const bool wal_has_rows = std::filesystem::file_size(wal, error) > 0 && !error;
  // No WAL rows: the file alone is the store, read with no lock and no -shm file. WAL rows:
  // read through an index in this process's memory (no -shm), which needs the file to itself.
  const std::string uri =
      "file:" + sqlite::uriPath(path_) + (wal_has_rows ? "?mode=rw" : "?mode=ro&immutable=1");
  const int flags = SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX |
                    (wal_has_rows ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY);
  if (sqlite3_open_v2(uri.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    sqlite3_close_v2(db_);
    throw StoreError(reason + ", but even that failed");
  }
  try {
    sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    sqlite3_busy_timeout(db_, 5000);
    sqlite::execScript(db_, path_, "read without writing",
                       wal_has_rows ? "PRAGMA locking_mode = EXCLUSIVE; PRAGMA query_only = 1"
                                    : "PRAGMA query_only = 1");
    const int found = schema::version(db_, path_);
    if (found < kSchemaVersion)
      throw StoreError(reason + ", but it is at schema version " + std::to_string(found) +
                       " and must be migrated to " + std::to_string(kSchemaVersion) +
                       " before this ranklab can read it");
    stmts_ = std::make_unique<Statements>(db_, path_);
  } catch (...) {
    stmts_.reset();
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw;
  }
  read_only_ = reason;
  for (const auto& [id, who] : runsToMarkLost()) lost_unmarked_.insert(id);
  if (!lost_unmarked_.empty())
    read_only_ += "; " + std::to_string(lost_unmarked_.size()) +
                  " run(s) whose launcher is gone are shown lost, and marking them so in the "
                  "file was deferred until it can be written";
}

// A newer ranklab's file: read through a read-only connection, never migrated or written.
void RunStore::openReadOnly(const NewerSchemaError& why) {
  sqlite3_close_v2(db_);
  db_ = nullptr;
  if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    sqlite3_close_v2(db_);
    throw why;
  }
  try {
    if (sqlite3_busy_timeout(db_, 5000) != SQLITE_OK) throw why;
    stmts_ = std::make_unique<Statements>(db_, path_);
  } catch (const StoreError& unreadable) {
    stmts_.reset();
    sqlite3_close_v2(db_);
    throw NewerSchemaError(std::string(why.what()) + ", and this one cannot read it (" +
                           unreadable.what() + ")");
  }
  read_only_ = std::string(why.what()) + ": opened read-only";
}

void RunStore::requireWritable(const char* op) const {
  if (!read_only_.empty()) throw StoreError(read_only_ + ", so it cannot " + op);
}

RunStore::~RunStore() {
  stmts_.reset();  // finalize before close
  sqlite3_close_v2(db_);
}

std::string RunStore::defaultPath() {
  const char* data_home = std::getenv("XDG_DATA_HOME");
  if (data_home && *data_home) return std::string(data_home) + "/ranklab/runs.db";
  const char* home = std::getenv("HOME");
  if (!home || !*home)
    throw StoreError(
        "run store: cannot find a default file: neither XDG_DATA_HOME nor HOME is set");
  return std::string(home) + "/.local/share/ranklab/runs.db";
}

int64_t RunStore::createRun(const NewRun& run) {
  requireWritable("store a new run");
  const LauncherIdentity self = thisLauncher();
  writeRow(stmts_->insertRun, run, self.host, self.pid, self.start);
  return sqlite3_last_insert_rowid(db_);
}

namespace {

// The rows of a run being stored whole, written as they come inside its transaction.
class WholeRunSink : public RunRowSink {
 public:
  WholeRunSink(Statement& rank, Statement& step, Statement& span, int64_t run_id)
      : rank_(rank), step_(step), span_(span), run_id_(run_id) {}
  void add(RankRow row) override {
    row.run_id = run_id_;
    writeRank(rank_, row);
  }
  void add(StepRow row) override {
    row.run_id = run_id_;
    writeStep(step_, row);
  }
  void add(SpanRow row) override {
    row.run_id = run_id_;
    writeSpan(span_, row);
  }

 private:
  Statement &rank_, &step_, &span_;
  int64_t run_id_;
};

}  // namespace

int64_t RunStore::storeWholeRun(const NewRun& run, const std::function<RunEnd(RunRowSink&)>& fill) {
  requireWritable("store a new run");
  sqlite::Transaction transaction(db_, path_, "store a whole run");
  const int64_t id = createRun(run);
  WholeRunSink sink(stmts_->upsertRank, stmts_->replaceStep, stmts_->insertSpan, id);
  const RunEnd end = fill(sink);
  Query(stmts_->finishRun).bind(end.status, end.wall_s, end.train_s, id).run();
  writeRunDigest(id);
  transaction.commit();
  return id;
}

void RunStore::write(const RecordBatch& batch) {
  requireWritable("write records");
  if (batch.empty()) return;
  sqlite::Transaction transaction(db_, path_, "write batch");
  for (const RankRow& r : batch.ranks) writeRank(stmts_->upsertRank, r);
  for (const StepRow& s : batch.steps) writeStep(stmts_->replaceStep, s);
  for (const EvalRow& e : batch.evals) writeEval(stmts_->replaceEval, e);
  for (const EventRow& e : batch.events) writeEvent(stmts_->insertEvent, e);
  for (const ServerLoadRow& r : batch.server_loads) writeServerLoad(stmts_->insertServerLoad, r);
  for (const SpanRow& s : batch.spans) writeSpan(stmts_->insertSpan, s);
  transaction.commit();
}

void RunStore::finishRun(int64_t run_id, const std::string& status, double wall_s, double train_s) {
  requireWritable("finish a run");
  sqlite::Transaction transaction(db_, path_, "finish run");
  {
    Query q(stmts_->finishRun);
    q.bind(status, wall_s, train_s, run_id).run();
    if (q.changes() == 0)
      throw sqlite::error(path_, "finish run", "no run with id " + std::to_string(run_id));
  }
  writeRunDigest(run_id);
  transaction.commit();
}

void RunStore::setSchedulerState(int64_t run_id, const SchedulerRecord& r) {
  requireWritable("record a run's scheduler state");
  Query q(stmts_->setScheduler);
  q.bind(r.job, r.state, r.reason, r.nodes, r.exit_code, run_id).run();
  if (q.changes() == 0)
    throw sqlite::error(path_, "set scheduler state", "no run with id " + std::to_string(run_id));
}

void RunStore::renameRun(int64_t run_id, const std::string& name) {
  requireWritable("rename a run");
  Query q(stmts_->renameRun);
  q.bind(name, run_id).run();
  if (q.changes() == 0)
    throw sqlite::error(path_, "rename run", "no run with id " + std::to_string(run_id));
}

void RunStore::deleteRun(int64_t run_id) {
  requireWritable("delete a run");
  Query q(stmts_->deleteRun);
  q.bind(run_id).run();  // foreign keys cascade to every table of the run
  if (q.changes() == 0)
    throw sqlite::error(path_, "delete run", "no run with id " + std::to_string(run_id));
  std::error_code ignored;  // most runs have no console (launched from a terminal)
  std::filesystem::remove(consolePath(path_, run_id), ignored);
}

std::string launchFolder(const std::string& db_path) {
  return (std::filesystem::absolute(db_path).parent_path() / "launches").string();
}

std::string consolePath(const std::string& db_path, int64_t run_id) {
  return launchFolder(db_path) + "/run-" + std::to_string(run_id) + ".log";
}

std::vector<RunRow> RunStore::listRuns() {
  std::vector<RunRow> rows;
  Query q(stmts_->listRuns);
  while (q.next()) rows.push_back(shownAsLost(readRow<RunRow>(q)));
  return rows;
}

// A full disk defers marking runs lost; they are shown lost all the same, never followed.
RunRow RunStore::shownAsLost(RunRow row) const {
  if (row.status == "running" && lost_unmarked_.count(row.id)) row.status = "lost";
  return row;
}

std::optional<RunRow> RunStore::run(int64_t run_id) {
  Query q(stmts_->selectRun);
  q.bind(run_id);
  if (!q.next()) return std::nullopt;
  return shownAsLost(readRow<RunRow>(q));
}

std::optional<RunSummary> RunStore::summary(int64_t run_id) {
  std::optional<RunRow> row = run(run_id);
  if (!row) return std::nullopt;
  RunSummary s;
  s.run = std::move(*row);

  // An ended run's totals were summed once, when it ended: not again over its steps.
  const bool ended = s.run.status != "running" && Query(stmts_->hasRankTotals).bind(run_id).next();
  addRankTotals(ended ? stmts_->storedRankTotals : stmts_->rankTotals, s);
  for (const RankRow& row : ranks(run_id)) {
    for (RankSummary& r : s.ranks) {
      if (r.rank != row.rank) continue;
      r.host = row.host;
      r.lost_messages = row.seq_gaps;
    }
  }
  addServerTotals(stmts_->serverTotals, s);
  addLatestEval(stmts_->latestEval, s);
  addRestarts(stmts_->countEvents, s);
  addLatestSample(stmts_->latestEvent, s);
  addBigramBaseline(stmts_->latestEvent, s);
  addRankEvents(stmts_->rankEvents, s, "traffic",
                [](RankSummary& r, const std::string& text) { r.traffic_formula = text; });
  addRankEvents(stmts_->rankEvents, s, "activations", [](RankSummary& r, const std::string& text) {
    r.activations = parseActivationsEvent(text);
  });
  if (s.run.train_s > 0) s.samples_per_s = static_cast<double>(s.samples) / s.run.train_s;
  return s;
}

std::vector<RankRow> RunStore::ranks(int64_t run_id) {
  return readAll(stmts_->selectRanks, run_id, &readRank);
}

std::vector<StepRow> RunStore::steps(int64_t run_id) {
  return readAll(stmts_->selectSteps, run_id, &readStep);
}

void RunStore::forEachStep(int64_t run_id, const std::function<void(const StepRow&)>& visit) {
  Query q(stmts_->selectSteps);
  q.bind(run_id);
  while (q.next()) visit(readStep(q));
}

void RunStore::forEachStep(int64_t run_id, int first_rank, int last_rank,
                           const std::function<void(const StepRow&)>& visit) {
  Statement statement(
      db_, path_, "read the steps of some ranks",
      selectStepsSql("run_id = ? AND rank BETWEEN ? AND ? ORDER BY rank, step").c_str());
  Query q(statement);
  q.bind(run_id, first_rank, last_rank);
  while (q.next()) visit(readStep(q));
}

std::vector<StepRow> RunStore::stepsBetween(int64_t run_id, int64_t first_step, int64_t last_step) {
  Statement statement(
      db_, path_, "read steps in a window",
      selectStepsSql("run_id = ? AND step BETWEEN ? AND ? ORDER BY rank, step").c_str());
  return readSteps(statement, run_id, first_step, last_step);
}

std::vector<StepRow> RunStore::stepsOfRankFrom(int64_t run_id, int rank, int64_t first_step) {
  Statement statement(
      db_, path_, "read the last steps of a rank",
      selectStepsSql("run_id = ? AND rank = ? AND step >= ? ORDER BY step").c_str());
  return readSteps(statement, run_id, rank, first_step);
}

void RunStore::forEachStepFrom(int64_t run_id, const std::map<int, int64_t>& first_steps,
                               const std::function<void(const StepRow&)>& visit) {
  Statement statement(
      db_, path_, "read the last steps of the ranks",
      selectStepsSql("run_id = ? AND rank = ? AND step >= ? ORDER BY step").c_str());
  for (const auto& [rank, first] : first_steps) {
    Query q(statement);
    q.bind(run_id, rank, first);
    while (q.next()) visit(readStep(q));
  }
}

int64_t RunStore::lastCommonStep(int64_t run_id) {
  // A rank that left (an elastic restart went on without it) stopped for good: not waited for.
  Statement statement(db_, path_, "read the last common step",
                      "SELECT MIN(last) FROM (SELECT MAX(step) AS last FROM steps "
                      "WHERE run_id = ? AND rank NOT IN (SELECT rank FROM ranks "
                      "WHERE run_id = ? AND status = 'left') GROUP BY rank)");
  Query q(statement);
  q.bind(run_id, run_id);
  if (!q.next() || q.nextIsNull()) return -1;
  return q.int64();
}

void RunStore::setTags(int64_t run_id, const std::vector<std::string>& tags) {
  requireWritable("change tags");
  sqlite::Transaction transaction(db_, path_, "set tags");
  if (!run(run_id))
    throw sqlite::error(path_, "set tags", "no run with id " + std::to_string(run_id));
  Statement clear(db_, path_, "clear tags", "DELETE FROM tags WHERE run_id = ?");
  Query(clear).bind(run_id).run();
  Statement insert(db_, path_, "insert tag",
                   "INSERT OR IGNORE INTO tags (run_id, tag) VALUES (?, ?)");
  for (const std::string& tag : tags) Query(insert).bind(run_id, tag).run();
  transaction.commit();
}

std::map<int64_t, std::vector<std::string>> RunStore::tags() {
  Statement statement(db_, path_, "read tags", "SELECT run_id, tag FROM tags ORDER BY run_id, tag");
  std::map<int64_t, std::vector<std::string>> found;
  Query q(statement);
  while (q.next()) {
    const int64_t id = q.int64();
    found[id].push_back(q.text());
  }
  return found;
}

std::vector<EvalRow> RunStore::evals(int64_t run_id) {
  return readAll(stmts_->selectEvals, run_id, &readEval);
}

std::vector<EventRow> RunStore::events(int64_t run_id) {
  return readAll(stmts_->selectEvents, run_id, &readEvent);
}

std::vector<ServerLoadRow> RunStore::serverLoads(int64_t run_id) {
  return readAll(stmts_->selectServerLoads, run_id, &readServerLoad);
}

std::vector<ServerLoadRow> RunStore::serverLoadsAfter(int64_t run_id, int64_t& after) {
  // The server loads' columns, then the row id.
  static const std::string kSql = selectSql<ServerLoadRow>(
      "server_loads", "WHERE run_id = ? AND rowid > ? ORDER BY rowid", "rowid");
  Statement statement(db_, path_, "read new server loads", kSql.c_str());
  Query q(statement);
  q.bind(run_id, after);
  std::vector<ServerLoadRow> rows;
  while (q.next()) {
    rows.push_back(readServerLoad(q));
    after = q.int64();
  }
  return rows;
}

std::vector<SpanRow> RunStore::spans(int64_t run_id) {
  return readAll(stmts_->selectSpans, run_id, &readSpan);
}

}  // namespace ranklab
