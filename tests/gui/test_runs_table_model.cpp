// RunsTableModel: rows from the store's runs, summaries matched by id, formatted columns.
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

#include "views/models/runs_table_model.h"

using ranklab::RunRow;
using ranklab::RunsTableModel;
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
};

QTEST_GUILESS_MAIN(RunsTableModelTest)
#include "test_runs_table_model.moc"
