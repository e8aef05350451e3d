// The parts of a run's life that rewrite what was stored: a restart's roll-back, and runs
// whose launcher died without finishing them.
#include <sqlite3.h>

#include "storage/launcher_identity.h"
#include "storage/run_store.h"
#include "storage/statement.h"
#include "storage/store_rows.h"

namespace ranklab {

using sqlite::Query;
using sqlite::Statement;

int64_t RunStore::rollBack(int64_t run_id, int64_t step) {
  requireWritable("roll a run back");
  sqlite::Transaction transaction(db_, path_, "roll back run");
  int64_t removed = 0;
  for (const char* table : {"steps", "spans", "evals"}) {
    const std::string sql = std::string("DELETE FROM ") + table + " WHERE run_id = ? AND step > ?";
    Statement statement(db_, path_, std::string("roll back ") + table, sql.c_str());
    Query q(statement);
    q.bind(run_id, step).run();
    if (std::string(table) == "steps") removed = q.changes();
  }
  transaction.commit();
  return removed;
}

std::vector<std::pair<int64_t, LauncherIdentity>> RunStore::runsToMarkLost() {
  std::vector<std::pair<int64_t, LauncherIdentity>> gone;
  Statement select(db_, path_, "find runs without a launcher",
                   "SELECT id, launcher_host, launcher_pid, launcher_start FROM runs "
                   "WHERE status = 'running' AND launcher_pid > 0");
  Query q(select);
  while (q.next()) {
    const int64_t id = q.int64();
    LauncherIdentity who;
    who.host = q.text();
    who.pid = q.int64();
    who.start = q.int64();
    if (!launcherMayLive(who)) gone.emplace_back(id, who);
  }
  return gone;
}

std::vector<int64_t> RunStore::markLostRuns() {
  if (!read_only_.empty()) return {};  // a newer ranklab's file, or a full disk: not written
  const auto gone = runsToMarkLost();
  std::vector<int64_t> lost;
  if (gone.empty()) return lost;
  sqlite::Transaction transaction(db_, path_, "mark lost runs");
  Statement mark(db_, path_, "mark run lost",
                 "UPDATE runs SET status = 'lost', "
                 "finished = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') "
                 "WHERE id = ? AND status = 'running'");
  Statement event(db_, path_, "record lost run",
                  store_rows::insertSql<EventRow>("INSERT", "events").c_str());
  for (const auto& [id, who] : gone) {
    Query q(mark);
    q.bind(id).run();
    if (q.changes() == 0) continue;  // another process got there first
    EventRow note;                   // the launcher's (rank -1), at step 0
    note.run_id = id;
    note.rank = -1;
    note.kind = "lost";
    note.text = "its launcher (pid " + std::to_string(who.pid) + " on " + who.host +
                ") ended without finishing the run; the steps it stored are kept";
    store_rows::writeRow(event, note);
    writeRunDigest(id);
    lost.push_back(id);
  }
  transaction.commit();
  return lost;
}

std::optional<int64_t> RunStore::runLaunchedBy(const LauncherIdentity& who) {
  Statement select(db_, path_, "find the run of a launcher",
                   "SELECT id FROM runs WHERE launcher_host = ? AND launcher_pid = ? AND "
                   "launcher_start = ? ORDER BY id DESC LIMIT 1");
  Query q(select);
  q.bind(who.host, who.pid, who.start);
  if (!q.next()) return std::nullopt;
  return q.int64();
}

std::optional<LauncherIdentity> RunStore::launcherOf(int64_t run_id) {
  Statement select(db_, path_, "read a run's launcher",
                   "SELECT launcher_host, launcher_pid, launcher_start FROM runs WHERE id = ?");
  Query q(select);
  q.bind(run_id);
  if (!q.next()) return std::nullopt;
  LauncherIdentity who;
  who.host = q.text();
  who.pid = q.int64();
  who.start = q.int64();
  return who;
}

bool RunStore::adoptRun(int64_t run_id) {
  requireWritable("take over a run");
  const LauncherIdentity self = thisLauncher();
  Statement adopt(db_, path_, "take over a run",
                  "UPDATE runs SET status = 'running', finished = NULL, launcher_host = ?, "
                  "launcher_pid = ?, launcher_start = ? WHERE id = ? AND status = 'lost'");
  Query q(adopt);
  q.bind(self.host, self.pid, self.start, run_id).run();
  return q.changes() > 0;
}

}  // namespace ranklab
