// Lesson 7: a pipeline's stages sit idle while the first micro-batches fill it and the last
// drain it: (p − 1)/(m + p − 1) of a step for p equal stages and m micro-batches.
#include <QObject>
#include <map>

#include "engine/job/pipeline_bubble.h"
#include "views/lessons/lesson.h"

namespace ranklab {

namespace {

QString pipelineText() {
  return QObject::tr(
      "<p>When a model does not fit one device, <b>pipeline parallelism</b> cuts its layers "
      "into <i>p</i> <b>stages</b>, one per rank: activations go forward from stage to "
      "stage, gradients come back. A whole batch would keep only one stage busy at a time, "
      "so the batch is split into <i>m</i> <b>micro-batches</b> that follow each other "
      "through the stages. Still, the last stage waits while the first micro-batch fills "
      "the pipe, and the first stage waits while the last one drains it: the "
      "<b>bubble</b>. With equal stages each one idles</p>"
      "<p align=center><b>(p − 1) / (m + p − 1)</b></p>"
      "<p>of a step (GPipe's paper). More micro-batches shrink it, at the price of smaller "
      "matrix products. <b>GPipe</b> runs every forward, then every backward, so a stage "
      "holds all <i>m</i> micro-batches' activations; <b>1F1B</b> alternates one forward "
      "and one backward once the pipe is full: the same bubble, but at most <i>p</i> "
      "micro-batches held. <b>ZeRO</b> (lesson 9) splits the optimizer state, gradients "
      "and parameters across data-parallel ranks instead, and <b>tensor parallelism</b> "
      "(lesson 10) each layer.</p>"
      "<p>The preset runs a deep MLP as 2 stages of 4 micro-batches, GPipe. <b>Predict</b> "
      "the percentage of a step a stage sits idle.</p>");
}

LessonAnswer pipelineAnswer(const LessonRun& run, const JobSpec& job) {
  LessonAnswer a;
  const int p = job.parallel.pipeline, m = job.parallel.microbatches;
  if (p < 2) {
    a.error = QObject::tr("this lesson needs parallel.pipeline of 2 or more; run %1 has %2")
                  .arg(run.run.id)
                  .arg(p);
    return a;
  }
  std::map<int, int64_t> wait, busy, stashed;  // by stage (rank), summed over the steps
  for (const StepRow& s : run.steps) {
    wait[s.rank] += s.wait_ns;
    busy[s.rank] += s.data_ns + s.forward_ns + s.backward_ns + s.comm_ns + s.update_ns;
    stashed[s.rank] = std::max(stashed[s.rank], s.stashed);
  }
  if (wait.empty()) {
    a.error = QObject::tr("run %1 recorded no steps").arg(run.run.id);
    return a;
  }
  QString rows;
  double share = 0;
  for (const auto& [rank, w] : wait) {
    const double idle = double(w) / double(std::max<int64_t>(1, w + busy[rank]));
    share += idle;
    rows += QObject::tr(
                "<tr><td>stage %1</td><td align=right>idle %2 %</td><td align=right>"
                "held at most %3 micro-batches</td></tr>")
                .arg(rank)
                .arg(100 * idle, 0, 'f', 1)
                .arg(stashed[rank]);
  }
  a.measured = 100 * share / double(wait.size());
  a.formula = 100 * bubbleFormula(p, m);
  a.formula_text = QObject::tr("100 · (p − 1)/(m + p − 1), p = %1, m = %2").arg(p).arg(m);
  a.detail = QObject::tr(
                 "<p>Each stage's time blocked on its neighbour (the step record's wait) "
                 "over its whole step time, summed over the run; schedule %1:</p>"
                 "<table cellpadding=3>%2</table><p>The formula assumes equal stages and "
                 "free sends; the stages here differ a little in cost, and each send "
                 "takes time. In the timeline below every micro-batch's forward and "
                 "backward sits where it ran, numbered, the gaps in the wait colour.</p>")
                 .arg(QString::fromStdString(nameText(job.parallel.schedule)))
                 .arg(rows);
  a.focus_step = 10;
  a.focus_steps = 2;
  return a;
}

}  // namespace

Lesson makePipelineLesson() {
  return {
      .id = QStringLiteral("pipeline"),
      .title = QObject::tr("7. Pipeline bubbles"),
      .text = pipelineText(),
      .question = QObject::tr("Percent of a step a stage sits idle:"),
      .unit = QObject::tr("%"),
      .answer = withJob(pipelineAnswer),
  };
}

}  // namespace ranklab
