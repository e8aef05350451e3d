// RunsTableModel: rows from the store's runs, summaries matched by id, formatted columns.
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTemporaryDir>
#include <QtTest>

#include "storage/run_store.h"
#include "views/models/runs_table_model.h"

using ranklab::RecordBatch;
using ranklab::RunRow;
using ranklab::RunsTableModel;
using ranklab::RunStore;
using ranklab::RunSummary;

namespace {

RunRow makeRun(int64_t id, const std::string& name, const std::string& status) {
  RunRow run;
  run.id = id;
  run.name = name;
  run.status = status;
  run.created = "2024-03-01T10:15:00Z";
  run.world = int(id) + 1;
  run.strategy = "allreduce";
  run.algorithm = "ring";
  return run;
}

// A finished 2-rank run of 4 steps; each rank sends `tx` and would have sent `raw` per step.
int64_t storeRun(RunStore& store, const std::string& codec, int64_t tx, int64_t raw) {
  ranklab::NewRun run;
  run.name = codec;
  run.world = 2;
  run.strategy = "allreduce";
  run.codec = codec;
  const int64_t id = store.createRun(run);
  RecordBatch batch;
  for (int rank = 0; rank < 2; ++rank) {
    for (int step = 0; step < 4; ++step) {
      ranklab::StepRow s;
      s.run_id = id;
      s.rank = rank;
      s.step = step;
      s.bytes_tx = tx;
      s.bytes_raw = raw;
      batch.steps.push_back(s);
    }
  }
  store.write(batch);
  store.finishRun(id, "done", 1.0, 1.0);
  return id;
}

}  // namespace

class RunsTableModelTest : public QObject {
  Q_OBJECT

 private slots:
  void emptyModel() {
    RunsTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.columnCount(), int(RunsTableModel::ColumnCount));
    QCOMPARE(model.headerData(RunsTableModel::SamplesPerSecondColumn, Qt::Horizontal).toString(),
             QStringLiteral("samples/s"));
  }

  void rowsAndSummaries() {
    RunsTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);

    RunSummary s3;
    s3.run = makeRun(3, "sync ring", "done");
    s3.test_accuracy = 0.8425;
    s3.samples_per_s = 5321.4;
    RunSummary s1;  // a summary with no evaluation yet
    s1.run = makeRun(1, "first", "failed");
    model.setRuns({makeRun(3, "sync ring", "done"), makeRun(2, "live", "running"),
                   makeRun(1, "first", "failed")},
                  {s1, s3});
    QCOMPARE(resets.count(), 1);
    QCOMPARE(model.rowCount(), 3);

    auto text = [&](int row, int column) { return model.index(row, column).data().toString(); };
    QCOMPARE(text(0, RunsTableModel::IdColumn), QStringLiteral("3"));
    QCOMPARE(text(0, RunsTableModel::NameColumn), QStringLiteral("sync ring"));
    QCOMPARE(text(0, RunsTableModel::StatusColumn), QStringLiteral("done"));
    QCOMPARE(text(0, RunsTableModel::WorldColumn), QStringLiteral("4"));
    QCOMPARE(text(0, RunsTableModel::StrategyColumn), QStringLiteral("allreduce/ring"));
    QCOMPARE(text(0, RunsTableModel::TestAccuracyColumn), QStringLiteral("84.3 %"));
    QCOMPARE(text(0, RunsTableModel::SamplesPerSecondColumn), QStringLiteral("5321"));
    QVERIFY(text(0, RunsTableModel::CreatedColumn).startsWith(QStringLiteral("2024-03-0")));
    // No summary, or a summary without eval/throughput: blank, not zero.
    QVERIFY(text(1, RunsTableModel::TestAccuracyColumn).isEmpty());
    QVERIFY(text(2, RunsTableModel::TestAccuracyColumn).isEmpty());
    QVERIFY(text(2, RunsTableModel::SamplesPerSecondColumn).isEmpty());

    QCOMPARE(
        model.index(1, RunsTableModel::NameColumn).data(RunsTableModel::RunIdRole).toLongLong(), 2);
    QCOMPARE(model.index(0, RunsTableModel::TestAccuracyColumn)
                 .data(RunsTableModel::SortRole)
                 .toDouble(),
             0.8425);
    QCOMPARE(model.rowOfRun(1), 2);
    QCOMPARE(model.rowOfRun(42), -1);
    QCOMPARE(model.runId(0), 3);
    QCOMPARE(model.runAt(2).name, std::string("first"));
    QVERIFY(model.index(2, RunsTableModel::StatusColumn).data(Qt::ForegroundRole).isValid());

    model.setRuns({makeRun(1, "first", "failed")}, {});
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.runId(0), 1);
  }

  // Raw / wire bytes from a real store: topk sent 1/50 of its raw bytes, fp16 half, none
  // all of them; a run without steps has no bytes. Sorted as numbers, not as text.
  void compressionFromStore() {
    QTemporaryDir dir;
    RunStore store(dir.filePath(QStringLiteral("runs.db")).toStdString());
    const int64_t topk = storeRun(store, "topk", 2'000, 100'000);
    const int64_t none = storeRun(store, "none", 100'000, 100'000);
    const int64_t fp16 = storeRun(store, "fp16", 50'000, 100'000);
    ranklab::NewRun no_steps;
    no_steps.name = "empty";
    const int64_t empty = store.createRun(no_steps);
    std::vector<ranklab::RunSummary> summaries;
    for (const RunRow& run : store.listRuns()) summaries.push_back(*store.summary(run.id));

    RunsTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setRuns(store.listRuns(), summaries);
    QCOMPARE(model.headerData(RunsTableModel::CompressionColumn, Qt::Horizontal).toString(),
             QStringLiteral("compression"));
    auto text = [&](int64_t id) {
      return model.index(model.rowOfRun(id), RunsTableModel::CompressionColumn).data().toString();
    };
    QCOMPARE(text(topk), QStringLiteral("50.0x"));
    QCOMPARE(text(fp16), QStringLiteral("2.0x"));
    QCOMPARE(text(none), QStringLiteral("–"));
    QCOMPARE(text(empty), QStringLiteral("–"));

    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(RunsTableModel::SortRole);
    proxy.sort(RunsTableModel::CompressionColumn, Qt::DescendingOrder);
    auto idAt = [&](int row) {
      return proxy.index(row, RunsTableModel::IdColumn)
          .data(RunsTableModel::RunIdRole)
          .toLongLong();
    };
    QCOMPARE(idAt(0), topk);  // 50x above 2x: as text "2.0x" would sort first
    QCOMPARE(idAt(1), fp16);
    QCOMPARE(proxy.index(2, RunsTableModel::CompressionColumn).data().toString(),
             QStringLiteral("–"));
  }
};

QTEST_GUILESS_MAIN(RunsTableModelTest)
#include "test_runs_table_model.moc"
