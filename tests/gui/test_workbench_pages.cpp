// The runs, compare and timeline pages of the real window on a temporary run store:
// comparing two stored runs shows the settings that differ; the runs page renames, tags,
// exports and deletes through the store reader; the timeline draws a window of steps; the
// analysis page names a run's straggler;
// charts export as PNG and SVG.
#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <memory>

#include "engine/job/job_spec.h"
#include "storage/run_store.h"
#include "tests/gui/stored_runs_fixture.h"
#include "views/analysis_page.h"
#include "views/chart_export.h"
#include "views/compare_page.h"
#include "views/curve_chart.h"
#include "views/live_page.h"
#include "views/main_window.h"
#include "views/models/paged_rows.h"
#include "views/models/runs_table_model.h"
#include "views/models/workbench_settings.h"
#include "views/paged_table.h"
#include "views/rank_breakdown_chart.h"
#include "views/run_store_reader.h"
#include "views/runs_page.h"
#include "views/timeline_page.h"
#include "views/timeline_view.h"

using namespace ranklab;
using namespace ranklab::gui_test;

namespace {

// The window on the fixture's store, `run` shown on `page`.
std::unique_ptr<MainWindow> windowShowing(const Fixture& f, int64_t run, MainWindow::Page page) {
  WorkbenchOptions options;
  options.db_path = f.db;
  options.open_run = run;
  auto window = std::make_unique<MainWindow>(options);
  QSignalSpy shown(window.get(), &MainWindow::runShown);
  window->show();
  if (!QTest::qWaitFor([&] { return !shown.isEmpty(); }, 10000))
    qFatal("run %lld not shown", (long long)run);
  window->showPage(page);
  return window;
}

}  // namespace

class WorkbenchPagesTest : public QObject {
  Q_OBJECT

 private slots:
  void comparingTwoStoredRunsShowsTheirDifferingSettings() {
    Fixture f;
    {  // each run's final accuracy, for the trade-off chart
      RunStore store(f.db.toStdString());
      RecordBatch batch;
      batch.evals = {EvalRow{f.ring, 0, 7, 0, 0.5, 0.80, 0}, EvalRow{f.mpi, 0, 7, 0, 0.4, 0.85, 0}};
      store.write(batch);
    }
    WorkbenchOptions options;
    options.db_path = f.db;
    MainWindow window(options);
    window.show();
    QTRY_COMPARE_WITH_TIMEOUT(window.runsModel()->rowCount(), 2, 10000);

    // Select both runs on the runs page and press "Compare selected", as a person does.
    window.showPage(MainWindow::RunsTab);
    window.runsView()->selectAll();
    auto* compare = window.runsPage()->findChild<QPushButton*>(QStringLiteral("compareRuns"));
    QTest::mouseClick(compare, Qt::LeftButton);
    QCOMPARE(window.tabs()->currentIndex(), int(MainWindow::CompareTab));
    ComparePage* page = window.comparePage();
    QTRY_VERIFY_WITH_TIMEOUT(page->settingsModel()->rowCount() > 0, 10000);
    const QStringList keys = page->settingsModel()->differingKeys();
    QCOMPARE(keys, (QStringList{"name", "parallel.ranks", "parallel.algorithm"}));
    QVERIFY(page->settingsView()->isVisible());
    QCOMPARE(page->settingsModel()->columnCount(), 3);
    QCOMPARE(page->summaryModel()->columnCount(), 2);
    QCOMPARE(page->chart()->seriesCount(), 2);  // one curve per run
    QVERIFY(page->chart()->seriesFor(int(f.ring))->count() > 0);
    // Two runs: the second's step time against the first's, by rank and phase (ranklab diff);
    // the fixture's runs take the same path (rank 0's compute, then the all-reduce).
    const auto* diff_note = page->findChild<QLabel*>(QStringLiteral("stepTimeDiffNote"));
    QTRY_VERIFY_WITH_TIMEOUT(diff_note->text().contains(QStringLiteral("over the 8 steps both")),
                             10000);
    QVERIFY(page->diffTable()->isVisible());
    QVERIFY2(diff_note->text().contains(QStringLiteral("no piece of the path changed")),
             qPrintable(diff_note->text()));

    // MB sent against accuracy: one point per run; the front is drawn once two runs are on it.
    page->findChild<QComboBox*>(QStringLiteral("compareMetric"))->setCurrentIndex(3);
    QCOMPARE(page->chart()->seriesFor(int(f.mpi))->count(), 1);
    QCOMPARE(page->chart()->seriesFor(int(f.mpi))->at(0).y(), 85.0);
    QCOMPARE(page->chart()->seriesFor(int(f.ring))->at(0).y(), 80.0);
    QVERIFY(!page->findChild<QComboBox*>(QStringLiteral("compareXAxis"))->isEnabled());
    QCOMPARE(WorkbenchSettings::compareCurve(), 3);  // remembered for the next window
    page->findChild<QComboBox*>(QStringLiteral("compareMetric"))->setCurrentIndex(0);
  }

  void runsPageEditsGoThroughTheStore() {
    Fixture f;
    WorkbenchOptions options;
    options.db_path = f.db;
    MainWindow window(options);
    window.show();
    QTRY_COMPARE_WITH_TIMEOUT(window.runsModel()->rowCount(), 2, 10000);
    RunsPage* runs = window.runsPage();
    QSignalSpy refreshed(&window, &MainWindow::runsRefreshed);

    emit runs->renameRequested(f.ring, QStringLiteral("baseline"));
    emit runs->tagsRequested(f.ring, {QStringLiteral("teaching"), QStringLiteral("ring")});
    QTRY_VERIFY_WITH_TIMEOUT(refreshed.count() >= 2, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(
        window.runsModel()->runAt(window.runsModel()->rowOfRun(f.ring)).name == "baseline", 10000);
    QTRY_COMPARE_WITH_TIMEOUT(window.runsModel()->tagsAt(window.runsModel()->rowOfRun(f.ring)),
                              (QStringList{"ring", "teaching"}), 10000);
    runs->filterEdit()->setText(QStringLiteral("teaching"));  // tags are searchable
    QCOMPARE(runs->proxy()->rowCount(), 1);
    runs->filterEdit()->clear();

    const QString csv = f.dir.filePath(QStringLiteral("run.csv"));
    emit runs->exportCsvRequested(f.mpi, csv);
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(csv) && QFileInfo(csv).size() > 0, 10000);
    QFile file(csv);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = file.readAll().split('\n');
    QVERIFY(lines.first().startsWith("run_id,rank,step,"));
    QCOMPARE(lines.size(), 1 + 3 * 8 + 1);  // header, 3 ranks x 8 steps, final newline

    // The same run as a trace, from the Export run menu's second entry.
    QVERIFY(runs->findChild<QAction*>(QStringLiteral("exportTrace")));
    const QString trace_path = f.dir.filePath(QStringLiteral("trace.json"));
    emit runs->exportTraceRequested(f.mpi, trace_path);
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(trace_path), 10000);
    QFile trace_file(trace_path);
    QVERIFY(trace_file.open(QIODevice::ReadOnly));
    const QJsonArray events =
        QJsonDocument::fromJson(trace_file.readAll())["traceEvents"].toArray();
    int processes = 0, forwards = 0;
    for (const QJsonValue& e : events) {
      processes += e["name"] == QStringLiteral("process_name");
      forwards += e["name"] == QStringLiteral("forward");
    }
    QCOMPARE(processes, 3);
    QCOMPARE(forwards, 3 * 8);

    emit runs->deleteRequested({f.mpi});
    QTRY_COMPARE_WITH_TIMEOUT(window.runsModel()->rowCount(), 1, 10000);
    RunStore store(f.db.toStdString());
    QVERIFY(!store.run(f.mpi));
    QVERIFY(store.steps(f.mpi).empty());
  }

  void timelineDrawsAWindowOfTheShownRun() {
    Fixture f;
    const std::unique_ptr<MainWindow> shown = windowShowing(f, f.mpi, MainWindow::TimelineTab);
    MainWindow& window = *shown;
    TimelineView* view = window.timelinePage()->view();
    QTRY_VERIFY_WITH_TIMEOUT(!view->data().empty(), 10000);
    QCOMPARE(int(view->data().ranks.size()), 3);
    QCOMPARE(view->data().last_step, 7);  // follows the latest steps
    QCOMPARE(view->data().aligned_at_step, view->data().first_step);
    // The critical path: rank 0 waits least, so it is the last to arrive at every step.
    for (const TimelineBar& b : view->data().bars)
      QCOMPARE(b.on_path, b.rank == 0 && b.phase != waitPhase);

    // Hover: the middle of the first bar of rank 0 names it.
    const TimelineBar& bar = view->data().bars.front();
    const QRect plot = view->plotRect();
    const double x = plot.left() + (0.5 * (bar.start_ms + bar.end_ms) - view->viewBeginMs()) /
                                       (view->viewEndMs() - view->viewBeginMs()) * plot.width();
    const QString text = view->describeAt(QPoint(int(x), plot.top() + 10));
    QVERIFY2(text.startsWith(QStringLiteral("rank 0 · step")), qPrintable(text));
    QVERIFY2(text.endsWith(QStringLiteral("on the critical path: the others waited for it")),
             qPrintable(text));
    const double span = view->viewEndMs() - view->viewBeginMs();
    view->zoom(2.0, plot.center().x());
    QVERIFY(std::abs((view->viewEndMs() - view->viewBeginMs()) - span / 2) < 1e-9);
    view->pan(50);
    view->fit();
    QCOMPARE(view->viewEndMs() - view->viewBeginMs(), span);
  }

  // A live run's analysis is asked for again each interval, but not while one is pending: a
  // thousand ranks' takes longer than the interval, and each new request discarded the last.
  void aLiveAnalysisIsNotAskedForAgainWhileOneIsPending() {
    AnalysisPage page;
    QSignalSpy asked(&page, &AnalysisPage::analysisRequested);
    page.show();
    page.setRun(7, QStringLiteral("run 7"), true);
    QTRY_COMPARE(asked.count(), 1);  // on show or on setRun, once
    QTest::qWait(AnalysisPage::kLiveIntervalMs + 300);
    QCOMPARE(asked.count(), 1);
    page.setAnalysis(7, RunAnalysis{});
    QTRY_COMPARE_WITH_TIMEOUT(asked.count(), 2, AnalysisPage::kLiveIntervalMs + 1000);
  }

  // A run with a rank behind opens on the Behind tab, once: a live run's analysis comes again
  // every 2 s, and the tab a person chose since stays.
  void theBehindTabComesForwardOncePerRun() {
    AnalysisPage page;
    page.setRun(7, QStringLiteral("run 7"), false);
    RunAnalysis analysis;
    analysis.hang = HangReport{};
    analysis.hang->status = "failed";
    analysis.hang->ranks_behind = {RankProgress{3, "node1", 5, 10, "update"}};
    page.setAnalysis(7, analysis);
    QCOMPARE(page.tables()->currentIndex(), int(AnalysisPage::BehindTab));
    QCOMPARE(page.behindTable()->model()->cellText(0, 0), QStringLiteral("3"));
    QCOMPARE(page.behindTable()->model()->cellText(0, 4), QStringLiteral("update"));
    page.tables()->setCurrentIndex(AnalysisPage::RanksTab);
    page.setAnalysis(7, analysis);
    QCOMPARE(page.tables()->currentIndex(), int(AnalysisPage::RanksTab));
  }

  // The analysis page takes the shown run apart: a bar per rank, the straggler named (the
  // fixture's rank 0 waits least, so it arrives last: ranks 1 and 2 wait 1 and 2 ms for it at
  // each of 8 steps) and the critical path through its compute.
  void analysisNamesTheStragglerAndThePathOfTheShownRun() {
    Fixture f;
    const std::unique_ptr<MainWindow> shown = windowShowing(f, f.mpi, MainWindow::AnalysisTab);
    MainWindow& window = *shown;
    AnalysisPage* page = window.analysisPage();
    QTRY_COMPARE_WITH_TIMEOUT(page->breakdownChart()->barCount(), 3, 10000);
    const PagedRowsModel* stragglers = page->stragglerTable()->model();
    QTRY_COMPARE_WITH_TIMEOUT(stragglers->rowCount(), 1, 10000);  // only rank 0 was ever last
    QCOMPARE(stragglers->cellText(0, 0), QStringLiteral("0"));
    QCOMPARE(stragglers->cellText(0, 2), QStringLiteral("8"));
    QCOMPARE(stragglers->cellText(0, 5), QStringLiteral("0.024"));
    QVERIFY(!page->showsSpread());
    QCOMPARE(page->rankTable()->model()->totalRows(), 3);
    QCOMPARE(page->collectiveTable()->item(0, 0)->text(), QStringLiteral("all_reduce"));
    // Rank 0 all along: its backward (6 ms a step) and its time between the fixture's steps
    // (20 ms apart, 13 ms long) lead.
    QStringList path;
    for (int row = 0; row < page->pathTable()->rowCount(); ++row)
      path << page->pathTable()->item(row, 1)->text() + QLatin1Char(' ') +
                  page->pathTable()->item(row, 2)->text();
    QVERIFY2(path.size() >= 3, qPrintable(path.join(QStringLiteral(", "))));
    QVERIFY2(path.mid(0, 2).contains(QStringLiteral("rank 0 backward")),
             qPrintable(path.join(QStringLiteral(", "))));
    QVERIFY2(path.contains(QStringLiteral("all ranks all_reduce")),
             qPrintable(path.join(QStringLiteral(", "))));
  }

  // A sampled step's device pieces: a strip along the top of the row, grey where the device
  // was idle between pieces, each piece drawn over it; hovering the strip names the piece.
  void timelineDrawsTheDeviceStripOfASampledStep() {
    StepRow step;  // 10 ms: forward 4, backward 4, update 2, ending at 100 ms
    step.step = 3;
    step.forward_ns = 4'000'000;
    step.backward_ns = 4'000'000;
    step.update_ns = 2'000'000;
    step.time_ns = 100'000'000;
    // On the device: layer 0 forward 90-93 ms, idle 93-96, layer 0 backward 96-99.
    const std::vector<SpanRow> spans = {{1, 0, 3, "dev-fwd", 90'000'000, 93'000'000, 0},
                                        {1, 0, 3, "dev-bwd", 96'000'000, 99'000'000, 0}};
    TimelineView view;
    view.resize(900, 300);
    view.setData(buildTimeline(1, {step}, false, spans));
    QCOMPARE(int(view.data().device.size()), 2);
    const QRect plot = view.plotRect();
    const auto xAt = [&](double ms) {
      return int(plot.left() + (ms - view.viewBeginMs()) / (view.viewEndMs() - view.viewBeginMs()) *
                                   plot.width());
    };
    const QImage image = view.grab().toImage();
    const int top = plot.top() + 8;  // inside the strip (the row's top third)
    QCOMPARE(image.pixelColor(xAt(4.5), top), QColor(0xc8, 0xc8, 0xc8));  // idle: grey
    QVERIFY(image.pixelColor(xAt(1.5), top) != QColor(0xc8, 0xc8, 0xc8));
    QVERIFY(image.pixelColor(xAt(1.5), top) != image.pixelColor(xAt(7.5), top));  // fwd, bwd
    const QString piece = view.describeAt(QPoint(xAt(7.5), top));
    QVERIFY2(piece.startsWith(QStringLiteral("rank 0 · step 3 · layer 0 backward on the device")),
             qPrintable(piece));
    QVERIFY2(piece.contains(QStringLiteral("(67 %)")), qPrintable(piece));
    const QString bar = view.describeAt(QPoint(xAt(1.5), plot.top() + 40));
    QVERIFY2(bar.contains(QStringLiteral("forward")), qPrintable(bar));
  }

  void latestWindowEndsAtTheLastStepEveryRankStored() {
    Fixture f;
    {
      RunStore store(f.db.toStdString());  // rank 0 of the mpi run is two steps ahead
      RecordBatch batch;
      for (int64_t step = 8; step < 10; ++step) {
        StepRow s;
        s.run_id = f.mpi;
        s.step = step;
        s.time_ns = (step + 1) * 20 * kMs;
        batch.steps.push_back(s);
      }
      store.write(batch);
      QCOMPARE(store.lastCommonStep(f.mpi), 7);
      QCOMPARE(store.lastCommonStep(12345), -1);
    }
    RunStoreReader reader(f.db);
    QSignalSpy loaded(&reader, &RunStoreReader::timelineLoaded);
    TimelineRequest latest;
    latest.run_id = f.mpi;
    latest.latest = 3;
    reader.loadTimeline(latest);
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 10000);
    const auto timeline = loaded.first().at(1).value<TimelineData>();
    QCOMPARE(int(timeline.ranks.size()), 3);
    QCOMPARE(timeline.first_step, 5);
    QCOMPARE(timeline.last_step, 7);
  }

  void chartsExportAsPngAndSvg() {
    Fixture f;
    WorkbenchOptions options;
    options.db_path = f.db;
    options.open_run = f.ring;
    MainWindow window(options);
    QSignalSpy shown(&window, &MainWindow::runShown);
    window.show();
    window.showPage(MainWindow::LiveTab);
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 10000);
    const QString png = f.dir.filePath(QStringLiteral("loss.png"));
    const QString svg = f.dir.filePath(QStringLiteral("loss.svg"));
    QCOMPARE(exportChart(window.livePage()->lossChart(), png), QString());
    QCOMPARE(exportChart(window.livePage()->lossChart(), svg), QString());
    QVERIFY(!QImage(png).isNull());
    QFile file(svg);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY(file.readAll().contains("<svg"));
  }
};

QTEST_MAIN(WorkbenchPagesTest)
#include "test_workbench_pages.moc"
