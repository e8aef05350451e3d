// The step record is listed once (storage/step_record.h), and so are the evaluation, event,
// server-load, span and rank rows (storage/record_fields.h): the telemetry proto, the store's
// tables and every copy between them must agree with the lists, field by field.
#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <initializer_list>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "comm/telemetry/step_wire.h"
#include "storage/run_store.h"
#include "storage/store_rows.h"
#include "tests/support/temp_folder.h"

namespace ranklab {
namespace {

// Every field set to a value of its own, so a field dropped or swapped on the way shows.
StepMeasures distinctMeasures() {
  StepMeasures m;
  int64_t next = 11;
#define RANKLAB_SET_PHASE(name, kind) m.name##_ns = next++;
  RANKLAB_STEP_PHASES(RANKLAB_SET_PHASE)
#undef RANKLAB_SET_PHASE
  m.comm_hidden_ns = next++;
#define RANKLAB_SET_MEASURE(type, name, init) m.name = static_cast<type>(next++);
  RANKLAB_STEP_MEASURES(RANKLAB_SET_MEASURE)
#undef RANKLAB_SET_MEASURE
  return m;
}

void expectSameMeasures(const StepMeasures& a, const StepMeasures& b) {
#define RANKLAB_CMP_PHASE(name, kind) EXPECT_EQ(a.name##_ns, b.name##_ns) << #name;
  RANKLAB_STEP_PHASES(RANKLAB_CMP_PHASE)
#undef RANKLAB_CMP_PHASE
  EXPECT_EQ(a.comm_hidden_ns, b.comm_hidden_ns);
#define RANKLAB_CMP_MEASURE(type, name, init) EXPECT_EQ(a.name, b.name) << #name;
  RANKLAB_STEP_MEASURES(RANKLAB_CMP_MEASURE)
#undef RANKLAB_CMP_MEASURE
}

std::set<std::string> columnsOf(const std::string& db_path, const std::string& table) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  const std::string sql = "SELECT name FROM pragma_table_info('" + table + "')";
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK);
  std::set<std::string> names;
  while (sqlite3_step(st) == SQLITE_ROW)
    names.insert(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return names;
}

TEST(StepRecord, TheProtoHasAFieldForEveryPhaseAndMeasure) {
  const auto* phases = telemetry::Phases::descriptor();
  const auto* step = telemetry::Step::descriptor();
  for (const char* name : kStepPhaseNames)
    EXPECT_NE(phases->FindFieldByName(std::string(name) + "_ns"), nullptr) << name;
  EXPECT_EQ(phases->field_count(), kStepPhaseCount + 1) << "a Phases field not in the list";
#define RANKLAB_FIND_MEASURE(type, name, init) \
  EXPECT_NE(step->FindFieldByName(#name), nullptr) << #name;
  RANKLAB_STEP_MEASURES(RANKLAB_FIND_MEASURE)
#undef RANKLAB_FIND_MEASURE
}

TEST(StepRecord, TheWireCarriesEveryField) {
  const StepMeasures sent = distinctMeasures();
  telemetry::Step message;
  encodeMeasures(sent, message);
  StepMeasures received;
  decodeMeasures(message, received);
  expectSameMeasures(sent, received);
}

// A store in a file of its own, with one run in it.
struct OneRunStore {
  static NewRun aRun() {
    NewRun run;
    run.name = "record";
    return run;
  }
  testing::TempFolder folder;
  std::string path = folder.file("runs.db");
  RunStore store{path};
  int64_t id = store.createRun(aRun());
};

TEST(StepRecord, TheStoreHasAColumnForEveryFieldAndKeepsEachOne) {
  OneRunStore f;
  StepRow row;
  static_cast<StepMeasures&>(row) = distinctMeasures();
  row.run_id = f.id;
  row.step = 1;
  row.time_ns = 99;
  RecordBatch batch;
  batch.steps.push_back(row);
  f.store.write(batch);
  const auto steps = f.store.steps(f.id);
  ASSERT_EQ(steps.size(), 1u);
  expectSameMeasures(row, steps[0]);
  EXPECT_EQ(steps[0].time_ns, 99);

  const auto columns = columnsOf(f.path, "steps");
  const auto bins = columnsOf(f.path, "step_bins");
  for (const char* name : kStepPhaseNames) {
    EXPECT_TRUE(columns.count(std::string(name) + "_ns")) << name;
    EXPECT_TRUE(bins.count(std::string(name) + "_ns")) << name;
  }
  EXPECT_TRUE(columns.count("comm_hidden_ns"));
#define RANKLAB_FIND_COLUMN(type, name, init) EXPECT_TRUE(columns.count(#name)) << #name;
  RANKLAB_STEP_MEASURES(RANKLAB_FIND_COLUMN)
#undef RANKLAB_FIND_COLUMN
}

// A row's column names, from its list.
template <typename Row>
std::set<std::string> listedColumns() {
  std::set<std::string> names;
  const Row row;
  visitColumns(row, [&](const char* name, const auto&) { names.insert(name); });
  return names;
}

// The message's fields are the row's own (everything but run_id, rank and time_ns).
template <typename Row>
void expectMessageFields(const google::protobuf::Descriptor* message) {
  std::set<std::string> fields, own = listedColumns<Row>();
  for (int i = 0; i < message->field_count(); ++i) fields.insert(message->field(i)->name());
  for (const char* envelope : {"run_id", "rank", "time_ns"}) own.erase(envelope);
  EXPECT_EQ(fields, own) << message->name();
}

TEST(RecordLists, EachMessageCarriesItsRowsFieldsUnderTheirNames) {
  expectMessageFields<EvalRow>(telemetry::Eval::descriptor());
  expectMessageFields<EventRow>(telemetry::Event::descriptor());
  expectMessageFields<ServerLoadRow>(telemetry::ServerLoad::descriptor());
  expectMessageFields<SpanRow>(telemetry::Span::descriptor());  // its columns are the wire's names
}

// Each value distinct from the others and from the defaults, so a dropped or swapped column shows.
template <typename Row>
Row distinctValues() {
  Row row;
  int next = 3;
  visitColumns(row, [&](const char*, auto& value) {
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_same_v<T, std::string>)
      value = "v" + std::to_string(next++);
    else if constexpr (std::is_floating_point_v<T>)
      value = next++ + 0.25;
    else
      value = static_cast<T>(next++);
  });
  return row;
}

template <typename Row>
Row distinctRow(int64_t run_id, int rank) {
  Row row = distinctValues<Row>();
  row.run_id = run_id;
  row.rank = rank;
  return row;
}

template <typename Row>
void expectSameRow(const Row& a, const Row& b) {
  std::vector<std::string> left, right;
  const auto text = [](std::vector<std::string>& into) {
    return [&into](const char* name, const auto& value) {
      if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>)
        into.push_back(std::string(name) + "=" + value);
      else
        into.push_back(std::string(name) + "=" + std::to_string(value));
    };
  };
  visitColumns(a, text(left));
  visitColumns(b, text(right));
  EXPECT_EQ(left, right);
}

// A new run's fields come back as they went in, each in its own column.
TEST(RecordLists, ANewRunKeepsEveryValue) {
  OneRunStore f;
  const NewRun wanted = distinctValues<NewRun>();
  const std::optional<RunRow> got = f.store.run(f.store.createRun(wanted));
  ASSERT_TRUE(got.has_value());
  expectSameRow(static_cast<const NewRun&>(*got), wanted);
  EXPECT_EQ(got->status, "running");
  EXPECT_EQ(got->finished, "");
  EXPECT_EQ(got->created.size(), 20u) << got->created;  // 2026-11-27T18:00:00Z
}

TEST(RecordLists, EachTableHasItsListsColumnsAndKeepsEveryValue) {
  OneRunStore f;
  RecordBatch batch;
  batch.ranks.push_back(distinctRow<RankRow>(f.id, 1));
  batch.evals.push_back(distinctRow<EvalRow>(f.id, 1));
  batch.events.push_back(distinctRow<EventRow>(f.id, 1));
  batch.server_loads.push_back(distinctRow<ServerLoadRow>(f.id, 1));
  batch.spans.push_back(distinctRow<SpanRow>(f.id, 1));
  f.store.write(batch);
  ASSERT_EQ(f.store.ranks(f.id).size(), 1u);
  expectSameRow(f.store.ranks(f.id)[0], batch.ranks[0]);
  ASSERT_EQ(f.store.evals(f.id).size(), 1u);
  expectSameRow(f.store.evals(f.id)[0], batch.evals[0]);
  ASSERT_EQ(f.store.events(f.id).size(), 1u);
  expectSameRow(f.store.events(f.id)[0], batch.events[0]);
  ASSERT_EQ(f.store.serverLoads(f.id).size(), 1u);
  expectSameRow(f.store.serverLoads(f.id)[0], batch.server_loads[0]);
  ASSERT_EQ(f.store.spans(f.id).size(), 1u);
  expectSameRow(f.store.spans(f.id)[0], batch.spans[0]);
  // Each table holds its list's columns and no others but evals' loss_nan and events' id: a
  // column added to a table but not to its list would never be written or read.
  const auto with = [](std::set<std::string> names, std::initializer_list<const char*> more) {
    names.insert(more.begin(), more.end());
    return names;
  };
  EXPECT_EQ(columnsOf(f.path, "ranks"), listedColumns<RankRow>());
  EXPECT_EQ(columnsOf(f.path, "evals"), with(listedColumns<EvalRow>(), {"loss_nan"}));
  EXPECT_EQ(columnsOf(f.path, "events"), with(listedColumns<EventRow>(), {"id"}));
  EXPECT_EQ(columnsOf(f.path, "server_loads"), listedColumns<ServerLoadRow>());
  EXPECT_EQ(columnsOf(f.path, "spans"), listedColumns<SpanRow>());
  EXPECT_EQ(columnsOf(f.path, "step_bins"), with(listedColumns<StepBin>(), {"run_id"}));
  EXPECT_EQ(columnsOf(f.path, "runs"),
            with(listedColumns<RunRow>(), {"launcher_host", "launcher_pid", "launcher_start"}));
}

}  // namespace
}  // namespace ranklab
