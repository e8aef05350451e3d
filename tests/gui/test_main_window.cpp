// The main window on a temporary run store: stored runs are listed, and selecting one
// draws its loss per rank and its time breakdown from the stored rows.
#include <QBarSet>
#include <QLineSeries>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include <QPushButton>
#include <QTabWidget>
#include "storage/run_store.h"
#include "views/curve_chart.h"
#include "views/live_page.h"
#include "views/main_window.h"
#include "views/memory_chart.h"
#include "views/models/runs_table_model.h"
#include "views/runs_page.h"
#include "views/setup_page.h"
#include "views/shard_chart.h"
#include "views/time_breakdown_chart.h"

using namespace ranklab;

namespace {

constexpr int64_t kMs = 1'000'000;

// A finished run of `world` ranks and `steps` steps, written the way the collector does.
int64_t storeRun(RunStore& store, const std::string& name, int world, int steps) {
  NewRun run;
  run.name = name;
  run.world = world;
  run.strategy = "allreduce";
  run.algorithm = "ring";
  run.epochs = 1;
  const int64_t id = store.createRun(run);

  RecordBatch batch;
  for (int rank = 0; rank < world; ++rank) {
    RankRow r;
    r.run_id = id;
    r.rank = rank;
    r.host = "localhost";
    r.status = "done";
    batch.ranks.push_back(r);
    for (int step = 0; step < steps; ++step) {
      StepRow s;
      s.run_id = id;
      s.rank = rank;
      s.step = step;
      s.samples = 32;
      s.forward_ns = 4 * kMs;
      s.backward_ns = 6 * kMs;
      s.comm_ns = 2 * kMs * (rank + 1);
      s.wait_ns = 1 * kMs;
      s.mem_params = 3'000'000;
      s.mem_grads = 2'000'000 * (rank + 1);
      s.mem_optimizer = 6'000'000 / (rank + 1) + step;  // the latest step's ledger is drawn
      s.mem_activations = 1'000'000;
      s.mem_buffers = 500'000 * rank;
      s.loss = 2.0 / (step + 1) + 0.1 * rank;
      s.time_ns = (step + 1) * 20 * kMs;
      batch.steps.push_back(s);
    }
  }
  EvalRow eval;
  eval.run_id = id;
  eval.step = steps - 1;
  eval.test_accuracy = 0.75;
  eval.test_loss = 0.6;
  batch.evals.push_back(eval);
  store.write(batch);
  store.finishRun(id, "done", 1.5, 1.2);
  return id;
}

// The stored 2-rank run's time and memory bars: each rank's, from its step rows.
// The run's events, marked on its charts at their steps (an overflow once for every rank
// that reported it, a launcher's line not at all), and two parameter-server shards' load:
// two intervals of 250 ms each, shard 1 twice as busy.
void storeEventsAndServerLoads(RunStore& store, int64_t run) {
  RecordBatch batch;
  batch.events = {{run, 0, 3, "overflow", "skipped", 0},
                  {run, 1, 3, "overflow", "skipped", 0},
                  {run, 1, 4, "fault", "kill: SIGKILL after step 4", 0},
                  {run, 1, 4, "failure", "rank 1 died after step 4", 0},
                  {run, -1, 4, "log", "launcher", 0}};
  for (int shard = 0; shard < 2; ++shard)
    for (int i = 0; i < 2; ++i) {
      ServerLoadRow l;
      l.run_id = run;
      l.rank = 2 + shard;
      l.shard = shard;
      l.interval_ns = 250 * kMs;
      l.pushes = 100;
      l.busy_ns = (shard + 1) * 50 * kMs;
      l.idle_ns = 100 * kMs;
      l.max_staleness = i + shard;
      batch.server_loads.push_back(l);
    }
  store.write(batch);
}

// What storeEventsAndServerLoads wrote, as the live page shows it.
void expectShardsAndMarks(LivePage* page) {
  ShardChart* shards = page->shardChart();
  QVERIFY(shards->isVisible());
  QCOMPARE(shards->barCount(), 2);
  const int top = RankBarsChart::barOfRow(0, 2);  // shard 0
  QCOMPARE(shards->partSet(ShardChart::Busy)->at(top), 20.0);
  QCOMPARE(shards->partSet(ShardChart::Idle)->at(top), 40.0);
  QCOMPARE(shards->partSet(ShardChart::Busy)->at(RankBarsChart::barOfRow(1, 2)), 40.0);
  QCOMPARE(ShardChart::describe(page->model()->series().shards()[1]),
           QStringLiteral("shard 1 · rank 3 · 400 pushes/s · held 0.0 ms/s · ≤ 2 versions behind"));

  const std::vector<ChartMark>& marks = page->lossChart()->marks();
  QCOMPARE(int(marks.size()), 2);
  QCOMPARE(marks[0].x, 3.0);
  QCOMPARE(marks[0].label, QStringLiteral("overflow"));
  QCOMPARE(marks[1].x, 4.0);
  QCOMPARE(marks[1].label, QStringLiteral("fault · failure"));
}

void expectBarsOfTwoRanks(LivePage* page) {
  TimeBreakdownChart* time = page->timeChart();
  QCOMPARE(time->barCount(), 2);
  const int bar0 = TimeBreakdownChart::barOfRow(0, 2);
  const int bar1 = TimeBreakdownChart::barOfRow(1, 2);
  QVERIFY(std::abs(time->phaseSet(forwardPhase)->at(bar0) - 4.0) < 1e-9);  // ms per step
  QVERIFY(std::abs(time->phaseSet(backwardPhase)->at(bar0) - 6.0) < 1e-9);
  QVERIFY(std::abs(time->phaseSet(commPhase)->at(bar0) - 2.0) < 1e-9);
  QVERIFY(std::abs(time->phaseSet(commPhase)->at(bar1) - 4.0) < 1e-9);
  QVERIFY(std::abs(time->phaseSet(waitPhase)->at(bar1) - 1.0) < 1e-9);
  QCOMPARE(page->rankGrid()->model()->rowCount(), 2);

  MemoryChart* memory = page->memoryChart();
  QCOMPARE(memory->barCount(), 2);
  QVERIFY(std::abs(memory->partSet(MemoryChart::Params)->at(bar0) - 3.0) < 1e-9);  // MB
  QVERIFY(std::abs(memory->partSet(MemoryChart::Grads)->at(bar1) - 4.0) < 1e-9);
  QVERIFY(std::abs(memory->partSet(MemoryChart::Optimizer)->at(bar0) - 6.000005) < 1e-9);
  QVERIFY(std::abs(memory->partSet(MemoryChart::Optimizer)->at(bar1) - 3.000005) < 1e-9);
  QVERIFY(std::abs(memory->partSet(MemoryChart::Activations)->at(bar1) - 1.0) < 1e-9);
  QVERIFY(std::abs(memory->partSet(MemoryChart::Buffers)->at(bar1) - 0.5) < 1e-9);
}

}  // namespace

class MainWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void selectingAStoredRunDrawsIt() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString db = dir.filePath(QStringLiteral("runs.db"));
    int64_t older = 0;
    int64_t newer = 0;
    {
      RunStore store(db.toStdString());
      older = storeRun(store, "two ranks", 2, 6);
      newer = storeRun(store, "three ranks", 3, 4);
      storeEventsAndServerLoads(store, older);
    }

    WorkbenchOptions options;
    options.db_path = db;
    MainWindow window(options);
    QSignalSpy shown(&window, &MainWindow::runShown);
    window.show();

    // The list arrives off the UI thread; the newest run opens by itself.
    QTRY_COMPARE_WITH_TIMEOUT(window.runsModel()->rowCount(), 2, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 10000);
    QCOMPARE(shown.last().at(0).toLongLong(), newer);
    window.showPage(MainWindow::LiveTab);  // a hidden page draws when it shows
    QCOMPARE(window.livePage()->lossChart()->seriesCount(), 3 + 1);  // ranks and their mean
    window.livePage()->setSmoothing(0);                              // the stored values themselves

    // Open the older run the way a person does: pick its row on the runs page, press Open.
    window.showPage(MainWindow::RunsTab);
    QTableView* view = window.runsView();
    QTRY_VERIFY(view->isVisible() && view->viewport()->width() > 100);
    int view_row = -1;
    for (int r = 0; r < view->model()->rowCount(); ++r)
      if (view->model()->index(r, 0).data(RunsTableModel::RunIdRole).toLongLong() == older)
        view_row = r;
    QVERIFY(view_row >= 0);
    const QRect cell = view->visualRect(view->model()->index(view_row, 1));
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, cell.center());
    auto* open = window.runsPage()->findChild<QPushButton*>(QStringLiteral("openRun"));
    QVERIFY(open);
    QTest::mouseClick(open, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(shown.last().at(0).toLongLong() == older, 10000);
    QCOMPARE(window.tabs()->currentIndex(), int(MainWindow::LiveTab));

    CurveChart* loss = window.livePage()->lossChart();
    QCOMPARE(loss->seriesCount(), 2 + 1);
    for (int rank = 0; rank < 2; ++rank) {
      QLineSeries* series = loss->seriesFor(rank);
      QVERIFY(series);
      QCOMPARE(series->name(), QStringLiteral("rank %1").arg(rank));
      const QList<QPointF> points = series->points();
      QCOMPARE(points.size(), 6);
      for (int step = 0; step < 6; ++step) {
        QCOMPARE(points[step].x(), double(step));
        QVERIFY(std::abs(points[step].y() - (2.0 / (step + 1) + 0.1 * rank)) < 1e-12);
      }
    }

    expectShardsAndMarks(window.livePage());
    if (QTest::currentTestFailed()) return;

    // The mean of the ranks: rank 1's loss is 0.1 above rank 0's at every step.
    const QList<QPointF> mean = loss->seriesFor(LivePage::kGlobalKey)->points();
    QCOMPARE(mean.size(), 6);
    QVERIFY(std::abs(mean[0].y() - (2.0 + 0.05)) < 1e-12);

    expectBarsOfTwoRanks(window.livePage());
    if (QTest::currentTestFailed()) return;

    const QString status = window.livePage()->statusText();
    QVERIFY2(status.contains(QStringLiteral("run %1").arg(older)), qPrintable(status));
    QVERIFY2(status.contains(QStringLiteral("step 5")), qPrintable(status));
    QVERIFY2(status.contains(QStringLiteral("test accuracy 75.0 %")), qPrintable(status));
  }

  // A text run (its "baseline" event: a bigram model's validation loss) charts its
  // validation loss against that bar; its steps' gradient norms and moving learning rate get
  // their charts; the status line reads the loss against the bar, and the speed in tokens/s.
  void aTextRunChartsItsValidationLossAgainstTheBigramModel() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString db = dir.filePath(QStringLiteral("runs.db"));
    {
      RunStore store(db.toStdString());
      const int64_t id = storeRun(store, "gpt", 2, 6);
      RecordBatch batch;
      batch.events = {{id, 0, 0, "baseline",
                       "bigram baseline 2.5634 nats/token: ...; samples of 64 tokens", 0}};
      for (int rank = 0; rank < 2; ++rank)
        for (int step = 0; step < 6; ++step) {
          StepRow s;
          s.run_id = id;
          s.rank = rank;
          s.step = step;
          s.loss = 2.0;
          s.grad_norm = 3.0 - 0.5 * step;
          s.lr = 1e-3 * (step + 1);
          s.time_ns = (step + 1) * 20 * kMs;
          batch.steps.push_back(s);
        }
      store.write(batch);
    }
    WorkbenchOptions options;
    options.db_path = db;
    MainWindow window(options);
    QSignalSpy shown(&window, &MainWindow::runShown);
    window.show();
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 10000);
    window.showPage(MainWindow::LiveTab);
    LivePage* page = window.livePage();
    CurveChart* evals = page->accuracyChart();
    QVERIFY2(evals->chart()->title().startsWith(QStringLiteral("Validation loss")),
             qPrintable(evals->chart()->title()));
    QCOMPARE(evals->seriesFor(0)->name(), QStringLiteral("validation loss"));
    QCOMPARE(evals->seriesFor(0)->at(0).y(), 0.6);
    QVERIFY(evals->seriesFor(1));  // the bigram model's bar
    QCOMPARE(evals->seriesFor(1)->at(0).y(), 2.5634);
    QVERIFY(page->gradNormChart()->isVisible());
    QCOMPARE(page->gradNormChart()->seriesFor(0)->at(0).y(), 3.0);
    QVERIFY(page->learningRateChart()->isVisible());
    QCOMPARE(page->learningRateChart()->seriesFor(0)->count(), 6);
    const QString status = page->statusText();
    QVERIFY2(status.contains(QStringLiteral("validation loss 0.6000 (bigram model 2.5634)")),
             qPrintable(status));
    // Its speed in tokens: 64 a sample.
    QVERIFY2(status.contains(QStringLiteral(" tokens/s")) && !status.contains("samples/s"),
             qPrintable(status));
  }

  // A parameter server's rank says hello but trains nothing: the loss legend lists the
  // workers and their mean only.
  void theLossCurvesLeaveOutRanksWithoutSteps() {
    RunSeries run;
    run.setWorld(2);  // the training ranks, as a launch tells the live model
    for (int rank : {0, 1, 2}) run.setRank({1, rank, "host", 100 + rank, "running"});
    for (int rank : {0, 1})
      for (int64_t step = 1; step <= 3; ++step) {
        StepRow s;
        s.run_id = 1;
        s.rank = rank;
        s.step = step;
        s.loss = 1.0 / double(step);
        s.time_ns = step * 1'000'000;
        run.addStep(s);
      }
    QCOMPARE(int(run.ranks().size()), 3);
    std::vector<int> keys;
    for (const Curve& c : lossCurves(run, XAxis::Step, 0.0, 100)) keys.push_back(c.key);
    QCOMPARE(keys, (std::vector<int>{0, 1, kMeanKey}));
  }

  void badJobFileIsShownAndNotLaunched() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString job = dir.filePath(QStringLiteral("bad.toml"));
    QFile file(job);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("[train]\nepochs = \"many\"\nno_such_key = 1\n");
    file.close();

    WorkbenchOptions options;
    options.db_path = dir.filePath(QStringLiteral("runs.db"));
    options.job_path = job;
    MainWindow window(options);
    QSignalSpy refreshed(&window, &MainWindow::runsRefreshed);
    window.show();
    QTRY_VERIFY_WITH_TIMEOUT(!refreshed.isEmpty(), 10000);
    SetupPage* setup = window.setupPage();
    QCOMPARE(setup->errorTextFor(QStringLiteral("train.epochs")),
             QStringLiteral("expected an integer, got string"));
    QVERIFY(!setup->launchButton()->isEnabled());
    window.launch();  // refused, with the reason on the setup page
    QVERIFY(!window.isRunning());
    QCOMPARE(window.tabs()->currentWidget(), static_cast<QWidget*>(setup));
  }

  void pagesAreNamedForTheCommandLine() {
    MainWindow::Page page;
    QVERIFY(MainWindow::pageFromName(QStringLiteral("runs"), &page));
    QCOMPARE(page, MainWindow::RunsTab);
    QVERIFY(MainWindow::pageFromName(QStringLiteral("Compare"), &page));
    QCOMPARE(page, MainWindow::CompareTab);
    QVERIFY(MainWindow::pageFromName(QStringLiteral("plan"), &page));
    QCOMPARE(page, MainWindow::PlanTab);
    QVERIFY(!MainWindow::pageFromName(QStringLiteral("graphs"), &page));
  }
};

QTEST_MAIN(MainWindowTest)
#include "test_main_window.moc"
