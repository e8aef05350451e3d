// Lesson 4: bucketing cuts the gradient into pieces of b bytes that start their all-reduce
// while backward still runs: ⌈S/b⌉ all-reduces a step, part of their time hidden; its
// variant sends them first layer first (parallel.comm_schedule = "priority").
#include <QObject>
#include <algorithm>
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
      "nothing.</p><p><b>Priority scheduling</b> (ByteScheduler, P3; the variant "
      "<i>priority</i>) goes further: the next forward needs the first layers first, so "
      "their pieces go before waiting pieces of later layers, each piece is updated as it "
      "arrives, and the next forward starts as soon as its first layer's pieces are in, "
      "while the last layers' still move. The same ⌈S / b⌉ all-reduces, in another order; "
      "compare the step times.</p>"
      "<p>The preset trains an MLP of three 256-wide layers (S = 1,340,456 bytes, the first "
      "layer's 803,840 of them finished last) on 2 ranks with buckets of 128 KiB. "
      "<b>Predict</b> how many all-reduces each rank runs per step.</p>");
}

LessonAnswer bucketingAnswer(const LessonRun& run, const JobSpec& job) {
  LessonAnswer a;
  const bool priority = job.parallel.comm_schedule == CommSchedule::kPriority;
  const int64_t b = int64_t(priority ? job.parallel.partition_kb : job.parallel.bucket_kb) * 1024;
  if (b <= 0 || job.compression.compresses()) {
    a.error = QObject::tr(
                  "this lesson needs parallel.bucket_kb > 0 (or comm_schedule = \"priority\") "
                  "and no codec; run %1 has bucket_kb = %2, codec %3")
                  .arg(run.run.id)
                  .arg(job.parallel.bucket_kb)
                  .arg(QString::fromStdString(job.compression.codec));
    return a;
  }
  std::map<int, std::vector<double>> count;  // all-reduces per step, by rank
  std::map<int, std::vector<double>> step_ms, wait_ms;
  std::map<int, int64_t> comm, hidden, last_time;
  int64_t s_bytes = 0;
  for (const StepRow& s : run.steps) {
    count[s.rank].push_back(double(s.allreduces));
    if (last_time.count(s.rank))
      step_ms[s.rank].push_back(double(s.time_ns - last_time[s.rank]) / 1e6);
    last_time[s.rank] = s.time_ns;
    wait_ms[s.rank].push_back(double(s.wait_ns) / 1e6);
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
    rows +=
        QObject::tr(
            "<tr><td>rank %1</td><td align=right>%2 all-reduces</td><td align=right>"
            "%3 % of its communication hidden</td><td align=right>step %4 ms</td>"
            "<td align=right>waiting %5 ms</td></tr>")
            .arg(rank)
            .arg(medianOf(n))
            .arg(100.0 * double(hidden[rank]) / double(std::max<int64_t>(1, comm[rank])), 0, 'f', 1)
            .arg(medianOf(step_ms[rank]), 0, 'f', 2)
            .arg(medianOf(wait_ms[rank]), 0, 'f', 2);
  }
  a.measured = sum / double(count.size());
  a.formula = std::ceil(double(s_bytes) / double(b));
  a.formula_text = QObject::tr("⌈S / b⌉ = ⌈%L1 / %L2⌉").arg(s_bytes).arg(b);
  a.detail = QObject::tr(
                 "<p>Schedule <b>%1</b>. Median per step of each rank's all-reduces (the "
                 "step record's count), the share of its communication time that overlapped "
                 "computing (backward; under priority also the next forward), the step's "
                 "time and the part of it spent waiting for pieces:</p>"
                 "<table cellpadding=3>%2</table>")
                 .arg(priority ? QObject::tr("priority, first layers first")
                               : QObject::tr("fifo, in the order backward finishes them"))
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
  for (auto& [rank, buckets] : by_rank) {
    // In the order they left: under priority not the order backward finished them.
    std::sort(buckets.begin(), buckets.end(),
              [](const SpanRow* x, const SpanRow* y) { return x->start_ns < y->start_ns; });
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
             "<p><b>Step %1, bucket by bucket</b> in the order they left (bucket 0 holds "
             "the last layers: backward finishes it first; under priority a piece is "
             "recorded in the step during which its all-reduce ended):</p><table "
             "cellpadding=3><tr><th>rank</th>"
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
          .question = QObject::tr("All-reduces each rank runs per step:"),
          .unit = QObject::tr("all-reduces"),
          .answer = withJob(bucketingAnswer),
          .step_view = bucketTable,
          .variants = {{QObject::tr("fifo buckets (the preset)"), {}},
                       {QObject::tr("priority: first layers first"),
                        {"parallel.bucket_kb=0", "parallel.comm_schedule=\"priority\"",
                         "parallel.partition_kb=128"}}}};
}

}  // namespace ranklab
