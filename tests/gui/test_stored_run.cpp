// Opening a stored run through RunStoreReader: a finished run is drawn from its step bins
// plus each rank's last steps, and the result is the same as reading every row; a
// one-step loss spike in a run of 1,000,000 step rows survives onto the raw loss curve.
#include <sqlite3.h>

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>

#include "storage/run_store.h"
#include "views/models/compare_models.h"
#include "views/run_store_reader.h"

using namespace ranklab;

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr double kSpike = 40.0;

// 100 steps/s; loss decays with a little noise; rank `slow` computes 3 ms more per step.
// A compressed run sends 1/50 of its raw bytes.
StepRow stepOf(int64_t run_id, int rank, int64_t step, int slow, bool compressed) {
  StepRow s;
  s.run_id = run_id;
  s.rank = rank;
  s.step = step;
  s.epoch = int(step / 1000);
  s.samples = 64;
  s.data_ns = 1 * kMs;
  s.forward_ns = (rank == slow ? 5 : 2) * kMs;
  s.backward_ns = 3 * kMs;
  s.comm_ns = 2 * kMs;
  s.wait_ns = (rank == slow ? 0 : 3) * kMs;
  s.update_ns = kMs / 2;
  s.loss =
      2.3 * std::exp(-double(step) / 800.0) + 0.3 + 0.05 * double((step * 7 + rank) % 11) / 11.0;
  s.bytes_tx = 900'000 + rank;
  s.bytes_rx = 800'000;
  s.bytes_raw = compressed ? 50 * s.bytes_tx : s.bytes_tx;
  s.time_ns = (step + 1) * 10 * kMs;
  return s;
}

int64_t writeRun(RunStore& store, int ranks, int64_t steps, int spike_rank, int64_t spike_step,
                 bool compressed = true) {
  NewRun run;
  run.name = "long";
  run.world = ranks;
  const int64_t id = store.createRun(run);
  RecordBatch batch;
  for (int r = 0; r < ranks; ++r) {
    for (int64_t k = 0; k < steps; ++k) {
      batch.steps.push_back(stepOf(id, r, k, 1, compressed));
      if (r == spike_rank && k == spike_step) batch.steps.back().loss = kSpike;
      if (batch.steps.size() >= 100'000) {
        store.write(batch);
        batch.clear();
      }
    }
  }
  store.write(batch);
  store.finishRun(id, "done", double(steps) / 100, double(steps) / 100);
  return id;
}

StoredRun load(const QString& db, int64_t run_id) {
  RunStoreReader reader(db);
  QSignalSpy loaded(&reader, &RunStoreReader::runLoaded);
  QSignalSpy failed(&reader, &RunStoreReader::failed);
  reader.loadRun(run_id);
  if (!loaded.wait(60'000))
    qFatal("run %lld not loaded: %s", (long long)run_id,
           failed.isEmpty() ? "timeout" : qPrintable(failed.at(0).at(0).toString()));
  return loaded.at(0).at(0).value<StoredRun>();
}

void dropBins(const QString& db, int64_t run_id) {
  sqlite3* raw = nullptr;
  QCOMPARE(sqlite3_open(qPrintable(db), &raw), SQLITE_OK);
  const QByteArray sql = "DELETE FROM step_bins WHERE run_id = " + QByteArray::number(run_id);
  QCOMPARE(sqlite3_exec(raw, sql.constData(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
}

double highest(const QList<QPointF>& points) {
  double y = -1;
  for (const QPointF& p : points) y = std::max(y, p.y());
  return y;
}

bool close(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max(1.0, std::max(std::abs(a), std::abs(b)));
}

}  // namespace

class TestStoredRun : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void binsDrawTheSameCurvesAsEveryRow() {
    const QString db = dir_.filePath(QStringLiteral("same.db"));
    int64_t binned_id = 0, rows_id = 0;
    {
      RunStore store(db.toStdString());
      binned_id = writeRun(store, 4, 20'000, 2, 12'345);
      rows_id = writeRun(store, 4, 20'000, 2, 12'345);
    }
    dropBins(db, rows_id);
    const StoredRun binned = load(db, binned_id);
    const StoredRun rows = load(db, rows_id);
    QCOMPARE(rows.bins_read, 0);
    QCOMPARE(rows.rows_read, 80'000);
    QVERIFY(binned.bins_read > 4 * 500);
    QVERIFY2(binned.rows_read < 4 * 1'000, qPrintable(QString::number(binned.rows_read)));
    QCOMPARE(binned.step_rows, 80'000);

    const RunSeries& a = binned.series;
    const RunSeries& b = rows.series;
    QCOMPARE(a.ranks().size(), b.ranks().size());
    for (size_t i = 0; i < a.ranks().size(); ++i) {
      const RankSeries& x = a.ranks()[i];
      const RankSeries& y = b.ranks()[i];
      QCOMPARE(x.steps, y.steps);
      QCOMPARE(x.samples, y.samples);
      QCOMPARE(x.bytes_tx, y.bytes_tx);
      QCOMPARE(x.bytes_raw, y.bytes_raw);
      QCOMPARE(x.bytes_raw, 50 * x.bytes_tx);
      QCOMPARE(x.total, y.total);
      QCOMPARE(x.recent, y.recent);
      QCOMPARE(x.step, y.step);
      QCOMPARE(x.loss, y.loss);
      QVERIFY(close(x.samples_per_s, y.samples_per_s));
      QCOMPARE(x.state, y.state);
      QCOMPARE(x.series.samples().size(), y.series.samples().size());
      QCOMPARE(x.series.stepsPerSample(), y.series.stepsPerSample());
      for (size_t k = 0; k < x.series.samples().size(); ++k) {
        const Sample& p = x.series.samples()[k];
        const Sample& q = y.series.samples()[k];
        QCOMPARE(p.step, q.step);
        QCOMPARE(p.count, q.count);
        QVERIFY(close(p.loss_sum, q.loss_sum));
        QCOMPARE(p.loss_min, q.loss_min);
        QCOMPARE(p.loss_max, q.loss_max);
        QVERIFY(close(p.time_s, q.time_s));
        QVERIFY(close(p.sent_mb, q.sent_mb));
        QVERIFY2(close(p.span_s, q.span_s), qPrintable(QStringLiteral("rank %1 sample %2: %3 vs %4")
                                                           .arg(x.rank)
                                                           .arg(k)
                                                           .arg(p.span_s)
                                                           .arg(q.span_s)));
      }
    }
    QCOMPARE(a.global().samples().size(), b.global().samples().size());
    QCOMPARE(a.stragglerRank(), 1);
    QCOMPARE(b.stragglerRank(), 1);
  }

  // A parameter server's rank reports no steps: the run's loss curve is the workers' mean,
  // not empty (it was: the mean took the fewest samples of any rank, the server's none).
  void aServerRankLeavesTheWorkersCurve() {
    const QString db = dir_.filePath(QStringLiteral("server.db"));
    int64_t id = 0;
    {
      RunStore store(db.toStdString());
      id = writeRun(store, 2, 200, -1, -1);
      RecordBatch batch;
      RankRow server;
      server.run_id = id;
      server.rank = 2;
      server.status = "done";
      batch.ranks.push_back(server);
      store.write(batch);
    }
    const StoredRun run = load(db, id);
    QCOMPARE(int(run.series.ranks().size()), 3);
    QVERIFY(!run.series.global().samples().empty());
    QVERIFY(run.series.global().samples().back().loss_count > 0);
  }

  // The compare page's ratio from stored runs: raw / sent summed from bins and last rows.
  void compareShowsTheCompressionRatio() {
    const QString db = dir_.filePath(QStringLiteral("ratio.db"));
    int64_t compressed = 0, plain = 0;
    {
      RunStore store(db.toStdString());
      compressed = writeRun(store, 2, 5'000, -1, -1, true);
      plain = writeRun(store, 2, 5'000, -1, -1, false);
    }
    const StoredRun a = load(db, compressed);
    const StoredRun b = load(db, plain);
    QVERIFY(a.bins_read > 0);  // the ratio survives the bins
    SummaryCompareModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setRuns({ComparedRun{a.run, a.series, {}}, ComparedRun{b.run, b.series, {}}});
    int row = 0;
    while (row < model.rowCount() &&
           model.headerData(row, Qt::Vertical).toString() != "compression (raw / sent bytes)")
      ++row;
    QVERIFY(row < model.rowCount());
    QCOMPARE(model.index(row, 0).data().toString(), QStringLiteral("50.0x"));
    QCOMPARE(model.index(row, 1).data().toString(), QStringLiteral("–"));
  }

  // 16 ranks x 62,500 steps; rank 5's loss jumps to 40 for one step.
  void spikeInAMillionRowsSurvives() {
    const QString db = dir_.filePath(QStringLiteral("million.db"));
    int64_t id = 0;
    {
      RunStore store(db.toStdString());
      id = writeRun(store, 16, 62'500, 5, 31'337);
    }
    const StoredRun run = load(db, id);
    QCOMPARE(run.step_rows, 1'000'000);
    QVERIFY(run.rows_read < 16 * 1'000);
    const RunSeries& series = run.series;
    QCOMPARE(series.ranks().size(), size_t(16));
    for (const RankSeries& r : series.ranks()) {
      QVERIFY(r.series.samples().size() <= 1'024);
      // A chart 400 px wide (100 points): rank 5 reaches the spike, the others stay low.
      const double top = highest(curvePoints(r.series, Metric::Loss, XAxis::Step, 0, 100));
      if (r.rank == 5)
        QCOMPARE(top, kSpike);
      else
        QVERIFY2(top < 2.7, qPrintable(QString::number(top)));
    }
    // The mean of 16 ranks rises by about spike / 16 at that step.
    const double mean_top =
        highest(curvePoints(series.global(), Metric::Loss, XAxis::Step, 0, 100));
    QVERIFY2(mean_top > 0.3 + kSpike / 16, qPrintable(QString::number(mean_top)));
  }

 private:
  QTemporaryDir dir_;
};

QTEST_GUILESS_MAIN(TestStoredRun)
#include "test_stored_run.moc"
