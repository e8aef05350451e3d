// One `ranklab` command on the setup form's job (plan, simulate), in a process of its own: the
// workbench never runs the engine in its process. The job's text goes to a new private file
// in the store's launch folder (as a launch's does), removed when the command ends; each line
// of its stderr comes as progress, its stdout whole at the end.
#pragma once

#include <QByteArray>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace ranklab {

struct JobCommandOptions {
  QString launcher_path;  // ranklab; "" = beside this program
  QString worker_path;    // passed on as --worker (a calibration runs ranks); "" = its default
  QString db_path;
  bool allow_foreign_store = false;
};

class JobCommand : public QObject {
  Q_OBJECT

 public:
  explicit JobCommand(JobCommandOptions options, QObject* parent = nullptr);
  ~JobCommand() override;  // a command still going is killed, its job file removed

  // Runs `ranklab VERB JOBFILE ARGS --db DB --json`; returns why it could not start ("" when
  // it did). One at a time: refused while one is going.
  QString start(const QString& verb, const QString& toml_text, const QStringList& args);
  bool isRunning() const { return process_.state() != QProcess::NotRunning; }
  void cancel();  // ends the command; finished() follows with the reason
  void setDbPath(const QString& path) { options_.db_path = path; }
  QStringList lastCommand() const { return command_; }

 signals:
  void progress(const QString& line);  // a line of the command's stderr
  // Its stdout; `error` is "" when it exited 0, else its last stderr line or why it died.
  void finished(const QByteArray& output, const QString& error);

 private:
  void readProgress();
  void onFinished(int exit_code, QProcess::ExitStatus status);
  void removeJobFile();

  JobCommandOptions options_;
  QProcess process_;
  QString job_file_;
  QString last_line_;   // of stderr: the error a failed command names
  QByteArray pending_;  // stderr not yet ended by a newline
  QStringList command_;
  bool cancelled_ = false;
};

}  // namespace ranklab
