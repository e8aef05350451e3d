// Lesson 9: ZeRO shards the model states over the data-parallel ranks: with Adam in fp32, a
// rank holds 16 psi bytes without it, 4 psi + 4 psi + 8 psi / N with stage 1 (optimizer
// state), 4 psi + 12 psi / N with stage 2 (and gradients), 16 psi / N with stage 3 (and
// parameters): measured from each rank's memory ledger.
#include <QObject>
#include <map>

#include "views/lessons/lesson.h"

namespace ranklab {

namespace {

QString zeroText() {
  return QObject::tr(
      "<p>Data parallelism keeps a whole copy of the model on every rank: with Adam in "
      "fp32, <i>ψ</i> parameters cost 4ψ bytes of parameters, 4ψ of gradients and 8ψ of "
      "Adam's two moments, <b>16ψ</b> per rank however many ranks there are. <b>ZeRO</b> "
      "(DeepSpeed) gives each of the <i>N</i> data-parallel ranks one slice of these model "
      "states: stage 1 shards the optimizer state (each rank updates its slice, then the "
      "slices are all-gathered), stage 2 also the gradients (reduce-scattered as backward "
      "finishes each layer), stage 3 also the parameters (all-gathered before each layer's "
      "forward and backward, 1.5× the bytes of one all-reduce):</p>"
      "<p align=center><b>16ψ → 8ψ + 8ψ/N → 4ψ + 12ψ/N → 16ψ/N</b></p>"
      "<p>The preset trains an MLP of ψ = 269,322 parameters with Adam on N = 4 ranks, "
      "ZeRO stage 1; the variants run stages 0, 2 and 3 on the same job. The ledger is "
      "what each rank reports every step. <b>Predict</b> the bytes of model states each "
      "rank holds.</p>");
}

// ψ of the job's MLP (or the Linear layers of anything else the ledger reports).
int64_t mlpParameters(const JobSpec& job, int64_t inputs, int64_t classes) {
  int64_t psi = 0, in = inputs;
  for (int width : job.model.layers) psi += in * width + width, in = width;
  return psi + in * classes + classes;
}

struct Ledger {
  std::vector<double> params, grads, optimizer, buffers;
};

LessonAnswer zeroAnswer(const LessonRun& run, const JobSpec& job) {
  LessonAnswer a;
  if (job.model.kind != ModelKind::kMlp || job.data.dataset != DatasetKind::kFashionMnist ||
      job.train.optimizer == OptimizerKind::kSgd || job.amp.dtype != AmpDtype::kFp32) {
    a.error = QObject::tr(
                  "this lesson needs an MLP on fashion-mnist with Adam in fp32; run %1 has %2 "
                  "on %3, %4, %5")
                  .arg(run.run.id)
                  .arg(QString::fromStdString(nameText(job.model.kind)))
                  .arg(QString::fromStdString(nameText(job.data.dataset)))
                  .arg(QString::fromStdString(nameText(job.train.optimizer)))
                  .arg(QString::fromStdString(nameText(job.amp.dtype)));
    return a;
  }
  std::map<int, Ledger> ledgers;
  for (const StepRow& s : run.steps) {
    Ledger& l = ledgers[s.rank];
    l.params.push_back(double(s.mem_params));
    l.grads.push_back(double(s.mem_grads));
    l.optimizer.push_back(double(s.mem_optimizer));
    l.buffers.push_back(double(s.mem_buffers));
  }
  if (ledgers.empty()) {
    a.error = QObject::tr("run %1 recorded no steps").arg(run.run.id);
    return a;
  }
  const double psi = double(mlpParameters(job, 784, 10));
  const double n = double(job.parallel.ranks), z = job.parallel.zero;
  const double params = z >= 3 ? 4 * psi / n : 4 * psi, grads = z >= 2 ? 4 * psi / n : 4 * psi,
               optimizer = z >= 1 ? 8 * psi / n : 8 * psi;
  QString rows;
  double sum = 0;
  for (const auto& [rank, l] : ledgers) {
    const double p = medianOf(l.params), g = medianOf(l.grads), o = medianOf(l.optimizer);
    sum += p + g + o;
    rows += QObject::tr(
                "<tr><td>rank %1</td><td align=right>%L2</td><td align=right>%L3</td>"
                "<td align=right>%L4</td><td align=right>%L5</td><td align=right>%L6</td></tr>")
                .arg(rank)
                .arg(qint64(p))
                .arg(qint64(g))
                .arg(qint64(o))
                .arg(qint64(p + g + o))
                .arg(qint64(medianOf(l.buffers)));
  }
  rows += QObject::tr(
              "<tr><td><i>formula</i></td><td align=right><i>%L1</i></td><td align=right>"
              "<i>%L2</i></td><td align=right><i>%L3</i></td><td align=right><i>%L4</i></td>"
              "<td></td></tr>")
              .arg(qint64(params))
              .arg(qint64(grads))
              .arg(qint64(optimizer))
              .arg(qint64(params + grads + optimizer));
  a.measured = sum / double(ledgers.size());
  a.formula = params + grads + optimizer;
  static const char* const kStages[] = {"16ψ", "8ψ + 8ψ/N", "4ψ + 12ψ/N", "16ψ/N"};
  a.formula_text = QObject::tr("stage %1: %2, ψ = %L3, N = %4")
                       .arg(job.parallel.zero)
                       .arg(QString::fromUtf8(kStages[job.parallel.zero]))
                       .arg(qint64(psi))
                       .arg(job.parallel.ranks);
  a.detail = QObject::tr(
                 "<p>Each rank's memory ledger in bytes, median over the steps: "
                 "parameters, gradients, optimizer state, their sum (the model states), and "
                 "the one-layer scratch ZeRO 2 and 3 keep besides them:</p>"
                 "<table cellpadding=3><tr><th></th><th>params</th><th>grads</th>"
                 "<th>optimizer</th><th>model states</th><th>scratch</th></tr>%1</table>"
                 "<p>A ring chunk holds ⌈ψ/N⌉ or ⌊ψ/N⌋ parameters, so a slice is off the "
                 "formula by a few bytes.</p>")
                 .arg(rows);
  return a;
}

}  // namespace

Lesson makeZeroLesson() {
  return {.id = QStringLiteral("zero"),
          .title = QObject::tr("9. ZeRO's memory ledger"),
          .text = zeroText(),
          .question = QObject::tr("Bytes of model states each rank holds:"),
          .unit = QObject::tr("bytes"),
          .answer = withJob(zeroAnswer),
          .variants = {{QObject::tr("stage 1 (the preset)"), {}},
                       {QObject::tr("no ZeRO"), {"parallel.zero=0"}},
                       {QObject::tr("stage 2"), {"parallel.zero=2"}},
                       {QObject::tr("stage 3"), {"parallel.zero=3"}}}};
}

}  // namespace ranklab
