// Lesson 10: Megatron's tensor parallelism splits each pair of Linear layers over t slices,
// joined by f (all-reduce of the input gradient in backward) and g (all-reduce of the output
// in forward): per step, each slice sends 2(t − 1)/t of 4B · (the pairs' outputs + the input
// widths of every pair but the first), measured from the step records.
#include <QObject>
#include <map>

#include "views/lessons/lesson.h"

namespace ranklab {

namespace {

QString tensorText() {
  return QObject::tr(
      "<p><b>Tensor parallelism</b> (Megatron-LM) splits each layer instead of the batch or "
      "the depth. Linear layers go in pairs: the first is split by its outputs "
      "(<b>column-parallel</b>: each of the <i>t</i> slices computes 1/t of them, and the "
      "ReLU runs on its slice), the second by its inputs (<b>row-parallel</b>: each slice "
      "multiplies its 1/t of the inputs, and the partial outputs must be summed). Two "
      "operators join them: <b>g</b> after a pair all-reduces its output in forward; "
      "<b>f</b> before a pair all-reduces the input gradient in backward (the first pair "
      "needs none: the data takes no gradient). With a batch of <i>B</i>, each slice sends "
      "per step</p><p align=center><b>2(t − 1)/t · 4B · (Σ pair outputs + Σ pair inputs "
      "after the first)</b> bytes,</p><p>activations, not gradients: the bytes grow with the "
      "batch, not with the parameters, and they sit inside forward and backward, where "
      "nothing else can hide them.</p><p>The preset runs 784-256-256-256-10 (two pairs) "
      "on t = 2 slices, B = 64. <b>Predict</b> the bytes each slice sends per step.</p>");
}

// The tensor-parallel all-reduces of an MLP's step: the floats per sample they sum.
struct PairSums {
  int64_t floats = 0;  // per sample: g's outputs plus f's inputs
  int allreduces = 0;
};

PairSums pairSums(const JobSpec& job, int64_t inputs, int64_t classes) {
  std::vector<int64_t> widths{inputs};
  for (int w : job.model.layers) widths.push_back(w);
  widths.push_back(classes);
  PairSums sums;
  // Linear i maps widths[i] to widths[i + 1]; pairs are (0, 1), (2, 3), ...
  for (size_t first = 0; first + 2 < widths.size(); first += 2) {
    sums.floats += widths[first + 2];  // g: the pair's output
    ++sums.allreduces;
    if (first > 0) sums.floats += widths[first], ++sums.allreduces;  // f: its input gradient
  }
  return sums;
}

LessonAnswer tensorAnswer(const LessonRun& run, const JobSpec& job) {
  LessonAnswer a;
  const int t = job.parallel.tensor;
  if (job.model.kind != ModelKind::kMlp || job.data.dataset != DatasetKind::kFashionMnist ||
      t < 2 || job.parallel.ranks != t || job.parallel.microbatches != 1 ||
      job.train.accumulate_steps != 1) {
    a.error = QObject::tr(
                  "this lesson needs an MLP on fashion-mnist split over every rank "
                  "(parallel.ranks = parallel.tensor > 1), one micro-batch; run %1 has %2 on "
                  "%3, %4 ranks, tensor %5")
                  .arg(run.run.id)
                  .arg(QString::fromStdString(nameText(job.model.kind)))
                  .arg(QString::fromStdString(nameText(job.data.dataset)))
                  .arg(job.parallel.ranks)
                  .arg(t);
    return a;
  }
  std::map<int, std::vector<double>> bytes, count, comm_ms;
  for (const StepRow& s : run.steps) {
    bytes[s.rank].push_back(double(s.bytes_tx));
    count[s.rank].push_back(double(s.allreduces));
    comm_ms[s.rank].push_back(double(s.comm_ns) / 1e6);
  }
  if (bytes.empty()) {
    a.error = QObject::tr("run %1 recorded no steps").arg(run.run.id);
    return a;
  }
  const PairSums sums = pairSums(job, 784, 10);
  const int64_t b = job.train.batch_size;
  const double share = 2.0 * (t - 1) / t;
  a.formula = share * 4.0 * double(b * sums.floats);
  a.formula_text =
      QObject::tr("2(t − 1)/t · 4B · %L1, t = %2, B = %3").arg(sums.floats).arg(t).arg(b);
  QString rows;
  double sum = 0;
  for (const auto& [rank, n] : bytes) {
    sum += medianOf(n);
    rows += QObject::tr(
                "<tr><td>slice %1</td><td align=right>%L2 B</td><td align=right>%3 "
                "all-reduces (formula %4)</td><td align=right>%5 ms in them</td></tr>")
                .arg(rank)
                .arg(qint64(medianOf(n)))
                .arg(medianOf(count[rank]))
                .arg(sums.allreduces)
                .arg(medianOf(comm_ms[rank]), 0, 'f', 2);
  }
  a.measured = sum / double(bytes.size());
  a.detail = QObject::tr(
                 "<p>Median per step of each slice's bytes sent (the step record's "
                 "<code>bytes_tx</code>: with every rank a slice of one model there is no "
                 "gradient all-reduce), its f and g all-reduces, and the time spent in "
                 "them, moved out of forward and backward into communication:</p>"
                 "<table cellpadding=3>%1</table>")
                 .arg(rows);
  return a;
}

}  // namespace

Lesson makeTensorLesson() {
  return {.id = QStringLiteral("tensor"),
          .title = QObject::tr("10. Tensor parallelism: f and g"),
          .text = tensorText(),
          .question = QObject::tr("Bytes each slice sends per step:"),
          .unit = QObject::tr("bytes"),
          .answer = withJob(tensorAnswer),
          .variants = {{QObject::tr("2 slices (the preset)"), {}},
                       {QObject::tr("4 slices"), {"parallel.ranks=4", "parallel.tensor=4"}}}};
}

}  // namespace ranklab
