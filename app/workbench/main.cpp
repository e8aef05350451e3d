// ranklab-workbench: the desktop GUI. Parses the command line, finds the default job and
// the worker binary, opens the main window, and optionally screenshots it and quits.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QTimer>
#include <cstdio>

#include "storage/run_store.h"
#include "views/live_page.h"
#include "views/main_window.h"

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

// ranklab-worker: beside this executable when installed, else where the build put it.
QString findWorker() {
  const QString exe_dir = QCoreApplication::applicationDirPath();
  QStringList candidates = {exe_dir + "/ranklab-worker", exe_dir + "/../ranklab-worker"};
#ifdef RANKLAB_WORKER_BUILD_PATH
  candidates << QStringLiteral(RANKLAB_WORKER_BUILD_PATH);
#endif
  for (const QString& c : candidates)
    if (QFileInfo(c).isExecutable()) return QFileInfo(c).canonicalFilePath();
  return {};  // JobRunner's default, which will name the path it tried
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("ranklab-workbench"));
  QApplication::setApplicationVersion(QStringLiteral(RANKLAB_VERSION));

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("Launch, watch and reopen distributed training runs."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption db(QStringLiteral("db"),
                              "Run store file (default: ~/.local/share/ranklab/runs.db).", "PATH");
  const QCommandLineOption job(QStringLiteral("job"), "Job file to use (default: quickstart.toml).",
                               "FILE");
  const QCommandLineOption start(QStringLiteral("start"), "Launch the job at once.");
  const QCommandLineOption set(
      QStringLiteral("set"), "Override a job key, e.g. train.epochs=1 (repeatable).", "KEY=VALUE");
  const QCommandLineOption worker(QStringLiteral("worker"), "ranklab-worker binary to launch.",
                                  "PATH");
  const QCommandLineOption shot(QStringLiteral("screenshot"),
                                "Save the window to this PNG, then quit.", "PNG");
  const QCommandLineOption shot_after(
      QStringLiteral("screenshot-after-ms"),
      "Take the screenshot after this many ms (or when the --start run ends, if sooner).", "N",
      "3000");
  for (const auto& o : {db, job, start, set, worker, shot, shot_after}) parser.addOption(o);
  parser.process(app);

  ranklab::WorkbenchOptions options;
  try {
    options.db_path = parser.isSet(db) ? parser.value(db)
                                       : QString::fromStdString(ranklab::RunStore::defaultPath());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ranklab-workbench: %s\n", e.what());
    return 1;
  }
  options.job_path =
      parser.isSet(job) ? QFileInfo(parser.value(job)).absoluteFilePath() : findDefaultJob();
  options.overrides = parser.values(set);
  options.worker_path = parser.isSet(worker) ? parser.value(worker) : findWorker();

  ranklab::MainWindow window(options);
  window.show();

  if (parser.isSet(shot)) {
    bool ok = false;
    const int after_ms = parser.value(shot_after).toInt(&ok);
    if (!ok || after_ms < 0) {
      std::fprintf(stderr, "ranklab-workbench: --screenshot-after-ms: not a count of ms: %s\n",
                   qPrintable(parser.value(shot_after)));
      return 2;
    }
    const QString png = parser.value(shot);
    auto take = [&window, png] {
      window.livePage()->refreshNow();
      if (!window.grab().save(png, "PNG")) {
        std::fprintf(stderr, "ranklab-workbench: cannot write screenshot %s\n", qPrintable(png));
        QCoreApplication::exit(1);
        return;
      }
      std::fprintf(stderr, "ranklab-workbench: screenshot saved to %s\n", qPrintable(png));
      QCoreApplication::exit(0);
    };
    QTimer::singleShot(after_ms, &window, take);
    // When the run ends first, wait a moment for the runs list to show its final status.
    QObject::connect(&window, &ranklab::MainWindow::runEnded, &window,
                     [&window, take] { QTimer::singleShot(700, &window, take); });
  }
  if (parser.isSet(start)) QTimer::singleShot(0, &window, [&window] { window.launch(); });
  return app.exec();
}
