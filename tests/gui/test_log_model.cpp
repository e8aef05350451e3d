// The run log: lines keep their rank, colour follows the rank, stderr is tinted, the
// oldest lines go when the log is full, and a rank filter shows only that rank.
#include <QAbstractItemModelTester>
#include <QBrush>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QtTest>

#include "views/models/log_model.h"
#include "views/models/rank_colour.h"

using namespace ranklab;

class LogModelTest : public QObject {
  Q_OBJECT

 private slots:
  void linesKeepRankAndColour() {
    LogModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy seen(&model, &LogModel::rankSeen);
    model.append(1, false, QStringLiteral("epoch 1"));
    model.append(-1, true, QStringLiteral("mpirun noticed"));
    model.append(0, false, QStringLiteral("hello"));
    model.append(1, true, QStringLiteral("warning"));
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(seen.count(), 3);
    QCOMPARE(model.ranks(), (QList<int>{-1, 0, 1}));
    QCOMPARE(model.index(0).data().toString(), QStringLiteral("[rank 1] epoch 1"));
    QCOMPARE(model.index(1).data().toString(), QStringLiteral("[mpirun] mpirun noticed"));
    QCOMPARE(model.index(3).data(Qt::ForegroundRole).value<QBrush>().color(), rankColour(1));
    QVERIFY(model.index(3).data(Qt::BackgroundRole).isValid());  // stderr
    QVERIFY(!model.index(0).data(Qt::BackgroundRole).isValid());

    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setFilterRole(LogModel::RankRole);
    proxy.setFilterRegularExpression(QStringLiteral("^1$"));
    QCOMPARE(proxy.rowCount(), 2);

    model.clear();
    QCOMPARE(model.rowCount(), 0);
    QVERIFY(model.ranks().isEmpty());
  }

  void oldestLinesGoFirst() {
    LogModel model(nullptr, 50);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    for (int i = 0; i < 55; ++i) model.append(0, false, QString::number(i));
    QCOMPARE(model.rowCount(), 50);
    QCOMPARE(model.index(0).data().toString(), QStringLiteral("[rank 0] 5"));
  }
};

QTEST_MAIN(LogModelTest)
#include "test_log_model.moc"
