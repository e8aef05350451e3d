// The step record is listed once (storage/step_record.h): the telemetry proto, the store's
// tables and every copy between them must agree with the lists, field by field.
#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <set>
#include <string>

#include "comm/telemetry/step_wire.h"
#include "storage/run_store.h"
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

TEST(StepRecord, TheStoreHasAColumnForEveryFieldAndKeepsEachOne) {
  testing::TempFolder folder;
  const std::string path = folder.file("runs.db");
  RunStore store(path);
  NewRun run;
  run.name = "record";
  const int64_t id = store.createRun(run);
  StepRow row;
  static_cast<StepMeasures&>(row) = distinctMeasures();
  row.run_id = id;
  row.step = 1;
  row.time_ns = 99;
  RecordBatch batch;
  batch.steps.push_back(row);
  store.write(batch);
  const auto steps = store.steps(id);
  ASSERT_EQ(steps.size(), 1u);
  expectSameMeasures(row, steps[0]);
  EXPECT_EQ(steps[0].time_ns, 99);

  const auto columns = columnsOf(path, "steps");
  const auto bins = columnsOf(path, "step_bins");
  for (const char* name : kStepPhaseNames) {
    EXPECT_TRUE(columns.count(std::string(name) + "_ns")) << name;
    EXPECT_TRUE(bins.count(std::string(name) + "_ns")) << name;
  }
  EXPECT_TRUE(columns.count("comm_hidden_ns"));
#define RANKLAB_FIND_COLUMN(type, name, init) EXPECT_TRUE(columns.count(#name)) << #name;
  RANKLAB_STEP_MEASURES(RANKLAB_FIND_COLUMN)
#undef RANKLAB_FIND_COLUMN
}

}  // namespace
}  // namespace ranklab
