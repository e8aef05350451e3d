// PlanTableModel fed the real output of `ranklab plan`: tests/gui/data/plan-quickstart-4.json is
//   ranklab plan resources/jobs/quickstart.toml --ranks 4 --json --memory-per-rank 343M --top 40
// (37 layouts, 16 of them over the limit). Sorting by step time, a layout over the limit.
#include <QAbstractItemModelTester>
#include <QBrush>
#include <QFile>
#include <QSortFilterProxyModel>
#include <QtTest>

#include "views/models/plan_table_model.h"

using ranklab::Plan;
using ranklab::PlannedLayout;
using ranklab::PlanTableModel;

namespace {

Plan cannedPlan() {
  QFile file(QStringLiteral(RANKLAB_SOURCE_DIR "/tests/gui/data/plan-quickstart-4.json"));
  if (!file.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(file.fileName()));
  Plan plan;
  QString error;
  if (!ranklab::parsePlanJson(file.readAll(), &plan, &error)) qFatal("%s", qPrintable(error));
  return plan;
}

}  // namespace

class PlanTableModelTest : public QObject {
  Q_OBJECT

 private slots:
  void readsEveryCandidateInThePlansOrder() {
    const Plan plan = cannedPlan();
    QCOMPARE(int(plan.candidates.size()), 37);
    QCOMPARE(plan.layouts, 37);
    QCOMPARE(plan.memory_limit_bytes, 343e6);
    const PlannedLayout& first = plan.candidates.front();
    QCOMPARE(first.rank, 1);
    QCOMPARE(first.data, 2);
    QCOMPARE(first.tensor, 2);
    QCOMPARE(first.zero, 1);
    QVERIFY(first.overrides.contains(QStringLiteral("parallel.tensor=2")));
    QVERIFY(first.overrides.contains(QStringLiteral("parallel.schedule=\"1f1b\"")));
    for (size_t i = 1; i < plan.candidates.size(); ++i)  // ranked by time per sample
      QVERIFY(plan.candidates[i - 1].sample_s <= plan.candidates[i].sample_s);
    QCOMPARE(PlanTableModel::layoutText(first), QStringLiteral("data 2 · tensor 2 · ZeRO 1"));
  }

  void passesTheModelTester() {
    PlanTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setPlan(cannedPlan());
    QCOMPARE(model.rowCount(), 37);
    QSortFilterProxyModel proxy;
    QAbstractItemModelTester proxy_tester(&proxy,
                                          QAbstractItemModelTester::FailureReportingMode::QtTest);
    proxy.setSourceModel(&model);
    proxy.setSortRole(PlanTableModel::SortRole);
    for (int column = 0; column < PlanTableModel::ColumnCount; ++column)
      proxy.sort(column, Qt::DescendingOrder);
    model.clear();
    QCOMPARE(proxy.rowCount(), 0);
  }

  // Numbers sort as numbers (12.3 ms after 4.98 ms), not as their text.
  void sortsByStepTime() {
    Plan plan = cannedPlan();
    plan.candidates.back().step_s = 0.0123;  // the plan's steps are 1-5 ms: one of two digits
    PlanTableModel model;
    model.setPlan(plan);
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(PlanTableModel::SortRole);
    proxy.sort(PlanTableModel::StepColumn, Qt::AscendingOrder);
    const auto step = [&proxy](int row) {
      return proxy.index(row, PlanTableModel::StepColumn).data(PlanTableModel::SortRole).toDouble();
    };
    for (int row = 1; row < proxy.rowCount(); ++row) QVERIFY(step(row - 1) <= step(row));
    QCOMPARE(proxy.index(36, PlanTableModel::StepColumn).data().toString(), QStringLiteral("12.3"));
    // The fastest step is not the plan's first: it ranks by time per sample.
    QCOMPARE(proxy.index(0, PlanTableModel::LayoutColumn).data().toString(),
             QStringLiteral("tensor 4"));
    QCOMPARE(proxy.index(0, PlanTableModel::StepColumn).data().toString(), QStringLiteral("1.14"));
    QCOMPARE(proxy.index(0, PlanTableModel::RankColumn).data().toInt(), 8);
    proxy.sort(PlanTableModel::SamplesPerSecondColumn, Qt::DescendingOrder);
    QCOMPARE(proxy.index(0, PlanTableModel::RankColumn).data().toInt(), 1);
  }

  void showsALayoutOverTheLimitAsNotFitting() {
    PlanTableModel model;
    model.setPlan(cannedPlan());
    int over = 0;
    for (int row = 0; row < model.rowCount(); ++row) {
      const PlannedLayout& c = model.candidateAt(row);
      const double fraction = model.index(row, PlanTableModel::MemoryColumn)
                                  .data(PlanTableModel::MemoryFractionRole)
                                  .toDouble();
      const QModelIndex fits = model.index(row, PlanTableModel::FitsColumn);
      QCOMPARE(fraction, c.peak_bytes / 343e6);
      QCOMPARE(fraction > 1, !c.fits);
      QCOMPARE(fits.data().toString(), c.fits ? QStringLiteral("yes") : QStringLiteral("no"));
      QCOMPARE(fits.data(Qt::ForegroundRole).isValid(), !c.fits);  // red
      over += c.fits ? 0 : 1;
    }
    QCOMPARE(over, 16);
    // Decimal units, as the CLI prints memory.
    QCOMPARE(model.index(0, PlanTableModel::MemoryColumn).data().toString(),
             QStringLiteral("342.37 MB"));
  }

  void refusesWhatIsNotAPlan() {
    Plan plan;
    QString error;
    QVERIFY(!ranklab::parsePlanJson("ranklab: no such file", &plan, &error));
    QVERIFY2(error.contains(QStringLiteral("not JSON")), qPrintable(error));
    QVERIFY(!ranklab::parsePlanJson(R"({"id": 3})", &plan, &error));
    QVERIFY2(error.contains(QStringLiteral("\"candidates\"")), qPrintable(error));
  }
};

QTEST_MAIN(PlanTableModelTest)
#include "test_plan_table_model.moc"
