// ranklab-workbench: the desktop GUI. Parses the command line, finds the default job and
// the worker binary, opens the main window, and optionally screenshots it and quits.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QIcon>
#include <QLineEdit>
#include <QTimer>
#include <chrono>
#include <cstdio>

#include "app/build_info.h"
#include "app/terminal_text.h"
#include "storage/run_store.h"
#include "storage/store_files.h"
#include "views/analysis_page.h"
#include "views/learn_page.h"
#include "views/lessons/lesson.h"
#include "views/live_page.h"
#include "views/loop_watch.h"
#include "views/main_window.h"
#include "views/models/redraw_pacer.h"
#include "views/models/workbench_settings.h"
#include "views/plan_page.h"

namespace {

// The preset job shown at start: installed copy first, then the source tree.
QString findDefaultJob() {
  const QString exe_dir = QCoreApplication::applicationDirPath();
  QStringList candidates = {exe_dir + "/../share/ranklab/jobs/quickstart.toml"};
  QDir dir(exe_dir);
  for (int up = 0; up < 5; ++up) {  // build trees: build/app/workbench → source root
    candidates << dir.filePath("resources/jobs/quickstart.toml");
    if (!dir.cdUp()) break;
  }
#ifdef RANKLAB_SOURCE_DIR
  candidates << QStringLiteral(RANKLAB_SOURCE_DIR "/resources/jobs/quickstart.toml");
#endif
  for (const QString& c : candidates)
    if (QFileInfo(c).isFile()) return QFileInfo(c).canonicalFilePath();
  return {};
}

// A program of ranklab's: beside this executable when installed, else where the build put it.
QString findProgram(const QString& name, const QString& build_path) {
  const QString exe_dir = QCoreApplication::applicationDirPath();
  QStringList candidates = {exe_dir + "/" + name, exe_dir + "/../" + name, build_path};
  for (const QString& c : candidates)
    if (!c.isEmpty() && QFileInfo(c).isExecutable()) return QFileInfo(c).canonicalFilePath();
  return {};  // the launch's default, which will name the path it tried
}

QString findWorker() {
#ifdef RANKLAB_WORKER_BUILD_PATH
  return findProgram(QStringLiteral("ranklab-worker"), QStringLiteral(RANKLAB_WORKER_BUILD_PATH));
#else
  return findProgram(QStringLiteral("ranklab-worker"), {});
#endif
}

QString findLauncher() {
#ifdef RANKLAB_CLI_BUILD_PATH
  return findProgram(QStringLiteral("ranklab"), QStringLiteral(RANKLAB_CLI_BUILD_PATH));
#else
  return findProgram(QStringLiteral("ranklab"), {});
#endif
}

}  // namespace

// Parsing comes before QApplication, so --help and --version work without a display.
struct Options {
  QCommandLineParser parser;
  QCommandLineOption db{QStringLiteral("db"),
                        "Run store file (default: the last one used, else "
                        "~/.local/share/ranklab/runs.db).",
                        "PATH"};
  QCommandLineOption job{QStringLiteral("job"),
                         "Job file for the setup page (default: quickstart.toml).", "FILE"};
  QCommandLineOption start{QStringLiteral("start"),
                           "Launch the job at once (with --lesson: that lesson's preset)."};
  QCommandLineOption simulate{
      QStringLiteral("simulate"),
      "With --start: simulate the job live instead of running it (as the Simulate button "
      "does: ranklab simulate --live, its ranks' records through the collector)."};
  QCommandLineOption set{QStringLiteral("set"),
                         "Override a job key, e.g. train.epochs=1 (repeatable).", "KEY=VALUE"};
  QCommandLineOption open{QStringLiteral("open"), "Show this stored run on the live page.",
                          "RUN_ID"};
  QCommandLineOption compare{QStringLiteral("compare"),
                             "Compare these stored runs on the compare page.", "ID,ID,..."};
  QCommandLineOption page{
      QStringLiteral("page"),
      "Page to show: setup, plan, live, timeline, analysis, runs, compare or learn.", "NAME"};
  QCommandLineOption plan{QStringLiteral("plan"),
                          "Plan the job on this many ranks at once, on the Plan page (as "
                          "ranklab plan does).",
                          "RANKS"};
  QCommandLineOption memory_per_rank{
      QStringLiteral("memory-per-rank"),
      "With --plan: the memory a rank may hold, e.g. 16G (as ranklab plan takes it).", "SIZE"};
  QCommandLineOption lesson{QStringLiteral("lesson"),
                            "Open this lesson on the Learn page, answered from its last stored "
                            "run if there is one; with --start, run it and answer from that run.",
                            "ID"};
  QCommandLineOption allow_foreign_store{
      QStringLiteral("allow-foreign-store"),
      "Open the store even when another account owns it (refused otherwise: that account "
      "could rewrite what this one reads and runs)."};
  QCommandLineOption worker{QStringLiteral("worker"), "ranklab-worker binary to launch.", "PATH"};
  QCommandLineOption shot{QStringLiteral("screenshot"), "Save the window to this PNG, then quit.",
                          "PNG"};
  QCommandLineOption shot_after{
      QStringLiteral("screenshot-after-ms"),
      "Take the screenshot after this many ms (or when the --start run ends, if sooner).", "N",
      "3000"};
  QCommandLineOption exit_when_done{
      QStringLiteral("exit-when-done"),
      "Quit when the --start run ends (status 0 if it is done), printing the CPU time of "
      "this process and of its UI thread against the wall time (what watching costs)."};

  Options() {
    parser.setApplicationDescription(
        QStringLiteral("Set up, launch, watch, browse and compare distributed training runs."));
    for (const auto& o : {db, allow_foreign_store, job, start, simulate, set, open, compare, page,
                          plan, memory_per_rank, lesson, worker, shot, shot_after, exit_when_done})
      parser.addOption(o);
  }
};

int fail(const QString& message) {
  std::fprintf(stderr, "ranklab-workbench: %s\n",
               ranklab::terminalSafe(message.toStdString()).c_str());
  return 2;
}

// What the options ask for, checked before any window exists; "" or the error to print.
struct Choices {
  ranklab::MainWindow::Page page = ranklab::MainWindow::SetupTab;
  bool page_set = false;
  qint64 open_run = 0;
  QList<qint64> compare_runs;
  int lesson = -1;
  bool start = false;
  bool simulate = false;  // --start simulates the job live
  int plan_ranks = 0;     // --plan: 0 = none
  int after_ms = 0;
};

QString readChoices(Options& cli, Choices& out) {
  out.page_set = cli.parser.isSet(cli.page);
  if (out.page_set && !ranklab::MainWindow::pageFromName(cli.parser.value(cli.page), &out.page))
    return "--page: one of setup, plan, live, timeline, analysis, runs, compare, learn; got " +
           cli.parser.value(cli.page);
  bool ok = true;
  out.open_run = cli.parser.isSet(cli.open) ? cli.parser.value(cli.open).toLongLong(&ok) : 0;
  if (!ok || out.open_run < 0) return "--open: not a run id: " + cli.parser.value(cli.open);
  for (const QString& id :
       cli.parser.value(cli.compare).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    out.compare_runs << id.trimmed().toLongLong(&ok);
    if (!ok) return "--compare: not a run id: " + id;
  }
  if (cli.parser.isSet(cli.compare) && out.compare_runs.size() < 2)
    return QStringLiteral("--compare: two or more run ids, e.g. --compare 3,4");
  if (cli.parser.isSet(cli.plan)) {
    out.plan_ranks = cli.parser.value(cli.plan).toInt(&ok);
    if (!ok || out.plan_ranks < 1)
      return "--plan: not a count of ranks: " + cli.parser.value(cli.plan);
  }
  if (cli.parser.isSet(cli.memory_per_rank) && out.plan_ranks == 0)
    return QStringLiteral("--memory-per-rank: only with --plan RANKS");
  if (cli.parser.isSet(cli.lesson)) {
    out.lesson = ranklab::lessonIndex(cli.parser.value(cli.lesson));
    if (out.lesson < 0)
      return "--lesson: one of " + ranklab::lessonIds().join(QStringLiteral(", ")) + "; got " +
             cli.parser.value(cli.lesson);
  }
  out.start = cli.parser.isSet(cli.start);
  out.simulate = cli.parser.isSet(cli.simulate);
  if (out.simulate && (!out.start || out.lesson >= 0))
    return QStringLiteral("--simulate: with --start and a --job (not a --lesson)");
  // One job to start: the lesson's own preset, or --job's.
  if (out.start && out.lesson >= 0 && cli.parser.isSet(cli.job))
    return QStringLiteral("--lesson with --start runs the lesson's own preset; leave out --job");
  out.after_ms = cli.parser.value(cli.shot_after).toInt(&ok);
  if (!ok || out.after_ms < 0)
    return "--screenshot-after-ms: not a count of ms: " + cli.parser.value(cli.shot_after);
  return {};
}

// The application's name, version, desktop entry id and icon.
void nameTheApplication() {
  QApplication::setApplicationName(QStringLiteral("ranklab-workbench"));
  QApplication::setApplicationVersion(QString::fromLatin1(ranklab::buildVersion()));
  // The desktop entry's id: Wayland docks match the window to the entry and its icon by it.
  QGuiApplication::setDesktopFileName(QStringLiteral("org.ranklab.Workbench"));
  QApplication::setWindowIcon(
      QIcon::fromTheme(QStringLiteral("org.ranklab.Workbench"),
                       QIcon(QStringLiteral(":/icons/org.ranklab.Workbench.svg"))));
}

// The window's options from the command line; throws when no store path can be found, or
// when another account owns the store and --allow-foreign-store was not given.
ranklab::WorkbenchOptions windowOptions(Options& cli, const Choices& chosen) {
  ranklab::WorkbenchOptions options;
  const QString last = ranklab::WorkbenchSettings::lastDb();
  options.db_path = cli.parser.isSet(cli.db)
                        ? QFileInfo(cli.parser.value(cli.db)).absoluteFilePath()
                    : !last.isEmpty() && QFileInfo::exists(last)
                        ? last
                        : QString::fromStdString(ranklab::RunStore::defaultPath());
  options.job_path = cli.parser.isSet(cli.job)
                         ? QFileInfo(cli.parser.value(cli.job)).absoluteFilePath()
                         : findDefaultJob();
  options.presets_dir = QFileInfo(findDefaultJob()).absolutePath();
  options.overrides = cli.parser.values(cli.set);
  options.worker_path = cli.parser.isSet(cli.worker) ? cli.parser.value(cli.worker) : findWorker();
  options.launcher_path = findLauncher();
  options.allow_foreign_store = cli.parser.isSet(cli.allow_foreign_store);
  ranklab::requireOwnStore(options.db_path.toStdString(), options.allow_foreign_store);
  options.open_run = chosen.open_run;
  options.compare = chosen.compare_runs;
  return options;
}

// The page the options asked for; a lesson answered from its last stored run, or (--start)
// from the run about to start.
void showChosenPage(ranklab::MainWindow& window, const Choices& chosen) {
  if (chosen.open_run > 0) window.showPage(ranklab::MainWindow::LiveTab);
  if (!chosen.compare_runs.isEmpty()) window.showPage(ranklab::MainWindow::CompareTab);
  if (chosen.plan_ranks > 0) window.showPage(ranklab::MainWindow::PlanTab);
  if (chosen.page_set) window.showPage(chosen.page);
  if (chosen.lesson >= 0) {
    window.showPage(ranklab::MainWindow::LearnTab);
    window.learnPage()->selectLesson(chosen.lesson);
    if (!chosen.start) window.learnPage()->replayLastRun();
  }
}

// --start: the lesson's preset (the --set keys on top) as its Run button would, else the
// setup page's job.
void startChosenRun(ranklab::MainWindow& window, const Choices& chosen,
                    const QStringList& overrides) {
  if (chosen.lesson >= 0)
    window.learnPage()->runLesson(overrides);
  else if (chosen.simulate)
    window.simulate(!chosen.page_set);
  else
    window.launch(!chosen.page_set);  // a page asked for stays on screen
}

// Seconds since the process started (its static initialisation, before the window exists).
const auto kProcessStart = std::chrono::steady_clock::now();
double sinceStartSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - kProcessStart).count();
}

// Saves the window to `png` after `after_ms`, or shortly after a --start run or a --plan ends,
// and quits; with --open, `after_ms` counts from the run shown (a big run takes a while to
// read), and how long that took since the start is printed.
// A run --start launched for the picture is stopped with it; a run followed goes on.
void scheduleScreenshot(ranklab::MainWindow& window, const QString& png, int after_ms,
                        bool stop_run, bool after_open) {
  auto take = [&window, png, stop_run] {
    window.livePage()->refreshNow();
    const bool saved = window.grab().save(png, "PNG");
    if (stop_run) window.stop();
    if (!saved) {
      std::fprintf(stderr, "ranklab-workbench: cannot write screenshot %s\n", qPrintable(png));
      QCoreApplication::exit(1);
      return;
    }
    std::fprintf(stderr, "ranklab-workbench: screenshot saved to %s\n", qPrintable(png));
    QCoreApplication::exit(0);
  };
  if (after_open) {
    auto* opened = new QMetaObject::Connection;
    *opened = QObject::connect(
        &window, &ranklab::MainWindow::runShown, &window,
        [&window, take, after_ms, opened](qint64 run_id) {
          QObject::disconnect(*opened);
          delete opened;
          std::fprintf(stderr, "ranklab-workbench: run %lld shown %.2f s after the start\n",
                       static_cast<long long>(run_id), sinceStartSeconds());
          ranklab::AnalysisPage* analysis = window.analysisPage();
          if (!analysis->isVisible() || !analysis->loading()) {
            QTimer::singleShot(after_ms, &window, take);
            return;
          }
          // The analysis page asked for: the picture once its answer is drawn.
          QObject::connect(
              analysis, &ranklab::AnalysisPage::analysisShown, &window,
              [&window, take, after_ms](qint64 id) {
                std::fprintf(stderr,
                             "ranklab-workbench: analysis of run %lld shown %.2f s "
                             "after the start\n",
                             static_cast<long long>(id), sinceStartSeconds());
                QTimer::singleShot(after_ms, &window, take);
              },
              Qt::SingleShotConnection);
        });
  } else {
    QTimer::singleShot(after_ms, &window, take);
  }
  // When the run ends first, wait a moment for the runs list to show its final status.
  QObject::connect(&window, &ranklab::MainWindow::runEnded, &window, [&window, take] {
    if (window.learnPage()->runningVariants()) return;  // a lesson's next run follows
    QTimer::singleShot(700, &window, take);
  });
  QObject::connect(window.planPage(), &ranklab::PlanPage::planFinished, &window,
                   [&window, take] { QTimer::singleShot(700, &window, take); });
}

// Quits when the launched run ends, saying what the workbench spent watching it: the whole
// process (UI and follow threads; the launcher and recorder are a process of their own) and
// the UI thread alone, against the wall.
void exitWhenDone(ranklab::MainWindow& window) {
  static const auto started = std::chrono::steady_clock::now();
  const auto* watch = new ranklab::LoopWatch(&window);
  QObject::connect(
      &window, &ranklab::MainWindow::runEnded, &window,
      [&window, watch](const ranklab::RunOutcome& outcome) {
        if (window.learnPage()->runningVariants() && outcome.status == "done") return;
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        const double process = ranklab::processCpuSeconds();
        const double ui = ranklab::threadCpuSeconds();  // called on the UI thread
        std::fprintf(stderr,
                     "ranklab-workbench: run %lld %s; wall %.2f s, CPU: process "
                     "%.2f s (%.1f %% of a core), UI thread %.2f s (%.1f %%)\n",
                     static_cast<long long>(outcome.run_id), outcome.status.c_str(), wall, process,
                     100 * process / wall, ui, 100 * ui / wall);
        std::fprintf(stderr, "ranklab-workbench: %s\n", watch->summary().c_str());
        QCoreApplication::exit(outcome.status == "done" ? 0 : 1);
      });
}

int main(int argc, char** argv) {
  QStringList arguments;
  for (int i = 0; i < argc; ++i) arguments << QString::fromLocal8Bit(argv[i]);
  Options cli;
  const QCommandLineOption help = cli.parser.addHelpOption();
  const QCommandLineOption version = cli.parser.addVersionOption();
  if (!cli.parser.parse(arguments)) return fail(cli.parser.errorText());
  if (cli.parser.isSet(help) || cli.parser.isSet(QStringLiteral("help-all"))) {
    QString text = cli.parser.helpText();  // no application object yet to name the program
    text.replace(QStringLiteral("<executable_name>"), QStringLiteral("ranklab-workbench"));
    std::fputs(qPrintable(text), stdout);
    return 0;
  }
  if (cli.parser.isSet(version)) {
    std::printf("%s\n", ranklab::versionLine("ranklab-workbench").c_str());
    return 0;
  }
  Choices chosen;
  if (const QString error = readChoices(cli, chosen); !error.isEmpty()) return fail(error);

  QApplication app(argc, argv);
  nameTheApplication();
  ranklab::WorkbenchOptions options;
  try {
    options = windowOptions(cli, chosen);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ranklab-workbench: %s\n", ranklab::terminalSafe(e.what()).c_str());
    return 1;
  }
  ranklab::WorkbenchSettings::setLastDb(options.db_path);

  ranklab::MainWindow window(options);
  window.show();
  showChosenPage(window, chosen);
  if (cli.parser.isSet(cli.shot))
    scheduleScreenshot(window, cli.parser.value(cli.shot), chosen.after_ms,
                       cli.parser.isSet(cli.start), chosen.open_run > 0);
  if (cli.parser.isSet(cli.exit_when_done)) exitWhenDone(window);
  if (chosen.plan_ranks > 0) {
    window.planPage()->memoryEdit()->setText(cli.parser.value(cli.memory_per_rank));
    QTimer::singleShot(0, &window,
                       [&window, ranks = chosen.plan_ranks] { window.planPage()->planOn(ranks); });
  }
  if (chosen.start)
    QTimer::singleShot(0, &window, [&window, &chosen, &options] {
      startChosenRun(window, chosen, options.overrides);
    });
  return app.exec();
}
