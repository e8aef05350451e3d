// Lesson 11: where a transformer's memory goes. A rank holds 16 ψ bytes of model states with
// AdamW in fp32, and its blocks keep 4·b·s·(6h + 16h/t + 4 + a·s/t) bytes each for backward
// (engine/model/activation_formula.h derives it; docs/memory.md sets it beside Megatron's):
// the activations, measured from each rank's "activations" event, outweigh the model.
#include <QObject>
#include <map>

#include "views/lessons/lesson.h"

namespace ranklab {

namespace {

QString transformerMemoryText() {
  return QObject::tr(
      "<p>A rank training a model holds its <b>model states</b> — with AdamW in fp32, 4 bytes "
      "of parameters, 4 of gradients and 8 of Adam's two moments per parameter, 16ψ — and "
      "the <b>activations</b> its forward keeps for backward. For a transformer the second "
      "is the larger. Per block, with batch <i>b</i>, context <i>s</i>, width <i>h</i>, "
      "<i>a</i> heads and <i>t</i> tensor slices, this implementation keeps in fp32 (as "
      "Korthikanti et al. count Megatron's):</p>"
      "<p align=center><b>4·b·s·(6h + 16h/t + 4 + a·s/t)</b> bytes</p>"
      "<p>the block's output and its inner tensors (q, k, v, the MLP's 4h-wide hidden "
      "layer, GELU's slope), the LayerNorms' statistics, and the attention's probabilities, "
      "which grow as <i>s</i>²; the embedding, the final LayerNorm, the logits and the "
      "loss's probabilities add 4·b·s·(2h + 2 + 2V). Tensor parallelism divides the split "
      "terms, ZeRO only the model states, a longer context the attention most.</p>"
      "<p>The preset trains gpt-char's GPT (4 blocks, h = 128, a = 4, s = 64, V = 256, "
      "ψ = 834,304) on 2 ranks, b = 16. <b>Predict</b> the bytes of activations each rank "
      "keeps.</p>");
}

// ψ of a GPT whose head is tied to its embedding: embeddings, 12h² + 13h per block, ln_f.
double gptParameters(const JobSpec& job, double vocab) {
  const double h = job.model.width;
  return vocab * h + job.model.context * h + job.model.blocks * (12 * h * h + 13 * h) + 2 * h;
}

// The formula's activations of one rank holding every block, split over t slices.
double activationsFormula(const JobSpec& job, double vocab) {
  const double b = job.train.batch_size, s = job.model.context, h = job.model.width;
  const double a = job.model.heads, t = job.parallel.tensor;
  const double block = 4 * b * s * (6 * h + 16 * h / t + 4 + a * s / t);
  return job.model.blocks * block + 4 * b * s * (2 * h + 2 + 2 * vocab);
}

// Each rank's activations and model states, from its ledger.
struct RankMemory {
  double activations = 0, states = 0;
  QString layers;  // "h0 12.6 MB, ..."
};

std::map<int, RankMemory> memoryOf(const LessonRun& run) {
  std::map<int, RankMemory> ranks;
  for (const EventRow& e : run.events) {
    if (e.kind != "activations") continue;
    RankMemory& r = ranks[e.rank];
    r.activations = 0;
    r.layers.clear();
    for (const LayerActivations& layer : parseActivationsEvent(e.text)) {
      r.activations += double(layer.bytes);
      r.layers += QObject::tr("%1%2 %3")
                      .arg(r.layers.isEmpty() ? "" : ", ")
                      .arg(QString::fromStdString(layer.layer))
                      .arg(double(layer.bytes) / 1e6, 0, 'f', 2);
    }
  }
  for (const StepRow& s : run.steps) {
    if (ranks.count(s.rank))
      ranks[s.rank].states = double(s.mem_params + s.mem_grads + s.mem_optimizer);
  }
  return ranks;
}

LessonAnswer transformerMemoryAnswer(const LessonRun& run, const JobSpec& job) {
  LessonAnswer a;
  if (job.model.kind != ModelKind::kGpt || job.parallel.pipeline != 1 ||
      job.amp.dtype != AmpDtype::kFp32) {
    a.error = QObject::tr("this lesson needs a GPT in fp32 without a pipeline; run %1 has %2")
                  .arg(run.run.id)
                  .arg(QString::fromStdString(nameText(job.model.kind)));
    return a;
  }
  const std::map<int, RankMemory> ranks = memoryOf(run);
  if (ranks.empty()) {
    a.error = QObject::tr("run %1 recorded no activations (an older run?)").arg(run.run.id);
    return a;
  }
  const double vocab = 256, psi = gptParameters(job, vocab);
  QString rows;
  double sum = 0;
  for (const auto& [rank, r] : ranks) {
    sum += r.activations;
    rows += QObject::tr(
                "<tr><td>rank %1</td><td align=right>%L2</td><td align=right>%L3</td>"
                "<td>%4</td></tr>")
                .arg(rank)
                .arg(qint64(r.states))
                .arg(qint64(r.activations))
                .arg(r.layers);
  }
  a.measured = sum / double(ranks.size());
  a.formula = activationsFormula(job, vocab);
  a.formula_text = QObject::tr(
                       "%1 blocks × 4·%2·%3·(6·%4 + 16·%4/%5 + 4 + %6·%3/%5) + "
                       "4·%2·%3·(2·%4 + 2 + 2·256)")
                       .arg(job.model.blocks)
                       .arg(job.train.batch_size)
                       .arg(job.model.context)
                       .arg(job.model.width)
                       .arg(job.parallel.tensor)
                       .arg(job.model.heads);
  a.detail = QObject::tr(
                 "<p>Each rank's model states (parameters, gradients and optimizer state: "
                 "16ψ = %L1 bytes without ZeRO or slices) and activations in bytes, then its "
                 "activations per layer in MB (after the warm-up):</p>"
                 "<table cellpadding=3><tr><th></th><th>model states</th>"
                 "<th>activations</th><th>per layer</th></tr>%2</table>")
                 .arg(qint64(16 * psi))
                 .arg(rows);
  return a;
}

}  // namespace

Lesson makeTransformerMemoryLesson() {
  return {.id = QStringLiteral("transformer-memory"),
          .title = QObject::tr("11. Where a transformer's memory goes"),
          .text = transformerMemoryText(),
          .question = QObject::tr("Bytes of activations each rank keeps for backward:"),
          .unit = QObject::tr("bytes"),
          .answer = withJob(transformerMemoryAnswer),
          .variants = {{QObject::tr("2 data ranks (the preset)"), {}},
                       {QObject::tr("tensor 2"), {"parallel.tensor=2"}},
                       {QObject::tr("ZeRO 1"), {"parallel.zero=1"}},
                       {QObject::tr("ZeRO 3"), {"parallel.zero=3"}},
                       {QObject::tr("context 128"), {"model.context=128"}},
                       {QObject::tr("batch 32"), {"train.batch_size=32"}}}};
}

}  // namespace ranklab
