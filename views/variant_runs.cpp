#include "views/variant_runs.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

#include "engine/job/job_file.h"

namespace ranklab {

VariantRuns::VariantRuns(JobCommandOptions options, QObject* parent)
    : QObject(parent), command_(std::move(options)) {
  connect(&command_, &JobCommand::finished, this, &VariantRuns::simulated);
}

void VariantRuns::setDbPath(const QString& path) {
  command_.setDbPath(path);
}

QString VariantRuns::start(const Lesson& lesson, const QString& preset_path,
                           const QStringList& overrides) {
  if (isRunning()) return tr("the lesson's runs are still going");
  QFile file(preset_path);
  if (!file.open(QIODevice::ReadOnly))
    return tr("%1: cannot read the lesson's preset: %2").arg(preset_path, file.errorString());
  preset_path_ = preset_path;
  preset_text_ = QString::fromUtf8(file.readAll());
  overrides_.clear();
  labels_.clear();
  queue_.clear();
  runs_.clear();
  try {  // a simulation as long as the run: the preset's max_steps
    JobOverrides sets;
    for (const QString& o : overrides) sets.push_back(o.toStdString());
    const JobSpec job = parseJob(preset_text_.toStdString(), preset_path.toStdString(), sets);
    steps_ = job.train.max_steps > 0 ? QString::number(job.train.max_steps) : QString();
  } catch (const JobError& e) {
    return QString::fromStdString(e.what());
  }
  for (size_t v = 0; v < lesson.variants.size(); ++v) {
    // The variant's settings, then the caller's (`--set` on `--lesson --start`) on top.
    overrides_.push_back(lesson.variants[v].overrides + overrides);
    labels_.push_back(lesson.variants[v].label);
    queue_.push_back({true, int(v)});
  }
  for (size_t v = 0; v < lesson.variants.size(); ++v) queue_.push_back({false, int(v)});
  next();
  return {};
}

void VariantRuns::next() {
  if (queue_.empty()) {
    emit finished(runs_, {});
    return;
  }
  const Step step = queue_.front();
  const QStringList& overrides = overrides_[size_t(step.variant)];
  const QString label = labels_[size_t(step.variant)];
  if (!step.simulate) {
    emit progress(
        tr("Running %1 (%2 of %3)…").arg(label).arg(runs_.size() + 1).arg(labels_.size()));
    emit runRequested(preset_path_, overrides);  // runEnded() follows, maybe at once
    return;
  }
  QStringList args;
  for (const QString& o : overrides) args << QStringLiteral("--set") << o;
  if (!steps_.isEmpty()) args << QStringLiteral("--steps") << steps_;
  emit progress(tr("Simulating %1…").arg(label));
  if (const QString error = command_.start(QStringLiteral("simulate"), preset_text_, args);
      !error.isEmpty())
    fail(error);
}

void VariantRuns::simulated(const QByteArray& output, const QString& error) {
  if (queue_.empty() || !queue_.front().simulate) return;
  if (!error.isEmpty())
    return fail(tr("simulate %1: %2").arg(labels_[size_t(queue_.front().variant)], error));
  if (QJsonDocument::fromJson(output).object().value(QLatin1String("id")).toInteger() <= 0)
    return fail(tr("simulate printed no run id"));
  queue_.erase(queue_.begin());
  next();
}

void VariantRuns::runEnded(const RunOutcome& outcome) {
  if (queue_.empty() || queue_.front().simulate) return;
  if (outcome.run_id <= 0 || outcome.status != "done")
    return fail(
        tr("the run of %1 %2: %3")
            .arg(labels_[size_t(queue_.front().variant)],
                 outcome.run_id <= 0 ? tr("did not start") : QString::fromStdString(outcome.status),
                 QString::fromStdString(outcome.error)));
  runs_ << outcome.run_id;
  queue_.erase(queue_.begin());
  // After the window has finished with this run: the next launch must not find it going.
  QMetaObject::invokeMethod(this, &VariantRuns::next, Qt::QueuedConnection);
}

void VariantRuns::fail(const QString& error) {
  queue_.clear();
  emit finished(runs_, error);
}

}  // namespace ranklab
