// Lesson 13: choose a layout. One GPT on 4 ranks laid out three ways — 4 data replicas,
// 2 pipeline stages x 2 replicas (1F1B), 2 tensor slices x 2 replicas. The learner ranks them
// by step time before anything runs; the lesson simulates each (the calibrated model of
// docs/plan.md), runs each, and sets the three rankings side by side (layout_ranking.h).
#include <QObject>

#include "storage/analysis/step_measure.h"
#include "views/lessons/lesson.h"

namespace ranklab {

namespace {

QString chooseLayoutText() {
  return QObject::tr(
      "<p>Four ranks can hold one GPT in many ways. Which is fastest depends on what each "
      "layout sends and how long each rank computes between messages:</p><ul>"
      "<li><b>data 4</b>: every rank holds the whole model and a quarter of the batch; one "
      "all-reduce of the whole gradient a step, <b>2(n−1)/n·4ψ</b> bytes a rank;</li>"
      "<li><b>pipeline 2 × data 2</b> (1F1B, 2 micro-batches): each rank holds half the "
      "blocks; activations and their gradients cross the stages, a stage idles "
      "<b>(p−1)/(m+p−1)</b> of a step (the bubble), and each all-reduce is half as big;</li>"
      "<li><b>tensor 2 × data 2</b>: each rank holds half of every block's matrices and "
      "does half of each product's work, paid for by <b>4 all-reduces a block</b> of the "
      "activations (f and g, forward and backward): small messages, each waited for, beside "
      "the half-size gradient all-reduce.</li></ul>"
      "<p>The preset: a GPT of 2 blocks (h = 64, 4 heads, s = 32, V = 256), batch 16, "
      "30 steps. <b>Rank the three layouts</b>, fastest step first. The lesson then asks "
      "<code>ranklab simulate</code> for each (its prediction, from this machine's "
      "calibration), runs each for real, and shows the simulator's ranking and the "
      "measurement's beside yours.</p>");
}

// The run's step (ms) by the prediction's measure, beside what was predicted for it.
LessonAnswer chooseLayoutAnswer(const LessonRun& run) {
  LessonAnswer a;
  if (run.steps.empty()) {
    a.error = QObject::tr("run %1 stored no step").arg(run.run.id);
    return a;
  }
  a.measured = measuredStep(run.steps).step_s * 1e3;
  if (const auto predicted = predictionOf(run.events)) {
    a.formula = predicted->step_s * 1e3;
    a.formula_text = QObject::tr("simulated run %1").arg(predicted->simulated_run);
  } else {
    a.formula_text = QObject::tr("no simulation of this layout stored before it ran");
  }
  a.focus_step = 4;  // past the first steps, which the measure leaves aside
  return a;
}

}  // namespace

Lesson makeChooseLayoutLesson() {
  return {
      .id = QStringLiteral("choose-layout"),
      .title = QObject::tr("13. Choose a layout: predict, then measure"),
      .text = chooseLayoutText(),
      .question = QObject::tr("Rank the layouts, fastest step first:"),
      .unit = QObject::tr("ms"),
      .answer = chooseLayoutAnswer,
      .variants = {{QObject::tr("data 4"), {}},
                   {QObject::tr("pipeline 2 × data 2"),
                    {"parallel.pipeline=2", "parallel.microbatches=2", "parallel.schedule=1f1b"}},
                   {QObject::tr("tensor 2 × data 2"), {"parallel.tensor=2"}}},
      .ranks_variants = true};
}

}  // namespace ranklab
