// Lesson 4: bucketing cuts the gradient into pieces of b bytes that start their all-reduce
// while backward still runs: ⌈S/b⌉ all-reduces a step, part of their time hidden.
#include <QObject>
#include <cmath>
#include <map>

#include "views/lessons/lesson.h"

namespace ranklab {

namespace {

QString bucketingText() {
  return QObject::tr(
      "<p>Backward computes the gradients from the last layer to the first. Waiting for "
      "all of them before the all-reduce leaves the network idle during backward and the "
      "cores idle during the all-reduce. <b>Bucketing</b> (PyTorch DDP, Horovod) cuts the "
      "flat gradient into <b>buckets</b> of <i>b</i> bytes, last layers first; as soon as "
      "backward has finished a bucket, a communication thread starts its all-reduce, so "
      "communication <b>overlaps</b> the rest of backward. A gradient of <i>S</i> bytes "
      "takes</p><p align=center><b>⌈S / b⌉</b> all-reduces per step.</p>"
      "<p>Small buckets start early but pay each all-reduce's latency (2(N−1) messages each "
      "for a ring); large ones start late and hide little. The part of the communication "
      "that ran while backward was still computing is <b>hidden</b>: it costs the step "
      "nothing. Priority scheduling (ByteScheduler) would go further and send the first "
      "layers' buckets first, because the next forward needs them first.</p>"
      "<p>The preset trains an MLP of three 256-wide layers (S = 1,340,456 bytes, the first "
      "layer's 803,840 of them finished last) on 2 ranks with buckets of 128 KiB. "
      "<b>Predict</b> how many all-reduces each rank runs per step.</p>");
}

LessonAnswer bucketingAnswer(const LessonRun& run) {
  LessonAnswer a;
  const std::optional<JobSpec> parsed = jobOrError(run, a);
  if (!parsed) return a;
  const JobSpec& job = *parsed;
  const int64_t b = int64_t(job.parallel.bucket_kb) * 1024;
  if (b <= 0 || job.compression.codec != "none") {
    a.error = QObject::tr(
                  "this lesson needs parallel.bucket_kb > 0 and no codec; run %1 has "
                  "bucket_kb = %2, codec %3")
                  .arg(run.run.id)
                  .arg(job.parallel.bucket_kb)
                  .arg(QString::fromStdString(job.compression.codec));
    return a;
  }
  std::map<int, std::vector<double>> count;  // all-reduces per step, by rank
  std::map<int, int64_t> comm, hidden;
  int64_t s_bytes = 0;
  for (const StepRow& s : run.steps) {
    count[s.rank].push_back(double(s.allreduces));
    comm[s.rank] += s.comm_ns;
    hidden[s.rank] += s.comm_hidden_ns;
    s_bytes = s.mem_params;
  }
  if (count.empty() || s_bytes <= 0) {
    a.error = QObject::tr("run %1 recorded no steps").arg(run.run.id);
    return a;
  }
  QString rows;
  double sum = 0;
  for (const auto& [rank, n] : count) {
    sum += medianOf(n);
    rows += QObject::tr(
                "<tr><td>rank %1</td><td align=right>%2 all-reduces</td><td align=right>"
                "%3 % of its communication hidden behind backward</td></tr>")
                .arg(rank)
                .arg(medianOf(n))
                .arg(100.0 * double(hidden[rank]) / double(std::max<int64_t>(1, comm[rank])), 0,
                     'f', 1);
  }
  a.measured = sum / double(count.size());
  a.formula = std::ceil(double(s_bytes) / double(b));
  a.formula_text = QObject::tr("⌈S / b⌉ = ⌈%L1 / %L2⌉").arg(s_bytes).arg(b);
  a.detail = QObject::tr(
                 "<p>Median per step of each rank's all-reduces (the step record's "
                 "count), and the share of its communication time that overlapped "
                 "backward:</p><table cellpadding=3>%1</table>")
                 .arg(rows);
  a.focus_step = 10;
  a.focus_steps = 1;
  return a;
}

// Step `step`'s buckets on every rank: when each left and how long its all-reduce took.
QString bucketTable(const LessonRun& run, int64_t step) {
  std::map<int, std::vector<const SpanRow*>> by_rank;
  for (const SpanRow& s : run.spans)
    if (s.step == step && s.kind == "bucket") by_rank[s.rank].push_back(&s);
  if (by_rank.empty()) return {};
  QString rows;
  for (const auto& [rank, buckets] : by_rank) {
    const int64_t t0 = buckets.front()->start_ns;
    for (const SpanRow* s : buckets)
      rows += QObject::tr(
                  "<tr><td>rank %1</td><td align=center>%2</td><td align=right>"
                  "%L3 B</td><td align=right>+%4 ms</td><td align=right>%5 ms</td>"
                  "</tr>")
                  .arg(rank)
                  .arg(s->part)
                  .arg(s->bytes)
                  .arg(double(s->start_ns - t0) / 1e6, 0, 'f', 2)
                  .arg(double(s->end_ns - s->start_ns) / 1e6, 0, 'f', 2);
  }
  return QObject::tr(
             "<p><b>Step %1, bucket by bucket</b> (bucket 0 holds the last layers: "
             "backward finishes it first):</p><table cellpadding=3><tr><th>rank</th>"
             "<th>bucket</th><th>sent</th><th>left after the first</th>"
             "<th>all-reduce</th></tr>%2</table>")
      .arg(step)
      .arg(rows);
}

}  // namespace

Lesson makeBucketingLesson() {
  return {.id = QStringLiteral("bucketing"),
          .title = QObject::tr("4. Bucketing and overlap"),
          .text = bucketingText(),
          .overrides = {},
          .question = QObject::tr("All-reduces each rank runs per step:"),
          .unit = QObject::tr("all-reduces"),
          .answer = bucketingAnswer,
          .step_view = bucketTable,
          .variants = {}};
}

}  // namespace ranklab
