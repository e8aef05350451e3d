// The live page on 1,024 ranks (issue 59): past kManyRanks it draws each metric's spread
// across the ranks as bands with the median and the worst ranks' own lines, followed live
// (rows arriving step by step) or opened from the store (bins). Three slow ranks are
// planted; they must be the ones drawn and named. A simulated run has no loss: no loss
// chart, no "loss 0.0000".
#include <QAreaSeries>
#include <QChart>
#include <QElapsedTimer>
#include <QLegendMarker>
#include <QLineSeries>
#include <QTableView>
#include <QThread>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <limits>

#include "storage/run_store.h"
#include "views/curve_chart.h"
#include "views/live_page.h"
#include "views/loop_watch.h"
#include "views/main_window.h"
#include "views/models/log_model.h"
#include "views/rank_heat_map.h"
#include "views/spread_curves.h"
#include "views/stuck_panel.h"

namespace ranklab::gui_test {

constexpr int64_t kMs = 1'000'000;
constexpr int kRanks = 1024;
constexpr int kSteps = 40;
constexpr int kSlowest = 777;                         // the longest own work, waits least
const std::vector<int> kSlow = {100, 333, kSlowest};  // planted, slowest last

// A step of a run that synchronises every step: each rank's step ends at the same time; a
// slow rank works longer and waits less for the others.
StepRow stepOf(int64_t run_id, int rank, int step, double loss) {
  const int slow = int(std::find(kSlow.begin(), kSlow.end(), rank) - kSlow.begin());
  StepRow s;
  s.run_id = run_id;
  s.rank = rank;
  s.step = step;
  s.samples = 32;
  s.forward_ns = 8 * kMs + rank % 5 * kMs / 10;  // the others differ a little
  if (slow < int(kSlow.size())) s.forward_ns = 12 * kMs + slow * kMs;
  s.comm_ns = 2 * kMs;
  s.wait_ns = 20 * kMs - s.forward_ns - s.comm_ns;
  s.bytes_tx = s.bytes_rx = 4'000'000;
  s.allreduces = 3;
  s.loss = loss;
  s.time_ns = (step + 1) * 20 * kMs;
  return s;
}

std::vector<StepRow> stepRows(int64_t run_id, int step, bool with_loss) {
  std::vector<StepRow> rows;
  for (int rank = 0; rank < kRanks; ++rank) {
    const double loss =
        with_loss ? 2.0 / (step + 1) + rank % 7 * 0.01 : std::numeric_limits<double>::quiet_NaN();
    rows.push_back(stepOf(run_id, rank, step, loss));
  }
  return rows;
}

std::vector<int> sorted(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

// The names in the chart's legend.
QStringList legendNames(CurveChart* chart) {
  QStringList names;
  for (QLegendMarker* marker : chart->chart()->legend()->markers()) names << marker->label();
  return names;
}

// The time-per-step chart: two bands, a point per step, the median, and the planted ranks
// named in the legend.
void expectSpreadOfSlowRanks(CurveChart* chart) {
  QCOMPARE(chart->bandCount(), 2);
  QAreaSeries* range = chart->bandFor(kRangeBandKey);
  QVERIFY(range);
  QCOMPARE(range->upperSeries()->count(), kSteps);
  // The range reaches the slowest's own work, the median stays with the others.
  QVERIFY(chart->seriesFor(kMedianKey));
  for (int rank : kSlow) QVERIFY2(chart->seriesFor(rank), qPrintable(QString::number(rank)));
  QCOMPARE(chart->seriesCount(), 1 + kWorstRanks);
  const QStringList legend = legendNames(chart);
  for (int rank : kSlow)
    QVERIFY2(legend.contains(QStringLiteral("rank %1").arg(rank)), qPrintable(legend.join(", ")));
  QVERIFY2(legend.size() <= 3 + kWorstRanks, qPrintable(legend.join(", ")));
}

// A live page following 1,024 ranks whose kSteps steps have all arrived.
struct FollowedLive {
  LogModel log;
  LiveRunModel model;
  LivePage page{&log};
  FollowedLive() {
    model.setWorld(kRanks);
    page.resize(1400, 1000);
    page.setModel(&model);
    page.show();
    for (int step = 0; step < kSteps; ++step) model.addSteps(stepRows(1, step, true));
  }
};

class ManyRanksTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;

 private slots:
  // Rows arriving step by step as from a live run: each step's spread computed as it
  // completes, the slow ranks drawn, the last to arrive named.
  void followedLiveTheSpreadsShowThePlantedSlowRanks() {
    FollowedLive followed;
    LiveRunModel& model = followed.model;
    LivePage& page = followed.page;
    const RunSeries& run = model.series();
    QVERIFY(run.manyRanks());
    QCOMPARE(int(run.spread().samples().size()), kSteps);
    const Quantiles& last = run.spread().samples().back()[SpreadMetric::StepMs];
    QCOMPARE(last.median, 20.0f);
    QElapsedTimer drawing;
    drawing.start();
    page.refreshNow();
    qInfo("drew the live page of %d ranks in %lld ms", kRanks, drawing.elapsed());

    QVERIFY(page.stepTimeChart()->isVisible());
    expectSpreadOfSlowRanks(page.stepTimeChart());
    const SpreadView busy{SpreadMetric::StepMs, Metric::StepMs, false, Qt::black, Metric::BusyMs};
    QCOMPARE(sorted(worstRanks(run, busy)), sorted(kSlow));
    QCOMPARE(worstRanks(run, busy).front(), kSlowest);
    QCOMPARE(page.lossChart()->bandCount(), 2);
    QVERIFY(page.lossChart()->chart()->title().contains(QStringLiteral("across 1,024 ranks")));
    QCOMPARE(page.waitChart()->bandCount(), 2);
    QCOMPARE(page.bandwidthChart()->bandCount(), 2);
    QVERIFY2(page.statusText().contains(
                 QStringLiteral("last to arrive most often: rank 777, in 40 of the last 40")),
             qPrintable(page.statusText()));
    QVERIFY(page.grab().width() > 0);  // paints the bands once
  }

  // The heat-map: the slowest rank's row is the darkest, hovering it names it, clicking it
  // selects it in the grid. A rank the launcher found silent is named stuck at once, with
  // its last step, collectives and phase, in the status line and the stuck panel.
  void theHeatMapAndTheStuckPanelNameTheRanks() {
    FollowedLive followed;
    LiveRunModel& model = followed.model;
    LivePage& page = followed.page;
    page.refreshNow();
    RankHeatMap* map = page.heatMap();
    QVERIFY(map->isVisible());
    const HeatMapGrid& grid = map->grid();
    QTRY_VERIFY2(
        grid.rows > 100,
        qPrintable(QStringLiteral("%1 rows, %2 px high").arg(grid.rows).arg(map->height())));
    QCOMPARE(grid.columns, kSteps);
    // The darkest cell of every column is the slowest rank's (own work: time less waiting).
    for (int c = 0; c < grid.columns; ++c) {
      int worst = 0;
      for (int r = 1; r < grid.rows; ++r)
        if (grid.at(r, c) > grid.at(worst, c)) worst = r;
      QCOMPARE(grid.rankAt(worst, c), kSlowest);
    }
    const QRect plot = map->plotRect();
    int row_of_777 = -1;
    for (int r = 0; r < grid.rows && row_of_777 < 0; ++r)
      if (grid.rankAt(r, 0) == kSlowest) row_of_777 = r;
    const QPoint at(plot.left() + plot.width() / 2,
                    plot.top() + int((row_of_777 + 0.5) * plot.height() / grid.rows));
    QVERIFY2(map->describe(at).startsWith(QStringLiteral("rank 777")),
             qPrintable(map->describe(at)));
    QTest::mouseClick(map, Qt::LeftButton, {}, at);
    const QModelIndexList chosen = page.rankGrid()->selectionModel()->selectedRows();
    QCOMPARE(chosen.size(), 1);
    QCOMPARE(model.rankAt(chosen.front().row()).rank, kSlowest);
    // Zoomed to a few ranks around the pointer, then back to all.
    for (int i = 0; i < 12; ++i) map->zoom(at, 0.5, true);
    QVERIFY2(map->grid().row_count < 64, qPrintable(QString::number(map->grid().row_count)));
    QVERIFY(map->describe(at).contains(QStringLiteral("rank ")));
    map->showAll();
    QCOMPARE(map->grid().row_count, kRanks);

    QVERIFY(!page.stuckPanel()->isVisible());
    EventRow quiet{1,
                   333,
                   kSteps - 1,
                   "quiet",
                   "rank 333 silent for 2.0 s after step 39 (no message, not even a heartbeat)",
                   0};
    model.addEvent(quiet);
    page.refreshNow();
    QVERIFY(page.stuckPanel()->isVisible());
    const StuckReport& report = page.stuckPanel()->report();
    QCOMPARE(int(report.ranks.size()), 1);
    QCOMPARE(report.ranks.front().rank, 333);
    QCOMPARE(report.others, kRanks - 1);
    QVERIFY2(page.statusText().contains(QStringLiteral(
                 "stuck: rank 333 silent after step 39 (collective 120, last doing comm)")),
             qPrintable(page.statusText()));
    QCOMPARE(model.rankAt(model.rowOfRank(333)).state, RankState::Silent);
    model.addEvent({1, 333, kSteps - 1, "heard", "rank 333 heard again after step 39", 0});
    page.refreshNow();
    QVERIFY(!page.stuckPanel()->isVisible());
    QVERIFY(!page.statusText().contains(QStringLiteral("stuck")));
  }

  // A finished simulated run opened from the store: read from its bins, the same spreads,
  // and no loss chart nor loss figure.
  // What bench/run-thousand-ranks reads at the end of a run: a 300 ms stall of the event
  // loop is its worst lateness, the rest of its ticks on time.
  void theLoopWatchSeesAStall() {
    LoopWatch watch(nullptr);
    QTimer::singleShot(200, [] { QThread::msleep(300); });
    QTest::qWait(1200);
    QVERIFY2(watch.lateMaxMs() >= 250, qPrintable(QString::fromStdString(watch.summary())));
    QVERIFY2(watch.lateMs(0.5) < watch.lateMaxMs() / 2,
             qPrintable(QString::fromStdString(watch.summary())));
    QVERIFY(watch.residentMb() > 1);
    QVERIFY(QString::fromStdString(watch.summary()).contains(QStringLiteral("a minute before")));
  }

  void aStoredSimulatedRunOpensWithSpreadsAndNoLoss() {
    const QString db = dir_.filePath(QStringLiteral("runs.db"));
    int64_t id = 0;
    {
      RunStore store(db.toStdString());
      NewRun run;
      run.name = "1024 ranks";
      run.world = kRanks;
      run.strategy = "allreduce";
      run.algorithm = "ring";
      run.origin = "simulated";
      id = store.createRun(run);
      RecordBatch batch;
      for (int step = 0; step < kSteps; ++step)
        for (StepRow& row : stepRows(id, step, false)) batch.steps.push_back(row);
      store.write(batch);
      store.finishRun(id, "done", 1, 1);
    }
    WorkbenchOptions options;
    options.db_path = db;
    options.open_run = id;
    MainWindow window(options);
    window.resize(1400, 1000);
    QSignalSpy shown(&window, &MainWindow::runShown);
    QElapsedTimer opening;
    opening.start();
    window.show();
    window.showPage(MainWindow::LiveTab);
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 20000);
    qInfo("opened a stored run of %d ranks in %lld ms", kRanks, opening.elapsed());
    LivePage* page = window.livePage();
    page->refreshNow();
    expectSpreadOfSlowRanks(page->stepTimeChart());
    QVERIFY(!page->lossChart()->isVisible());
    QVERIFY(!page->accuracyChart()->isVisible());
    QVERIFY2(page->statusText().contains(QStringLiteral("no loss (simulated)")),
             qPrintable(page->statusText()));
    QVERIFY(!page->statusText().contains(QStringLiteral("loss 0")));
    const QModelIndex loss = page->rankGrid()->model()->index(0, LiveRunModel::LossColumn);
    QCOMPARE(loss.data().toString(), QStringLiteral("–"));
    QVERIFY2(page->statusText().contains(QStringLiteral("last to arrive most often: rank 777")),
             qPrintable(page->statusText()));
  }
};

}  // namespace ranklab::gui_test

QTEST_MAIN(ranklab::gui_test::ManyRanksTest)
#include "test_many_ranks.moc"
