#include "views/lessons/layout_ranking.h"

#include <QObject>
#include <algorithm>
#include <numeric>

#include "storage/analysis/step_measure.h"
#include "storage/run_origin.h"

namespace ranklab {

std::vector<std::vector<int>> rankingsOf(int n) {
  std::vector<int> order(size_t(std::max(0, n)));
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::vector<int>> all;
  do all.push_back(order);
  while (std::next_permutation(order.begin(), order.end()));
  return all;
}

QString rankingText(const Lesson& lesson, const std::vector<int>& order) {
  QStringList labels;
  for (int v : order) labels << lesson.variants[size_t(v)].label;
  return labels.join(QStringLiteral("  <  "));
}

std::vector<RankedVariant> rankVariants(const Lesson& lesson, const std::vector<LessonRun>& runs,
                                        const std::vector<int>& order) {
  std::vector<RankedVariant> ranked(lesson.variants.size());
  for (size_t v = 0; v < ranked.size(); ++v) ranked[v].label = lesson.variants[v].label;
  for (size_t place = 0; place < order.size(); ++place)
    ranked[size_t(order[place])].guessed = int(place) + 1;
  for (const LessonRun& run : runs) {  // newest first: the first of each kind counts
    if (run.run.status != "done" || ranked.empty()) continue;
    RankedVariant& r = ranked[size_t(variantOf(lesson, run))];
    const bool simulated = originOf(run.run) == RunOrigin::kSimulated;
    int64_t& id = simulated ? r.simulated_run : r.real_run;
    if (id != 0) continue;
    id = run.run.id;
    (simulated ? r.predicted_s : r.measured_s) = measuredStep(run.steps).step_s;
  }
  return ranked;
}

std::vector<int> ranksOf(const std::vector<double>& values) {
  std::vector<size_t> by(values.size());
  std::iota(by.begin(), by.end(), 0);
  std::stable_sort(by.begin(), by.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<int> ranks(values.size(), 0);
  int next = 1;
  for (size_t i : by)
    if (values[i] > 0) ranks[i] = next++;
  return ranks;
}

namespace {

QString rankCell(int rank) {
  return rank > 0 ? QString::number(rank) : QStringLiteral("–");
}

QString msCell(double seconds) {
  return seconds > 0 ? QStringLiteral("%1 ms").arg(seconds * 1e3, 0, 'f', 2) : QStringLiteral("–");
}

// "the simulator's", "yours": who put the variants in the measured order.
QString verdict(const std::vector<int>& guessed, const std::vector<int>& predicted,
                const std::vector<int>& measured) {
  if (std::count(measured.begin(), measured.end(), 0) > 0)
    return QObject::tr("Not every layout has a measured run yet.");
  const bool guess_given = std::count(guessed.begin(), guessed.end(), 0) == 0;
  const bool you = guess_given && guessed == measured;
  const bool simulator = predicted == measured;
  if (!guess_given)
    return simulator ? QObject::tr("The simulator's ranking matches the measurement.")
                     : QObject::tr("The simulator's ranking does not match the measurement.");
  if (you && simulator)
    return QObject::tr("Your ranking and the simulator's both match the measurement.");
  if (you) return QObject::tr("Your ranking matches the measurement; the simulator's does not.");
  if (simulator)
    return QObject::tr("The simulator's ranking matches the measurement; yours does not.");
  return QObject::tr("Neither your ranking nor the simulator's matches the measurement.");
}

}  // namespace

QString layoutRankingHtml(const std::vector<RankedVariant>& variants) {
  std::vector<double> predicted, measured;
  std::vector<int> guessed;
  for (const RankedVariant& v : variants) {
    predicted.push_back(v.predicted_s);
    measured.push_back(v.measured_s);
    guessed.push_back(v.guessed);
  }
  const std::vector<int> predicted_rank = ranksOf(predicted), measured_rank = ranksOf(measured);
  QString rows;
  for (size_t i = 0; i < variants.size(); ++i) {
    const RankedVariant& v = variants[i];
    const QString error =
        v.predicted_s > 0 && v.measured_s > 0
            ? QString::asprintf("%+.0f %%", 100 * relativeError(v.predicted_s, v.measured_s))
            : QStringLiteral("–");
    const QString runs = QObject::tr("%1 · %2").arg(
        v.simulated_run ? QObject::tr("sim %1").arg(v.simulated_run) : QStringLiteral("–"),
        v.real_run ? QObject::tr("run %1").arg(v.real_run) : QStringLiteral("–"));
    rows += QObject::tr(
                "<tr><td><b>%1</b></td><td align=right>%2</td><td align=right><b>%3</b></td>"
                "<td align=right>%4</td><td align=center>%5</td><td align=center>%6</td>"
                "<td align=center><b>%7</b></td><td>%8</td></tr>")
                .arg(v.label.toHtmlEscaped(), msCell(v.predicted_s), msCell(v.measured_s), error,
                     rankCell(v.guessed), rankCell(predicted_rank[i]), rankCell(measured_rank[i]),
                     runs);
  }
  return QObject::tr(
             "<p><b>The layouts side by side</b> (a step: the slowest rank's median, the "
             "first steps aside; rank 1 = fastest):</p><table cellpadding=4 border=0>"
             "<tr><th align=left>layout</th><th>predicted step</th><th>measured step</th>"
             "<th>error</th><th>your rank</th><th>predicted rank</th><th>measured rank</th>"
             "<th align=left>runs</th></tr>%1</table><p>%2</p>")
      .arg(rows, verdict(guessed, predicted_rank, measured_rank));
}

}  // namespace ranklab
