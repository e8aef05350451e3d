// Lesson 3: in synchronous SGD every rank waits for the slowest one at each all-reduce: a
// rank's wait is the straggler's compute minus its own.
#include <QObject>
#include <map>

#include "engine/job/stored_job.h"
#include "views/lessons/lesson.h"

namespace ranklab {

namespace {

QString stragglerText() {
  return QObject::tr(
      "<p>In <b>synchronous</b> data-parallel SGD no rank can finish a step before the "
      "all-reduce has every rank's gradient. One slow rank — a busy core, a slower GPU, a "
      "thermal throttle — is a <b>straggler</b>, and the others <b>wait</b> for it at the "
      "barrier every step:</p>"
      "<p align=center><b>wait<sub>r</sub> = C<sub>slowest</sub> − C<sub>r</sub></b></p>"
      "<p>where C is a rank's compute time in a step (data, forward, backward, update). The "
      "whole run goes at the straggler's pace. <b>Asynchronous</b> SGD (a parameter server "
      "that applies each push as it comes, <tt>ps-async</tt>) does not wait, but the fast "
      "workers then compute on parameters that are several updates old (<b>staleness</b>), "
      "which can cost accuracy; bounded staleness caps how old they may be.</p>"
      "<p>The preset slows rank 2 by 10 ms a step on 4 ranks. <b>Predict</b> how many "
      "milliseconds a fast rank waits per step.</p>");
}

int64_t computeNs(const StepRow& s) {
  return s.data_ns + s.forward_ns + s.backward_ns + s.compress_ns + s.update_ns;
}

LessonAnswer stragglerAnswer(const LessonRun& run) {
  LessonAnswer a;
  std::map<int, std::vector<double>> compute, wait;  // ms per step, by rank
  for (const StepRow& s : run.steps) {
    compute[s.rank].push_back(double(computeNs(s)) / 1e6);
    wait[s.rank].push_back(double(s.wait_ns) / 1e6);
  }
  if (compute.size() < 2) {
    a.error = QObject::tr("a straggler needs two ranks or more");
    return a;
  }
  int slowest = compute.begin()->first;
  for (const auto& [rank, ms] : compute)
    if (medianOf(ms) > medianOf(compute[slowest])) slowest = rank;
  const double c_slowest = medianOf(compute[slowest]);
  double waited = 0, predicted = 0;
  QString rows;
  for (const auto& [rank, ms] : compute) {
    rows += QStringLiteral(
                "<tr><td>rank %1%2</td><td align=right>compute %3 ms</td>"
                "<td align=right>wait %4 ms</td></tr>")
                .arg(rank)
                .arg(rank == slowest ? QObject::tr(" (slowest)") : QString())
                .arg(medianOf(ms), 0, 'f', 2)
                .arg(medianOf(wait[rank]), 0, 'f', 2);
    if (rank == slowest) continue;
    waited += medianOf(wait[rank]);
    predicted += c_slowest - medianOf(ms);
  }
  const double fast = double(compute.size() - 1);
  a.measured = waited / fast;
  a.formula = predicted / fast;
  const std::optional<JobSpec> job = storedJobOf(run.run).job;
  const int delay_ms = job ? job->fault.straggler_delay_ms : 0;
  a.formula_text = QObject::tr("C_slowest − C_rank, mean of the fast ranks");
  a.detail = QObject::tr(
                 "<p>Medians per step of each rank's compute and wait:</p>"
                 "<table cellpadding=3>%1</table><p>The job slows rank %2 by %3 ms a "
                 "step (<tt>fault.straggler_delay_ms</tt>): that delay is most of the "
                 "difference; a sleep also overshoots a little.</p>")
                 .arg(rows)
                 .arg(slowest)
                 .arg(delay_ms);
  a.focus_step = 10;
  return a;
}

}  // namespace

Lesson makeStragglerLesson() {
  return {
      .id = QStringLiteral("straggler"),
      .title = QObject::tr("3. Sync SGD with a straggler"),
      .text = stragglerText(),
      .question = QObject::tr("Milliseconds a fast rank waits per step:"),
      .unit = QObject::tr("ms"),
      .answer = stragglerAnswer,
  };
}

}  // namespace ranklab
