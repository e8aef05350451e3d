// The Plan page running the real `ranklab plan` and `ranklab simulate` on the spirals MLP at
// 2 ranks: the first plan calibrates into a fresh calibration file (a couple of seconds, its
// progress in the page's log), the table fills, "Simulate" stores a simulated run, "Run this
// layout" hands the candidate's overrides to the window. In the window, the simulated run opens
// on the live page and a 2-stage layout is set on the form and launched for real. An invalid
// form and a launcher that cannot start are refused with the reason.
#include <QAction>
#include <QChart>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "launch/calibrate.h"
#include "storage/run_store.h"
#include "tests/support/elsewhere_calibration.h"
#include "views/curve_chart.h"
#include "views/live_page.h"
#include "views/main_window.h"
#include "views/models/job_draft.h"
#include "views/models/plan_table_model.h"
#include "views/plan_page.h"
#include "views/rank_heat_map.h"
#include "views/setup_page.h"

using namespace ranklab;

namespace {

constexpr int kCommandMs = 60000;

JobDraft spiralsOn2Ranks() {
  QFile file(QStringLiteral(RANKLAB_SOURCE_DIR "/resources/jobs/spirals.toml"));
  if (!file.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(file.fileName()));
  JobDraft draft;
  draft.loadText(file.readAll().toStdString(), "spirals.toml");
  draft.setValue("parallel.ranks", "2");
  return draft;
}

JobCommandOptions optionsIn(const QTemporaryDir& dir) {
  return {QStringLiteral(RANKLAB_CLI_PATH), QStringLiteral(RANKLAB_WORKER_PATH),
          dir.filePath(QStringLiteral("runs.db")), false};
}

}  // namespace

class PlanPageTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    qputenv("OMPI_ALLOW_RUN_AS_ROOT", "1");  // the calibration's ranks, where tests run as root
    qputenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    QVERIFY(calibration_dir_.isValid());
  }

  void plansSimulatesAndRunsALayout() {
    QTemporaryDir dir;
    const JobDraft draft = spiralsOn2Ranks();
    PlanPage page(draft, optionsIn(dir));
    page.show();
    QCOMPARE(page.ranksBox()->value(), 2);  // the form's
    page.calibrationEdit()->setText(calibrationFile());

    QSignalSpy planned(&page, &PlanPage::planFinished);
    page.plan();
    QVERIFY(page.isBusy());
    QVERIFY(planned.wait(kCommandMs));
    QCOMPARE(planned.first().first().toString(), QString());
    const QString log = page.logView()->toPlainText();
    QVERIFY2(log.contains(QStringLiteral("measuring it on this machine first")), qPrintable(log));
    QVERIFY(QFile::exists(calibrationFile()));
    QVERIFY(page.model()->rowCount() >= 2);  // 2 data, or 2 pipeline stages, ...
    QVERIFY2(page.statusLabel()->text().contains(QStringLiteral("on 2 ranks")),
             qPrintable(page.statusLabel()->text()));
    QCOMPARE(page.model()->candidateAt(0).ranks, 2);
    // The job's private file is gone with the command.
    QVERIFY(QDir(dir.filePath(QStringLiteral("launches")))
                .entryList({QStringLiteral("*.toml")}, QDir::Files)
                .isEmpty());

    // The plan's first choice is selected: simulate it, a run of the store like any other.
    QVERIFY(page.findChild<QPushButton*>(QStringLiteral("simulateLayout"))->isEnabled());
    QSignalSpy simulated(&page, &PlanPage::simulated);
    page.simulateSelected();
    QVERIFY(simulated.wait(kCommandMs));
    const qint64 id = simulated.first().first().toLongLong();
    RunStore store(dir.filePath(QStringLiteral("runs.db")).toStdString());
    const std::optional<RunRow> run = store.run(id);
    QVERIFY(run);
    QCOMPARE(run->origin, std::string("simulated"));
    QCOMPARE(run->world, 2);

    QSignalSpy to_run(&page, &PlanPage::runLayoutRequested);
    page.runSelected();
    QCOMPARE(to_run.size(), 1);
    const QStringList overrides = to_run.first().first().toStringList();
    QCOMPARE(overrides, page.model()->candidateAt(0).overrides);
    QVERIFY(overrides.contains(QStringLiteral("parallel.ranks=2")));
  }

  // After plansSimulatesAndRunsALayout: its calibration is stored, this plan measures nothing.
  void theWindowOpensASimulatedRunAndLaunchesALayout() {
    QTemporaryDir dir;
    WorkbenchOptions options;
    options.db_path = dir.filePath(QStringLiteral("runs.db"));
    options.job_path = QStringLiteral(RANKLAB_SOURCE_DIR "/resources/jobs/spirals.toml");
    options.overrides = {QStringLiteral("train.epochs=1")};
    options.worker_path = QStringLiteral(RANKLAB_WORKER_PATH);
    options.launcher_path = QStringLiteral(RANKLAB_CLI_PATH);
    MainWindow window(options);
    window.show();
    window.showPage(MainWindow::PlanTab);
    PlanPage* page = window.planPage();
    page->calibrationEdit()->setText(calibrationFile());
    QSignalSpy planned(page, &PlanPage::planFinished);
    page->plan();
    QVERIFY(planned.wait(kCommandMs));
    QCOMPARE(planned.first().first().toString(), QString());

    QSignalSpy shown(&window, &MainWindow::runShown);
    page->simulateSelected();
    QVERIFY(shown.wait(kCommandMs));
    QCOMPARE(window.tabs()->currentIndex(), int(MainWindow::LiveTab));

    // The 2-stage layout, set on the form and launched: the stored run's job has 2 stages.
    int row = 0;
    while (row < page->model()->rowCount() && page->model()->candidateAt(row).pipeline != 2) ++row;
    QVERIFY(row < page->model()->rowCount());
    page->view()->selectRow(page->proxy()->mapFromSource(page->model()->index(row, 0)).row());
    QSignalSpy ended(&window, &MainWindow::runEnded);
    page->runSelected();
    QCOMPARE(QString::fromStdString(window.setupPage()->draft().value("parallel.pipeline")),
             QStringLiteral("2"));
    QVERIFY(window.isRunning());
    QCOMPARE(window.tabs()->currentIndex(), int(MainWindow::LiveTab));
    QVERIFY(ended.wait(120000));
    const auto outcome = ended.first().first().value<RunOutcome>();
    QCOMPARE(outcome.status, std::string("done"));
    RunStore store(options.db_path.toStdString());
    const std::optional<RunRow> run = store.run(outcome.run_id);
    QVERIFY(run);
    QVERIFY2(run->job_toml.find("pipeline = 2") != std::string::npos, run->job_toml.c_str());
  }

  // The toolbar's Simulate: the form's job on 1,024 ranks sent live through the collector,
  // followed on the live page as a run of that many ranks and stored whole as a simulated
  // run. The calibration is another machine's, so nothing is measured first.
  void theSimulateButtonFollowsAThousandRanksLive() {
    QTemporaryDir dir, data;
    qputenv("XDG_DATA_HOME", data.path().toLocal8Bit());
    const QString calibration = QString::fromStdString(defaultCalibrationPath());
    QVERIFY(QDir().mkpath(QFileInfo(calibration).path()));
    QFile file(calibration);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(test_support::kElsewhereCalibration);
    file.close();
    WorkbenchOptions options;
    options.db_path = dir.filePath(QStringLiteral("runs.db"));
    options.job_path = QStringLiteral(RANKLAB_SOURCE_DIR "/resources/jobs/spirals.toml");
    options.overrides = {
        QStringLiteral("parallel.ranks=1024"),   QStringLiteral("simulate.rate=20"),
        QStringLiteral("train.epochs=30"),       QStringLiteral("train.max_steps=30"),
        QStringLiteral("model.layers=[32, 32]"), QStringLiteral("train.optimizer=\"sgd\"")};
    options.worker_path = QStringLiteral(RANKLAB_WORKER_PATH);
    options.launcher_path = QStringLiteral(RANKLAB_CLI_PATH);
    MainWindow window(options);
    window.show();
    QSignalSpy ended(&window, &MainWindow::runEnded);
    window.findChild<QAction*>(QStringLiteral("simulateAction"))->trigger();
    QTRY_VERIFY(window.isRunning());  // once the runs are listed
    QCOMPARE(window.tabs()->currentIndex(), int(MainWindow::LiveTab));
    QVERIFY(ended.wait(kCommandMs));
    qunsetenv("XDG_DATA_HOME");
    const auto outcome = ended.first().first().value<RunOutcome>();
    QVERIFY2(outcome.status == "done", outcome.error.c_str());

    RunStore store(options.db_path.toStdString());
    QCOMPARE(store.run(outcome.run_id)->origin, std::string("simulated"));
    QCOMPARE(store.ranks(outcome.run_id).size(), size_t(1024));
    QCOMPARE(store.steps(outcome.run_id).size(), size_t(1024 * 30));
    LivePage* live = window.livePage();
    QTRY_VERIFY(live->heatMap()->isVisible());
    QVERIFY(live->stepTimeChart()->isVisible());
    QVERIFY2(live->stepTimeChart()->chart()->title().contains(QStringLiteral("1,024 ranks")),
             qPrintable(live->stepTimeChart()->chart()->title()));
  }

  void refusesAnInvalidForm() {
    QTemporaryDir dir;
    JobDraft draft = spiralsOn2Ranks();
    draft.setValue("train.epochs", "many");
    PlanPage page(draft, optionsIn(dir));
    QSignalSpy planned(&page, &PlanPage::planFinished);
    page.plan();
    QVERIFY(!page.isBusy());
    QCOMPARE(planned.size(), 1);
    QVERIFY2(planned.first().first().toString().contains(QStringLiteral("train.epochs")),
             qPrintable(planned.first().first().toString()));
  }

  void saysWhyTheLauncherCannotStart() {
    QTemporaryDir dir;
    const JobDraft draft = spiralsOn2Ranks();
    JobCommandOptions options = optionsIn(dir);
    options.launcher_path = dir.filePath(QStringLiteral("no-ranklab"));
    PlanPage page(draft, options);
    QSignalSpy planned(&page, &PlanPage::planFinished);
    page.plan();
    QVERIFY(planned.wait(kCommandMs));
    const QString error = planned.first().first().toString();
    QVERIFY2(error.contains(QStringLiteral("no-ranklab: cannot start")), qPrintable(error));
    QVERIFY(!page.isBusy());
  }

 private:
  // Measured by the first plan, reused by the next (each test's store is its own).
  QString calibrationFile() const { return calibration_dir_.filePath(QStringLiteral("here.json")); }

  QTemporaryDir calibration_dir_;
};

QTEST_MAIN(PlanPageTest)
#include "test_plan_page.moc"
