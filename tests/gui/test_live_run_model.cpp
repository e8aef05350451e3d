// LiveRunModel: per-rank rows, loss points, cumulative phase seconds, windowed throughput.
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>
#include <cmath>
#include <limits>

#include "views/models/live_run_model.h"

using ranklab::EvalRow;
using ranklab::LiveRunModel;
using ranklab::StepRow;

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;

// Step `step` of `rank`: every phase a known number of ms, ending at step+1 seconds.
StepRow makeStep(int rank, int64_t step, double loss) {
  StepRow s;
  s.run_id = 7;
  s.rank = rank;
  s.step = step;
  s.epoch = int(step / 10);
  s.samples = 64;
  s.data_ns = 1 * kMs;
  s.forward_ns = 2 * kMs;
  s.backward_ns = 3 * kMs;
  s.compress_ns = 4 * kMs;
  s.update_ns = 5 * kMs;  // compute: 15 ms
  s.comm_ns = 20 * kMs;
  s.wait_ns = (rank + 1) * 10 * kMs;
  s.loss = loss;
  s.bytes_tx = 1000;
  s.time_ns = (step + 1) * kS;
  return s;
}

}  // namespace

class LiveRunModelTest : public QObject {
  Q_OBJECT

 private slots:
  void ranksAppearInRankOrder() {
    LiveRunModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy updated(&model, &LiveRunModel::updated);

    model.addStep(makeStep(1, 0, 2.0));
    model.addStep(makeStep(0, 0, 2.2));
    model.addStep(makeStep(1, 1, 1.5));
    QCOMPARE(inserted.count(), 2);
    QCOMPARE(changed.count(), 3);
    QCOMPARE(updated.count(), 3);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.rankAt(0).rank, 0);
    QCOMPARE(model.rankAt(1).rank, 1);
    QCOMPARE(model.rowOfRank(1), 1);
    QCOMPARE(model.rowOfRank(5), -1);
    QCOMPARE(model.index(1, LiveRunModel::StepColumn).data().toLongLong(), 1);
    QCOMPARE(model.index(1, LiveRunModel::LossColumn).data().toDouble(), 1.5);
    // The last dataChanged names rank 1's row.
    QCOMPARE(changed.last().at(0).toModelIndex().row(), 1);
  }

  void cumulativeSecondsAndPoints() {
    LiveRunModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    for (int64_t step = 0; step < 4; ++step)
      for (int rank = 0; rank < 2; ++rank) model.addStep(makeStep(rank, step, 2.0 - 0.25 * step));

    const ranklab::RankProgress& r1 = model.rankAt(1);
    QCOMPARE(r1.step, 3);
    QVERIFY(std::abs(r1.compute_s - 4 * 0.015) < 1e-12);
    QVERIFY(std::abs(r1.comm_s - 4 * 0.020) < 1e-12);
    QVERIFY(std::abs(r1.wait_s - 4 * 0.020) < 1e-12);
    QVERIFY(std::abs(model.rankAt(0).wait_s - 4 * 0.010) < 1e-12);
    QCOMPARE(r1.samples, 256);
    QCOMPARE(r1.bytes_tx, 4000);
    QCOMPARE(model.index(1, LiveRunModel::CommColumn).data().toDouble(), r1.comm_s);

    QCOMPARE(r1.loss_points.size(), 4);
    QCOMPARE(r1.loss_points[0], QPointF(0, 2.0));
    QCOMPARE(r1.loss_points[3], QPointF(3, 1.25));
    QCOMPARE(model.latestStep(), 3);
    QCOMPARE(model.latestLoss(), 1.25);
  }

  void nonFiniteLossIsNotPlotted() {
    LiveRunModel model;
    model.addStep(makeStep(0, 0, 1.0));
    model.addStep(makeStep(0, 1, std::numeric_limits<double>::infinity()));
    model.addStep(makeStep(0, 2, std::nan("")));
    QCOMPARE(model.rankAt(0).loss_points.size(), 1);
    QCOMPARE(model.rankAt(0).step, 2);
  }

  void throughputOverTheWindow() {
    LiveRunModel model;
    // First step: 64 samples in the rank's first second.
    model.addStep(makeStep(0, 0, 1.0));
    QCOMPARE(model.rankAt(0).samples_per_s, 64.0);
    // One step a second for 10 s; then one rank speeds up to 4 steps a second.
    for (int64_t step = 1; step < 10; ++step) model.addStep(makeStep(0, step, 1.0));
    QCOMPARE(model.rankAt(0).samples_per_s, 64.0);
    StepRow fast = makeStep(0, 10, 1.0);
    for (int i = 1; i <= 40; ++i) {
      fast.step = 9 + i;
      fast.time_ns = 10 * kS + i * (kS / 4);
      model.addStep(fast);
    }
    // The last 5 s hold only fast steps: 4 steps/s × 64.
    QVERIFY(std::abs(model.rankAt(0).samples_per_s - 256.0) < 1e-9);
    model.addStep(makeStep(1, 0, 1.0));
    QVERIFY(std::abs(model.samplesPerSecond() - 320.0) < 1e-9);
  }

  void evals() {
    LiveRunModel model;
    QVERIFY(!model.latestEval());
    EvalRow e;
    e.step = 10;
    e.test_accuracy = 0.5;
    model.addEval(e);
    e.rank = 1;
    e.test_accuracy = 0.52;  // same step from another rank: replaces, does not add
    model.addEval(e);
    e.step = 20;
    e.test_accuracy = 0.7;
    model.addEval(e);
    QCOMPARE(model.latestEval()->test_accuracy, 0.7);
    QCOMPARE(model.testAccuracyPoints().size(), 2);
    QCOMPARE(model.testAccuracyPoints()[0], QPointF(10, 0.52));
  }

  void loadMatchesIncrementalAndResets() {
    std::vector<StepRow> steps;
    for (int rank = 0; rank < 3; ++rank)
      for (int64_t step = 0; step < 5; ++step)
        steps.push_back(makeStep(rank, step, 1.0 / (step + 1)));

    LiveRunModel live;
    for (const StepRow& s : steps) live.addStep(s);

    LiveRunModel stored;
    QAbstractItemModelTester tester(&stored,
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    stored.addStep(makeStep(9, 0, 3.0));  // leftovers of a previous run
    QSignalSpy resets(&stored, &QAbstractItemModel::modelReset);
    QSignalSpy inserted(&stored, &QAbstractItemModel::rowsInserted);
    EvalRow eval;
    eval.step = 4;
    eval.test_accuracy = 0.9;
    stored.load(42, steps, {eval});
    QCOMPARE(resets.count(), 1);
    QCOMPARE(inserted.count(), 0);
    QCOMPARE(stored.runId(), 42);
    QCOMPARE(stored.rankCount(), 3);
    for (int row = 0; row < 3; ++row) {
      QCOMPARE(stored.rankAt(row).rank, live.rankAt(row).rank);
      QCOMPARE(stored.rankAt(row).loss_points, live.rankAt(row).loss_points);
      QCOMPARE(stored.rankAt(row).compute_s, live.rankAt(row).compute_s);
      QCOMPARE(stored.rankAt(row).wait_s, live.rankAt(row).wait_s);
    }
    QCOMPARE(stored.latestEval()->test_accuracy, 0.9);

    stored.reset();
    QCOMPARE(stored.rowCount(), 0);
    QCOMPARE(stored.latestStep(), -1);
    QVERIFY(!stored.latestEval());
  }
};

QTEST_GUILESS_MAIN(LiveRunModelTest)
#include "test_live_run_model.moc"
