#include "views/job_command.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QFile>

#include "launch/job_runner.h"
#include "storage/private_files.h"
#include "storage/run_store.h"

namespace ranklab {

JobCommand::JobCommand(JobCommandOptions options, QObject* parent)
    : QObject(parent), options_(std::move(options)) {
  connect(&process_, &QProcess::readyReadStandardError, this, &JobCommand::readProgress);
  connect(&process_, &QProcess::finished, this, &JobCommand::onFinished);
  connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error != QProcess::FailedToStart) return;  // the others end in finished()
    removeJobFile();
    emit finished({}, tr("%1: cannot start: %2").arg(command_.value(0), process_.errorString()));
  });
}

JobCommand::~JobCommand() {
  process_.disconnect(this);
  if (isRunning()) {
    process_.kill();
    process_.waitForFinished(2000);
  }
  removeJobFile();
}

QString JobCommand::start(const QString& verb, const QString& toml_text, const QStringList& args) {
  if (isRunning()) return tr("a %1 is still going").arg(command_.value(1));
  const std::string folder = launchFolder(options_.db_path.toStdString());
  const QString file =
      QString::fromStdString(folder) + QStringLiteral("/%1-%2-%3.toml")
                                           .arg(verb)
                                           .arg(QDateTime::currentMSecsSinceEpoch())
                                           .arg(QCoreApplication::applicationPid());
  try {
    ensurePrivateFolder(folder, "the workbench's launch folder");
    writeNewPrivateFile(file.toStdString(), toml_text.toStdString());
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  job_file_ = file;
  const QString launcher = options_.launcher_path.isEmpty()
                               ? QString::fromStdString(executableDir() + "/ranklab")
                               : options_.launcher_path;
  QStringList argv = {verb, file};
  argv << args << QStringLiteral("--db") << options_.db_path << QStringLiteral("--json");
  if (options_.allow_foreign_store) argv << QStringLiteral("--allow-foreign-store");
  if (!options_.worker_path.isEmpty()) argv << QStringLiteral("--worker") << options_.worker_path;
  command_ = QStringList{launcher} + argv;
  last_line_.clear();
  pending_.clear();
  cancelled_ = false;
  process_.start(launcher, argv);
  return {};
}

void JobCommand::cancel() {
  if (!isRunning()) return;
  cancelled_ = true;
  process_.terminate();  // as Ctrl-C would: a calibration half done is not stored
}

void JobCommand::readProgress() {
  pending_ += process_.readAllStandardError();
  qsizetype end;
  while ((end = pending_.indexOf('\n')) >= 0) {
    const QString line = QString::fromUtf8(pending_.left(end)).trimmed();
    pending_.remove(0, end + 1);
    if (line.isEmpty()) continue;
    last_line_ = line;
    emit progress(line);
  }
}

void JobCommand::onFinished(int exit_code, QProcess::ExitStatus status) {
  readProgress();
  if (!pending_.trimmed().isEmpty()) {
    last_line_ = QString::fromUtf8(pending_).trimmed();
    emit progress(last_line_);
  }
  removeJobFile();
  const QByteArray output = process_.readAllStandardOutput();
  QString error;
  if (cancelled_)
    error = tr("cancelled");
  else if (status == QProcess::CrashExit)
    error = tr("%1 %2 died: %3").arg(command_.value(0), command_.value(1), process_.errorString());
  else if (exit_code != 0)
    error = last_line_.isEmpty() ? tr("%1 %2 exited with status %3")
                                       .arg(command_.value(0), command_.value(1))
                                       .arg(exit_code)
                                 : last_line_;
  emit finished(output, error);
}

void JobCommand::removeJobFile() {
  if (!job_file_.isEmpty()) QFile::remove(job_file_);
  job_file_.clear();
}

}  // namespace ranklab
