#include "views/lessons/lesson_comparison.h"

#include <QObject>
#include <cmath>
#include <map>

#include "engine/job/job_key_relevance.h"
#include "engine/job/job_keys.h"

namespace ranklab {

namespace {

// Median time between a rank's consecutive steps, over the ranks: what a step cost.
double medianStepMs(const LessonRun& run) {
  std::map<int, int64_t> last;
  std::vector<double> gaps;
  for (const StepRow& s : run.steps) {
    if (const auto it = last.find(s.rank); it != last.end())
      gaps.push_back(double(s.time_ns - it->second) / 1e6);
    last[s.rank] = s.time_ns;
  }
  return medianOf(gaps);
}

// Counts of bytes in full with separators (34,676,736, not 3.467674e+07); fractions and
// small values to 7 significant digits.
QString tableNumber(double value) {
  if (std::abs(value) >= 1e4) return QStringLiteral("%L1").arg(value, 0, 'f', 0);
  return QStringLiteral("%L1").arg(value, 0, 'g', 7);
}

}  // namespace

QString lessonComparisonHtml(const Lesson& lesson, const std::vector<ComparedLessonRun>& runs) {
  if (runs.size() < 2) return {};
  std::vector<std::string> jobs;
  for (const ComparedLessonRun& r : runs) jobs.push_back(r.run->run.job_toml);
  const std::vector<SettingDifference> differences = differingSettings(jobs);
  QString rows;
  for (size_t i = 0; i < runs.size(); ++i) {
    const ComparedLessonRun& r = runs[i];
    QStringList settings;
    for (const SettingDifference& d : differences)
      settings << QStringLiteral("%1 = %2").arg(QString::fromStdString(d.path),
                                                QString::fromStdString(d.values[i]));
    const QString setting =
        settings.isEmpty() ? QObject::tr("(the same job)") : settings.join(QStringLiteral("<br>"));
    if (!r.answer.error.isEmpty()) {
      rows += QObject::tr("<tr><td>run %1</td><td>%2</td><td colspan=4><i>%3</i></td></tr>")
                  .arg(r.run->run.id)
                  .arg(setting, r.answer.error.toHtmlEscaped());
      continue;
    }
    rows += QObject::tr(
                "<tr><td>run %1</td><td>%2</td><td align=right><b>%3</b></td>"
                "<td align=right>%4</td><td align=right>%5</td><td align=right>%6 ms</td></tr>")
                .arg(r.run->run.id)
                .arg(setting)
                .arg(tableNumber(r.answer.measured), tableNumber(r.answer.formula))
                .arg(r.answer.formula != 0 ? r.answer.measured / r.answer.formula : 0.0, 0, 'f', 4)
                .arg(medianStepMs(*r.run), 0, 'f', 2);
  }
  return QObject::tr(
             "<p><b>Runs of this lesson</b>, newest first: %1 (%2) measured in each, against "
             "its own formula, and the median step:</p><table cellpadding=3><tr><th>run</th>"
             "<th>settings that differ</th><th>measured</th><th>formula</th>"
             "<th>measured/formula</th><th>step</th></tr>%3</table>")
      .arg(lesson.question.chopped(lesson.question.endsWith(':') ? 1 : 0).toLower())
      .arg(lesson.unit)
      .arg(rows);
}

}  // namespace ranklab
