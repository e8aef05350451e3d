#include "storage/schema.h"

#include <sqlite3.h>

#include <chrono>
#include <iterator>
#include <thread>

#include "storage/statement.h"

namespace ranklab::schema {
namespace {

// One step forward: the SQL that takes a file from version - 1 to version, ending by
// setting user_version. Never edit a shipped step; add the next one.
struct Migration {
  int version;
  const char* sql;
};

// Times are ns (integers), *_s are seconds (reals), created/finished are ISO-8601 UTC.
constexpr const char* kVersion1 = R"sql(
CREATE TABLE runs (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused, even after a delete
  name      TEXT    NOT NULL DEFAULT '',
  created   TEXT    NOT NULL,
  finished  TEXT,                               -- NULL while running
  status    TEXT    NOT NULL DEFAULT 'running',
  job_path  TEXT    NOT NULL DEFAULT '',
  job_toml  TEXT    NOT NULL DEFAULT '',
  world     INTEGER NOT NULL DEFAULT 1,
  strategy  TEXT    NOT NULL DEFAULT '',
  algorithm TEXT    NOT NULL DEFAULT '',
  codec     TEXT    NOT NULL DEFAULT '',
  amp       TEXT    NOT NULL DEFAULT '',
  epochs    INTEGER NOT NULL DEFAULT 0,
  wall_s    REAL    NOT NULL DEFAULT 0,
  train_s   REAL    NOT NULL DEFAULT 0
);

CREATE TABLE ranks (
  run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  rank        INTEGER NOT NULL,
  host        TEXT    NOT NULL DEFAULT '',
  pid         INTEGER NOT NULL DEFAULT 0,
  status      TEXT    NOT NULL DEFAULT 'running',
  exit_status INTEGER NOT NULL DEFAULT 0,
  train_ns    INTEGER NOT NULL DEFAULT 0,
  seq_gaps    INTEGER NOT NULL DEFAULT 0,
  last_seq    INTEGER NOT NULL DEFAULT -1,
  PRIMARY KEY (run_id, rank)
) WITHOUT ROWID;

CREATE TABLE steps (
  run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  rank        INTEGER NOT NULL,
  step        INTEGER NOT NULL,
  epoch       INTEGER NOT NULL DEFAULT 0,
  samples     INTEGER NOT NULL DEFAULT 0,
  data_ns     INTEGER NOT NULL DEFAULT 0,
  forward_ns  INTEGER NOT NULL DEFAULT 0,
  backward_ns INTEGER NOT NULL DEFAULT 0,
  compress_ns INTEGER NOT NULL DEFAULT 0,
  comm_ns     INTEGER NOT NULL DEFAULT 0,
  wait_ns     INTEGER NOT NULL DEFAULT 0,
  update_ns   INTEGER NOT NULL DEFAULT 0,
  loss        REAL    NOT NULL DEFAULT 0,
  bytes_tx    INTEGER NOT NULL DEFAULT 0,
  bytes_rx    INTEGER NOT NULL DEFAULT 0,
  bytes_raw   INTEGER NOT NULL DEFAULT 0,
  lr          REAL    NOT NULL DEFAULT 0,
  loss_scale  REAL    NOT NULL DEFAULT 1,
  overflow    INTEGER NOT NULL DEFAULT 0,
  staleness   INTEGER NOT NULL DEFAULT 0,
  time_ns     INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, rank, step)
) WITHOUT ROWID;

CREATE TABLE evals (
  run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  rank          INTEGER NOT NULL,
  step          INTEGER NOT NULL,
  epoch         INTEGER NOT NULL DEFAULT 0,
  test_loss     REAL    NOT NULL DEFAULT 0,
  test_accuracy REAL    NOT NULL DEFAULT 0,
  time_ns       INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, step, rank)
) WITHOUT ROWID;

CREATE TABLE events (
  id      INTEGER PRIMARY KEY AUTOINCREMENT,  -- arrival order
  run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  rank    INTEGER NOT NULL,                   -- -1: the launcher
  step    INTEGER NOT NULL DEFAULT 0,
  kind    TEXT    NOT NULL,
  text    TEXT    NOT NULL DEFAULT '',
  time_ns INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX events_by_run ON events(run_id);

CREATE TABLE spans (
  run_id   INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  rank     INTEGER NOT NULL,
  step     INTEGER NOT NULL,
  phase    TEXT    NOT NULL,
  start_ns INTEGER NOT NULL,
  end_ns   INTEGER NOT NULL
);
CREATE INDEX spans_by_run_rank ON spans(run_id, rank, start_ns);

PRAGMA user_version = 1;
)sql";

// Free-form labels a person puts on runs in the runs browser.
constexpr const char* kVersion2 = R"sql(
CREATE TABLE tags (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  tag    TEXT    NOT NULL,
  PRIMARY KEY (run_id, tag)
) WITHOUT ROWID;

PRAGMA user_version = 2;
)sql";

// Communication strategies: hidden (overlapped) communication per step, and the load of
// each parameter server shard over time.
constexpr const char* kVersion3 = R"sql(
ALTER TABLE steps ADD COLUMN comm_hidden_ns INTEGER NOT NULL DEFAULT 0;

CREATE TABLE server_loads (
  run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  rank          INTEGER NOT NULL,
  shard         INTEGER NOT NULL,
  key_begin     INTEGER NOT NULL DEFAULT 0,
  key_end       INTEGER NOT NULL DEFAULT 0,
  interval_ns   INTEGER NOT NULL DEFAULT 0,
  pushes        INTEGER NOT NULL DEFAULT 0,
  pulls         INTEGER NOT NULL DEFAULT 0,
  bytes_rx      INTEGER NOT NULL DEFAULT 0,
  bytes_tx      INTEGER NOT NULL DEFAULT 0,
  busy_ns       INTEGER NOT NULL DEFAULT 0,
  idle_ns       INTEGER NOT NULL DEFAULT 0,
  held_ns       INTEGER NOT NULL DEFAULT 0,
  max_staleness INTEGER NOT NULL DEFAULT 0,
  version       INTEGER NOT NULL DEFAULT 0,
  time_ns       INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX server_loads_by_run ON server_loads(run_id, rank, time_ns);

PRAGMA user_version = 3;
)sql";

// Compressed parameter-server replies: what each shard's replies would have been
// uncompressed (rows written before this version read as their bytes_tx).
constexpr const char* kVersion4 = R"sql(
ALTER TABLE server_loads ADD COLUMN bytes_raw INTEGER NOT NULL DEFAULT 0;

PRAGMA user_version = 4;
)sql";

// Long runs open fast: each rank's steps summed in ~1,000 bins when the run ends (see
// RunStore::summariseSteps). Runs finished before this version have none; readers fall
// back to the steps themselves.
constexpr const char* kVersion5 = R"sql(
CREATE TABLE step_bins (
  run_id         INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  rank           INTEGER NOT NULL,
  first_step     INTEGER NOT NULL,
  last_step      INTEGER NOT NULL,
  steps          INTEGER NOT NULL,
  epoch          INTEGER NOT NULL DEFAULT 0,
  samples        INTEGER NOT NULL DEFAULT 0,
  data_ns        INTEGER NOT NULL DEFAULT 0,
  forward_ns     INTEGER NOT NULL DEFAULT 0,
  backward_ns    INTEGER NOT NULL DEFAULT 0,
  compress_ns    INTEGER NOT NULL DEFAULT 0,
  comm_ns        INTEGER NOT NULL DEFAULT 0,
  wait_ns        INTEGER NOT NULL DEFAULT 0,
  update_ns      INTEGER NOT NULL DEFAULT 0,
  loss_sum       REAL    NOT NULL DEFAULT 0,
  loss_count     INTEGER NOT NULL DEFAULT 0,
  loss_min       REAL,
  loss_max       REAL,
  bytes_tx       INTEGER NOT NULL DEFAULT 0,
  bytes_rx       INTEGER NOT NULL DEFAULT 0,
  loss_scale_min REAL    NOT NULL DEFAULT 1,
  loss_scale_max REAL    NOT NULL DEFAULT 1,
  staleness_sum  INTEGER NOT NULL DEFAULT 0,
  first_time_ns  INTEGER NOT NULL DEFAULT 0,
  last_time_ns   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, rank, first_step)
) WITHOUT ROWID;

PRAGMA user_version = 5;
)sql";

// Bins carry the steps' uncompressed bytes too, so a long run's compression ratio opens from
// its bins. Bins written before this version are filled from their steps (PK range reads).
constexpr const char* kVersion6 = R"sql(
ALTER TABLE step_bins ADD COLUMN bytes_raw INTEGER NOT NULL DEFAULT 0;
UPDATE step_bins SET bytes_raw = (
  SELECT COALESCE(SUM(s.bytes_raw), 0) FROM steps s
  WHERE s.run_id = step_bins.run_id AND s.rank = step_bins.rank
    AND s.step BETWEEN step_bins.first_step AND step_bins.last_step);

PRAGMA user_version = 6;
)sql";

// A pipeline stage's peak of micro-batches held for backward, and their bytes.
constexpr const char* kVersion7 = R"sql(
ALTER TABLE steps ADD COLUMN stashed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN stashed_bytes INTEGER NOT NULL DEFAULT 0;

PRAGMA user_version = 7;
)sql";

// The memory ledger (bytes held per rank) and the collectives each step took part in.
constexpr const char* kVersion8 = R"sql(
ALTER TABLE steps ADD COLUMN mem_params INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN mem_grads INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN mem_optimizer INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN mem_activations INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN allreduces INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN reduce_scatters INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN all_gathers INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN sends INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN recvs INTEGER NOT NULL DEFAULT 0;

PRAGMA user_version = 8;
)sql";

// The ledger's one-layer scratch apart from the model states (ZeRO's temporary buffers).
constexpr const char* kVersion9 = R"sql(
ALTER TABLE steps ADD COLUMN mem_buffers INTEGER NOT NULL DEFAULT 0;

PRAGMA user_version = 9;
)sql";

// Which process launched a run, so a run whose launcher died unannounced can be found.
constexpr const char* kVersion10 = R"sql(
ALTER TABLE runs ADD COLUMN launcher_host TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN launcher_pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN launcher_start INTEGER NOT NULL DEFAULT 0;

PRAGMA user_version = 10;
)sql";

// A NaN loss (a diverged step): SQLite stores NaN as NULL, which `loss`'s NOT NULL DEFAULT 0
// turned into 0 under INSERT OR REPLACE. The flag keeps it NaN; older rows stay as they were.
constexpr const char* kVersion11 = R"sql(
ALTER TABLE steps ADD COLUMN loss_nan INTEGER NOT NULL DEFAULT 0;

PRAGMA user_version = 11;
)sql";

// Pieces of a sampled step's communication: a ring hop's index, peer, chunk and bytes.
constexpr const char* kVersion12 = R"sql(
ALTER TABLE spans ADD COLUMN part INTEGER NOT NULL DEFAULT -1;
ALTER TABLE spans ADD COLUMN peer INTEGER NOT NULL DEFAULT -1;
ALTER TABLE spans ADD COLUMN chunk INTEGER NOT NULL DEFAULT -1;
ALTER TABLE spans ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;

PRAGMA user_version = 12;
)sql";

// A non-finite test loss (a diverged run): NaN went in as NULL and came out as 0 (the
// column's default, under INSERT OR REPLACE), so a diverged run looked best. The flag keeps
// it NaN, as loss_nan does for steps; evaluations stored before stay as they were.
constexpr const char* kVersion13 = R"sql(
ALTER TABLE evals ADD COLUMN loss_nan INTEGER NOT NULL DEFAULT 0;

PRAGMA user_version = 13;
)sql";

// The gradient's norm per step (train.grad_clip), the bytes sent to tensor slices and to
// pipeline stages (of bytes_tx), and bins that sum the norm and the learning rate, so a long
// run's charts of both open from its bins. Older bins get their steps' rates.
constexpr const char* kVersion14 = R"sql(
ALTER TABLE steps ADD COLUMN grad_norm REAL NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN bytes_tensor INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN bytes_pipeline INTEGER NOT NULL DEFAULT 0;
ALTER TABLE step_bins ADD COLUMN grad_norm_sum REAL NOT NULL DEFAULT 0;
ALTER TABLE step_bins ADD COLUMN lr_sum REAL NOT NULL DEFAULT 0;
UPDATE step_bins SET lr_sum = (
  SELECT TOTAL(s.lr) FROM steps s
  WHERE s.run_id = step_bins.run_id AND s.rank = step_bins.rank
    AND s.step BETWEEN step_bins.first_step AND step_bins.last_step);

PRAGMA user_version = 14;
)sql";

// The communication time per group: of comm_ns, the tensor slices' and the pipeline's (the
// timeline colours each group's share).
constexpr const char* kVersion15 = R"sql(
ALTER TABLE steps ADD COLUMN comm_tensor_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN comm_pipeline_ns INTEGER NOT NULL DEFAULT 0;

PRAGMA user_version = 15;
)sql";

// Where a run came from: ranklab's own launch, or traces another tool wrote (ranklab import).
constexpr const char* kVersion16 = R"sql(
ALTER TABLE runs ADD COLUMN origin TEXT NOT NULL DEFAULT 'ranklab';

PRAGMA user_version = 16;
)sql";

// A run submitted to a batch scheduler (Slurm): its job, where it is in the queue, its nodes
// and how the scheduler ended it, beside ranklab's own status.
constexpr const char* kVersion17 = R"sql(
ALTER TABLE runs ADD COLUMN scheduler_job TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN scheduler_state TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN scheduler_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN nodes TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN scheduler_exit TEXT NOT NULL DEFAULT '';

PRAGMA user_version = 17;
)sql";

// Each rank's totals over an ended run's steps, summed once when it ends (rank_totals.h):
// the runs list and compare read them instead of summing millions of steps again.
constexpr const char* kVersion18 = R"sql(
CREATE TABLE rank_totals (
  run_id          INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  rank            INTEGER NOT NULL,
  n_steps         INTEGER NOT NULL,
  samples         INTEGER,
  compute_ns      INTEGER,
  comm_ns         INTEGER,
  wait_ns         INTEGER,
  bytes_tx        INTEGER,
  bytes_raw       INTEGER,
  overflows       INTEGER,
  hidden_ns       INTEGER,
  staleness       REAL,
  stashed         INTEGER,
  stashed_bytes   INTEGER,
  mem_params      INTEGER,
  mem_grads       INTEGER,
  mem_optimizer   INTEGER,
  mem_activations INTEGER,
  mem_buffers     INTEGER,
  allreduces      REAL,
  reduce_scatters REAL,
  all_gathers     REAL,
  sends           REAL,
  recvs           REAL,
  bytes_tensor    INTEGER,
  bytes_pipeline  INTEGER,
  PRIMARY KEY (run_id, rank)
);

PRAGMA user_version = 18;
)sql";

constexpr Migration kMigrations[] = {
    {1, kVersion1},   {2, kVersion2},   {3, kVersion3},   {4, kVersion4},   {5, kVersion5},
    {6, kVersion6},   {7, kVersion7},   {8, kVersion8},   {9, kVersion9},   {10, kVersion10},
    {11, kVersion11}, {12, kVersion12}, {13, kVersion13}, {14, kVersion14}, {15, kVersion15},
    {16, kVersion16}, {17, kVersion17}, {18, kVersion18},
};

int readPragmaInt(sqlite3* db, const std::string& file, const char* op, const char* sql) {
  sqlite::Statement statement(db, file, op, sql);
  sqlite::Query query(statement);
  if (!query.next()) throw sqlite::error(file, op, "no result");
  return query.integer();
}

// Switching to WAL needs the file to itself and SQLite does not call the busy handler for
// it, so retry for as long as busy_timeout would have waited.
void enableWal(sqlite3* db, const std::string& file) {
  constexpr int kStepMs = 10, kLimitMs = 5000;
  for (int waited_ms = 0;; waited_ms += kStepMs) {
    const int code = sqlite3_exec(db, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
    if (code == SQLITE_OK) return;
    if ((code != SQLITE_BUSY && code != SQLITE_LOCKED) || waited_ms >= kLimitMs)
      throw sqlite::error(db, file, "set journal_mode=WAL");
    std::this_thread::sleep_for(std::chrono::milliseconds(kStepMs));
  }
}

void configure(sqlite3* db, const std::string& file) {
  sqlite::execScript(db, file, "enable foreign_keys", "PRAGMA foreign_keys = ON");
  // A build without foreign keys would silently skip every cascade.
  if (readPragmaInt(db, file, "check foreign_keys", "PRAGMA foreign_keys") != 1)
    throw sqlite::error(file, "enable foreign_keys", "this SQLite has no foreign key support");
  enableWal(db, file);
  sqlite::execScript(db, file, "set synchronous=NORMAL", "PRAGMA synchronous = NORMAL");
}

void migrate(sqlite3* db, const std::string& file, int target) {
  sqlite::Transaction transaction(db, file, "migrate schema");
  // Re-read under the write lock: another process may have migrated since we looked.
  const int current = version(db, file);
  for (const Migration& migration : kMigrations) {
    if (migration.version <= current || migration.version > target) continue;
    sqlite::execScript(db, file, "migrate schema to version " + std::to_string(migration.version),
                       migration.sql);
  }
  transaction.commit();
}

}  // namespace

int version(sqlite3* db, const std::string& file) {
  return readPragmaInt(db, file, "read schema version", "PRAGMA user_version");
}

void prepare(sqlite3* db, const std::string& file, int target) {
  if (target > static_cast<int>(std::size(kMigrations)))
    throw sqlite::error(file, "open", "no migration to schema version " + std::to_string(target));
  // Wait for a writer's lock instead of failing: the launcher writes while views read.
  if (sqlite3_busy_timeout(db, 5000) != SQLITE_OK)
    throw sqlite::error(db, file, "set busy_timeout");
  // Read first: this is where a file that is not SQLite shows itself, before anything is set.
  const int found = version(db, file);
  if (found > target)
    throw NewerSchemaError(file + ": open: schema version " + std::to_string(found) +
                           " was written by a newer ranklab (this one reads up to version " +
                           std::to_string(target) + ")");
  configure(db, file);
  if (found < target) migrate(db, file, target);
}

}  // namespace ranklab::schema
