// The runs of a lesson whose learner ranks its variants (lesson 13): every variant simulated
// first (`ranklab simulate`, through JobCommand, so the prediction is stored before the run),
// then each run for real through the window's launcher, one after another.
#pragma once

#include <QObject>
#include <QStringList>
#include <vector>

#include "launch/job_runner.h"
#include "views/job_command.h"
#include "views/lessons/lesson.h"

namespace ranklab {

class VariantRuns : public QObject {
  Q_OBJECT

 public:
  explicit VariantRuns(JobCommandOptions options, QObject* parent = nullptr);

  void setDbPath(const QString& path);
  // Simulates then runs each of `lesson`'s variants from `preset_path` with `overrides` (the
  // lesson's, then the variant's, then `extra`); "" when started, else why not.
  QString start(const Lesson& lesson, const QString& preset_path, const QStringList& overrides);
  bool isRunning() const { return !queue_.empty(); }
  // The window's run (one this asked for) ended: the next step goes.
  void runEnded(const RunOutcome& outcome);

 signals:
  void progress(const QString& text);
  void runRequested(const QString& preset_path, const QStringList& overrides);
  // All done ("" error), or stopped at the first failure; the real runs' ids, in order.
  void finished(const QList<qint64>& runs, const QString& error);

 private:
  struct Step {
    bool simulate = true;
    int variant = 0;
  };
  void next();
  void fail(const QString& error);
  void simulated(const QByteArray& output, const QString& error);

  JobCommand command_;
  QString preset_path_;
  QString preset_text_;
  QString steps_;                       // the preset's train.max_steps, simulated as many
  std::vector<QStringList> overrides_;  // per variant, complete
  std::vector<QString> labels_;
  std::vector<Step> queue_;
  QList<qint64> runs_;
};

}  // namespace ranklab
