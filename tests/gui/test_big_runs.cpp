// The workbench on runs as big as imports make them (issue 57): a run of 1,000 ranks and a
// run whose one rank holds many long spans. The window must stay responsive while they
// load: a timer ticking on the UI thread never stops for long, the pages show a progress
// bar meanwhile, then the data and the line that says what a cap left out.
#include <QChart>
#include <QElapsedTimer>
#include <QItemSelectionModel>
#include <QProgressBar>
#include <QTableView>
#include <QTimer>
#include <QWheelEvent>
#include <QtTest>
#include <algorithm>
#include <fstream>
#include <memory>

#include "storage/run_store.h"
#include "views/analysis_page.h"
#include "views/breakdown_spread_chart.h"
#include "views/curve_chart.h"
#include "views/live_page.h"
#include "views/main_window.h"
#include "views/models/paged_rows.h"
#include "views/paged_table.h"
#include "views/rank_overview.h"
#include "views/runs_page.h"
#include "views/spread_curves.h"
#include "views/timeline_page.h"
#include "views/timeline_view.h"

namespace ranklab::gui_test {

constexpr int64_t kMs = 1'000'000;
constexpr int kRanks = 1000;
constexpr int kSpans = 100'000;  // without the cap the timeline paints each, on every paint
constexpr int kBoundMs = 500;    // generous: a frozen window stops for seconds

NewRun importedRun(const std::string& name, int world) {
  NewRun run;
  run.name = name;
  run.world = world;
  run.strategy = "pytorch-ddp";
  run.algorithm = "gloo";
  run.origin = "pytorch-import";
  return run;
}

StepRow stepOf(int64_t run_id, int rank, int step) {
  StepRow s;
  s.run_id = run_id;
  s.rank = rank;
  s.step = step;
  s.forward_ns = 4 * kMs + rank % 7 * kMs / 10;
  s.comm_ns = 2 * kMs;
  s.wait_ns = rank % 5 * kMs / 10;
  s.loss = 2.0 / (step + 1);
  s.time_ns = (step + 1) * 10 * kMs;
  return s;
}

// 1,000 ranks of 3 steps, each step an all-reduce: what 1,000 tiny rank traces import as.
int64_t storeManyRanks(RunStore& store) {
  const int64_t id = store.createRun(importedRun("1000 ranks", kRanks));
  RecordBatch batch;
  for (int rank = 0; rank < kRanks; ++rank)
    for (int step = 0; step < 3; ++step) {
      batch.steps.push_back(stepOf(id, rank, step));
      SpanRow c;
      c.run_id = id;
      c.rank = rank;
      c.step = step;
      c.kind = "all_reduce";
      c.part = step;
      c.end_ns = (step + 1) * 10 * kMs;
      c.start_ns = c.end_ns - 2 * kMs - rank % 5 * kMs / 10;
      batch.spans.push_back(c);
    }
  store.write(batch);
  store.finishRun(id, "done", 0.03, 0.03);
  return id;
}

// One rank's 2 steps and kSpans long events outside them, each on its own thread: each an
// "other:" span of its own.
int64_t storeManySpans(RunStore& store) {
  const int64_t id = store.createRun(importedRun("many spans", 1));
  RecordBatch batch;
  for (int step = 0; step < 2; ++step) batch.steps.push_back(stepOf(id, 0, step));
  for (int i = 0; i < kSpans; ++i) {  // starting 0.1 µs apart over 10 ms, 2 ms long each
    SpanRow s;
    s.run_id = id;
    s.kind = "other:worker";
    s.start_ns = 6 * kMs + int64_t(i) * 100;
    s.end_ns = s.start_ns + 2 * kMs + i % 1000;
    batch.spans.push_back(s);
  }
  store.write(batch);
  store.finishRun(id, "done", 0.02, 0.02);
  return id;
}

// Milliseconds this thread has waited, ready to run, for a CPU that other processes held
// (the second field of /proc/thread-self/schedstat); 0 where the kernel does not say.
qint64 runQueueWaitMs() {
  std::ifstream stats("/proc/thread-self/schedstat");
  long long on_cpu_ns = 0, waiting_ns = 0;
  stats >> on_cpu_ns >> waiting_ns;
  return waiting_ns / 1'000'000;
}

// The longest the UI thread went without ticking a 10 ms timer, from start() on, less the
// time it waited for a CPU held by others: this machine's 2 cores are shared with builds,
// and a freeze of the window is the window's own work (or its waiting on a lock or a disk).
// wallMs() is the same without that subtraction.
class StallWatch : public QObject {
 public:
  StallWatch() {
    timer_.setInterval(10);
    QObject::connect(&timer_, &QTimer::timeout, this, [this] {
      longest_wall_ms_ = std::max(longest_wall_ms_, since_.elapsed());
      longest_ms_ = std::max(longest_ms_, ownMs());
      since_.restart();
      waited_ms_ = runQueueWaitMs();
    });
  }
  void start() {
    longest_ms_ = longest_wall_ms_ = 0;
    since_.start();
    waited_ms_ = runQueueWaitMs();
    timer_.start();
  }
  qint64 longestMs() const { return std::max(longest_ms_, ownMs()); }
  qint64 wallMs() const { return std::max(longest_wall_ms_, since_.elapsed()); }

 private:
  qint64 ownMs() const { return since_.elapsed() - (runQueueWaitMs() - waited_ms_); }

  QTimer timer_;
  QElapsedTimer since_;
  qint64 waited_ms_ = 0;
  qint64 longest_ms_ = 0, longest_wall_ms_ = 0;
};

// Prints the longest stall (the figure docs/workbench.md quotes); true when under the bound.
bool underBound(const StallWatch& watch, const char* what) {
  qInfo("%s: longest stall %lld ms (%lld ms wall-clock, with the waits for a CPU)", what,
        watch.longestMs(), watch.wallMs());
  return watch.longestMs() < kBoundMs;
}

class BigRunsTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString db_;
  int64_t ranks_run_ = 0, spans_run_ = 0;

  // A window with `run_id` shown; null when it did not show within 20 s.
  std::unique_ptr<MainWindow> windowShowing(int64_t run_id) {
    WorkbenchOptions options;
    options.db_path = db_;
    options.open_run = run_id;
    auto window = std::make_unique<MainWindow>(options);
    window->resize(1400, 900);
    QSignalSpy shown(window.get(), &MainWindow::runShown);
    window->show();
    if (!shown.wait(20000) && shown.isEmpty()) return nullptr;
    return window;
  }

 private slots:
  void initTestCase() {
    db_ = dir_.filePath(QStringLiteral("runs.db"));
    RunStore store(db_.toStdString());
    ranks_run_ = storeManyRanks(store);
    spans_run_ = storeManySpans(store);
  }

  void aThousandRanksOpenWithoutFreezingTheWindow() {
    WorkbenchOptions options;
    options.db_path = db_;
    options.open_run = ranks_run_;
    MainWindow window(options);
    window.resize(1400, 900);
    StallWatch watch;
    watch.start();
    window.show();
    window.showPage(MainWindow::LiveTab);
    QSignalSpy shown(&window, &MainWindow::runShown);
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 20000);
    // The live page draws the ranks' spread and a few ranks' curves, not a thousand, and
    // says so.
    QVERIFY(window.livePage()->lossChart()->seriesCount() <= kWorstRanks + 1);
    QVERIFY2(window.livePage()->lossChart()->chart()->title().contains(
                 QStringLiteral("across 1,000 ranks")),
             qPrintable(window.livePage()->lossChart()->chart()->title()));
    QVERIFY(window.grab().width() > 0);  // paints every page element once
    QVERIFY2(underBound(watch, "the live page"),
             qPrintable(QStringLiteral("the live page stalled %1 ms").arg(watch.longestMs())));

    watch.start();
    window.showPage(MainWindow::AnalysisTab);
    AnalysisPage* analysis = window.analysisPage();
    QVERIFY(analysis->loading());  // the progress bar shows while the run is analysed
    QTRY_COMPARE_WITH_TIMEOUT(analysis->spreadChart()->ranks(), kRanks, 20000);
    QVERIFY(!analysis->loading());
    // Past kManyRanks, how the ranks' time spreads: the ranks that computed most named (a
    // rank's forward is 4 + rank % 7 tenths of a ms), not means of groups of ranks.
    QVERIFY(analysis->showsSpread());
    const PartSpread& compute = analysis->spreadChart()->spreads()[0];
    QCOMPARE(int(compute.most.size()), kMostRanks);
    for (int rank : compute.most) QCOMPARE(rank % 7, 6);
    QVERIFY2(analysis->spreadChart()->describePart(0).startsWith(QStringLiteral("compute: min")),
             qPrintable(analysis->spreadChart()->describePart(0)));
    // Every rank in a paged table, sortable, a rank found on its page.
    PagedTable* ranks = analysis->rankTable();
    QCOMPARE(ranks->model()->totalRows(), kRanks);
    QCOMPARE(ranks->model()->rowCount(), PagedRowsModel::kPageRows);
    QVERIFY(ranks->findRank(777));
    QCOMPARE(ranks->model()->page(), 777 / PagedRowsModel::kPageRows);
    const int row = ranks->view()->selectionModel()->selectedRows().value(0).row();
    QCOMPARE(ranks->model()->cellText(row, 0), QStringLiteral("777"));
    ranks->view()->sortByColumn(2, Qt::DescendingOrder);  // compute s, most first
    QCOMPARE(ranks->model()->page(), 0);
    QCOMPARE(ranks->model()->cellText(0, 0).toInt() % 7, 6);
    QCOMPARE(ranks->pageText(), QStringLiteral("rows 1–50 of 1,000"));
    QVERIFY(window.grab().width() > 0);
    QVERIFY2(underBound(watch, "the analysis page"),
             qPrintable(QStringLiteral("the analysis page stalled %1 ms").arg(watch.longestMs())));

    watch.start();
    window.showPage(MainWindow::RunsTab);
    window.selectRun(ranks_run_);
    QTRY_VERIFY_WITH_TIMEOUT(
        window.runsPage()->findChild<CurveChart*>(QStringLiteral("runPreview"))->seriesCount() > 0,
        20000);
    QVERIFY(window.grab().width() > 0);
    QVERIFY2(underBound(watch, "the runs page"),
             qPrintable(QStringLiteral("the runs page stalled %1 ms").arg(watch.longestMs())));
  }

  // The timeline of a thousand ranks: a window of rows that read, an overview of every rank
  // beside it, and the window moved to a rank by the rank field, the strip, Shift+wheel.
  void aThousandRanksTimelineShowsAWindowOfRanksBesideAllOfThem() {
    const auto shown = windowShowing(ranks_run_);
    QVERIFY(shown);
    MainWindow& window = *shown;
    window.showPage(MainWindow::TimelineTab);
    TimelinePage* page = window.timelinePage();
    TimelineView* view = page->view();
    QTRY_COMPARE_WITH_TIMEOUT(int(view->data().ranks.size()), kRanks, 20000);
    QVERIFY(view->rowsShown() < kRanks);
    QVERIFY(view->rowsShown() * TimelineView::kMinRowHeight <= view->plotRect().height());
    QVERIFY(page->overview()->isVisible());
    QVERIFY2(page->ranksText().startsWith(QStringLiteral("ranks 0–")),
             qPrintable(page->ranksText()));
    QVERIFY(view->showRank(777));
    QVERIFY(view->firstRow() <= 777 && 777 < view->firstRow() + view->rowsShown());
    const int row_y = view->plotRect().top() +
                      (777 - view->firstRow()) * view->plotRect().height() / view->rowsShown();
    const QString text = view->describeAt(QPoint(view->plotRect().left() + 2, row_y + 4));
    QVERIFY2(text.isEmpty() || text.startsWith(QStringLiteral("rank 777")), qPrintable(text));
    // A click on the strip's top shows the first ranks again; Shift+wheel moves three rows.
    QTest::mouseClick(page->overview(), Qt::LeftButton, {},
                      page->overview()->contentsRect().topLeft() + QPoint(5, 1));
    QCOMPARE(view->firstRow(), 0);
    QWheelEvent wheel(QPointF(200, 200), view->mapToGlobal(QPointF(200, 200)), {}, {0, -120},
                      Qt::NoButton, Qt::ShiftModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(view, &wheel);
    QCOMPARE(view->firstRow(), 3);
    QVERIFY(page->overview()
                ->describeAt(page->overview()->contentsRect().top())
                .contains(QStringLiteral("own work up to")));
  }

  void manySpansOpenCappedWithALineThatSaysSo() {
    const auto shown = windowShowing(spans_run_);
    QVERIFY(shown);
    MainWindow& window = *shown;
    StallWatch watch;
    watch.start();
    window.showPage(MainWindow::TimelineTab);
    TimelinePage* page = window.timelinePage();
    QVERIFY(page->loading());
    QTRY_VERIFY_WITH_TIMEOUT(!page->view()->data().empty(), 20000);
    QVERIFY(!page->loading());
    const TimelineData& data = page->view()->data();
    QCOMPARE(data.spans_total, int64_t(kSpans));
    QCOMPARE(int(data.spans.size()), SpanCap::kPerRank);
    QVERIFY2(page->statusText().startsWith(QStringLiteral("showing 2,000 of 100,000 spans")),
             qPrintable(page->statusText()));
    QVERIFY(window.grab().width() > 0);
    QVERIFY2(underBound(watch, "the timeline"),
             qPrintable(QStringLiteral("the timeline stalled %1 ms").arg(watch.longestMs())));

    // Zoomed in on 0.2 ms: the spans in view are laid out again, without a stall.
    watch.start();
    TimelineView* view = page->view();
    const auto inView = [view](const TimelineSpan& s) {
      return s.end_ms >= view->viewBeginMs() && s.start_ms <= view->viewEndMs();
    };
    double first = data.end_ms;
    for (const TimelineSpan& s : data.spans) first = std::min(first, s.start_ms);
    const QRect plot = view->plotRect();
    const double span_ms = view->viewEndMs() - view->viewBeginMs();
    view->zoom(span_ms / 0.2, plot.left() + (first - view->viewBeginMs()) / span_ms * plot.width());
    const auto& before = view->data().spans;
    QVERIFY(!std::all_of(before.begin(), before.end(), inView));  // the longest, anywhere
    QTRY_VERIFY_WITH_TIMEOUT(
        !page->loading() && !view->data().spans.empty() &&
            std::all_of(view->data().spans.begin(), view->data().spans.end(), inView),
        20000);
    QVERIFY(window.grab().width() > 0);
    QVERIFY2(underBound(watch, "zooming"),
             qPrintable(QStringLiteral("zooming stalled %1 ms").arg(watch.longestMs())));
  }
};

}  // namespace ranklab::gui_test

QTEST_MAIN(ranklab::gui_test::BigRunsTest)
#include "test_big_runs.moc"
