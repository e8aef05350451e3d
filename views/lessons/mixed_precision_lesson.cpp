// Lesson 6: fp16's dynamic loss scale probes upward and backs off: once it has found the
// ceiling, one update in every growth_interval + 1 is skipped.
#include <QObject>
#include <map>

#include "views/lessons/lesson.h"

namespace ranklab {

namespace {

QString mixedPrecisionText() {
  return QObject::tr(
      "<p><b>Mixed precision</b> runs the matrix products in 16 bits (twice the speed and "
      "half the bytes on hardware made for it) and keeps fp32 <b>master weights</b> for the "
      "update. <b>bf16</b> keeps fp32's 8-bit exponent and only loses mantissa, so small "
      "gradients survive. <b>fp16</b> has a 5-bit exponent: gradients below 6·10<sup>−8"
      "</sup> become zero. So the loss is multiplied by a <b>loss scale</b> before "
      "backward and the gradients divided by it after: the small ones move up into fp16's "
      "range. Too large a scale overflows (inf/NaN): then the step's update is "
      "<b>skipped</b> and the scale halved.</p>"
      "<p>Nobody knows the right scale in advance, so it is <b>dynamic</b>: after "
      "<i>g</i> = <tt>amp.growth_interval</tt> clean steps in a row it doubles. Once it "
      "has reached the ceiling the gradients allow, every doubling overflows: a sawtooth of "
      "<i>g</i> clean steps and one skipped, so the share of updates skipped is</p>"
      "<p align=center><b>1 / (g + 1)</b></p>"
      "<p>As training goes on the gradients shrink and the ceiling rises, so some doublings "
      "fit and fewer steps are skipped. A skipped step costs its compute; it does not hurt "
      "the model.</p>"
      "<p>The preset trains the quickstart MLP in fp16 on 2 ranks with <i>g</i> = 10 "
      "(the default is 2000). <b>Predict</b> the percentage of updates skipped once the "
      "scale first overflows.</p>");
}

LessonAnswer mixedPrecisionAnswer(const LessonRun& run, const JobSpec& job) {
  LessonAnswer a;
  if (job.amp.dtype == AmpDtype::kFp32) {
    a.error = QObject::tr("this lesson needs amp.dtype = \"fp16\" or \"bf16\"; run %1 is fp32")
                  .arg(run.run.id);
    return a;
  }
  std::map<int64_t, const StepRow*> steps;  // rank 0's: every rank skips together
  for (const StepRow& s : run.steps)
    if (s.rank == 0) steps[s.step] = &s;
  int64_t first = -1, after = 0, skipped = 0;
  for (const auto& [step, s] : steps) {
    if (first < 0 && s->overflow) first = step;
    if (first < 0 || step == first) continue;
    ++after;
    skipped += s->overflow ? 1 : 0;
  }
  if (first < 0 || after == 0) {
    a.error = QObject::tr("the loss scale of run %1 never overflowed: nothing was skipped")
                  .arg(run.run.id);
    return a;
  }
  const int g = job.amp.growth_interval;
  a.measured = 100.0 * double(skipped) / double(after);
  a.formula = 100.0 / double(g + 1);
  a.formula_text = QObject::tr("100 / (g + 1), g = %1").arg(g);
  a.detail = QObject::tr(
                 "<p>The scale started at %L1 and first overflowed at step %2 (scale %L3). "
                 "Of the %4 steps after it, %5 were skipped. The timeline marks each "
                 "skip in amber; below, every change of the scale.</p>")
                 .arg(job.amp.init_scale, 0, 'f', 0)
                 .arg(first)
                 .arg(steps[first]->loss_scale, 0, 'f', 0)
                 .arg(after)
                 .arg(skipped);
  a.focus_step = std::max<int64_t>(1, first - 1);
  a.focus_steps = 3;
  return a;
}

// The loss scale's changes up to and around `step`: each doubling and each skip.
QString scaleTrace(const LessonRun& run, int64_t step) {
  QString rows;
  double last = 0;
  int shown = 0;
  for (const StepRow& s : run.steps) {
    if (s.rank != 0) continue;
    if (s.loss_scale != last || s.overflow) {
      const bool now = s.step >= step && s.step < step + 3;
      rows += QObject::tr(
                  "<tr%1><td align=right>step %2</td><td align=right>scale %L3</td>"
                  "<td>%4</td></tr>")
                  .arg(now ? QStringLiteral(" bgcolor=#fff3cd") : QString())
                  .arg(s.step)
                  .arg(s.loss_scale, 0, 'f', 0)
                  .arg(s.overflow  ? QObject::tr("<b>overflow</b>: update skipped, halved")
                       : last == 0 ? QObject::tr("the start")
                       : s.loss_scale > last ? QObject::tr("doubled after clean steps")
                                             : QString());
      ++shown;
    }
    last = s.loss_scale;
  }
  if (shown == 0) return {};
  return QObject::tr(
             "<p><b>The loss scale on rank 0</b> (the replayed steps highlighted):</p>"
             "<table cellpadding=2>%1</table>")
      .arg(rows);
}

}  // namespace

Lesson makeMixedPrecisionLesson() {
  return {
      .id = QStringLiteral("mixed-precision"),
      .title = QObject::tr("6. Mixed precision: loss scaling"),
      .text = mixedPrecisionText(),
      .question = QObject::tr("Percent of updates skipped after the first overflow:"),
      .unit = QObject::tr("%"),
      .answer = withJob(mixedPrecisionAnswer),
      .step_view = scaleTrace,
  };
}

}  // namespace ranklab
