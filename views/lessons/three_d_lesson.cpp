// Lesson 12: 3D parallelism, who talks to whom. 8 ranks as 2 replicas x 2 stages x 2 slices
// of a GPT; per step each rank sends to three groups: its tensor group 2(t-1)/t of 4 blocks'
// f and g activations, its pipeline group the stage's activations or their gradients (and
// the token table between the first and last stages), its data group 2(n-1)/n of its part's
// gradient. Measured from the step records' bytes per group, beside each rank's "traffic"
// event (the formulas, engine/train/traffic_formula.h).
#include <QObject>
#include <array>
#include <map>
#include <sstream>

#include "views/lessons/lesson.h"

namespace ranklab {

namespace {

QString threeDText() {
  return QObject::tr(
      "<p><b>3D parallelism</b> (Megatron-LM) runs all three at once: <i>t</i> adjacent "
      "ranks hold one stage's <b>tensor</b> slices, <i>p</i> such groups the "
      "<b>pipeline</b>'s stages, and <i>n</i> copies of that pipeline are the <b>data</b> "
      "replicas: rank = (replica·p + stage)·t + slice. Each rank talks to three groups, each "
      "over its own communicator:</p><ul>"
      "<li><b>tensor</b> (the stage's other slices): f and g, 2 all-reduces per block "
      "forward and 2 backward, each of the batch's activation b·s·h floats: "
      "<b>4·L·2(t−1)/t·4·b·s·h</b> bytes for L blocks on the stage;</li>"
      "<li><b>pipeline</b> (the same slice of the other stages): the stage's output forward "
      "or its gradient backward, <b>4·b·s·h</b>, and the token table's gradient between the "
      "first and last stages, 4·V·h;</li>"
      "<li><b>data</b> (the same stage and slice in the other replicas): the ring all-reduce "
      "of its part's gradient, <b>2(n−1)/n·4ψ<sub>part</sub></b>.</li></ul>"
      "<p>The preset: a GPT of 2 blocks (h = 64, 4 heads, s = 32, V = 256) on 8 ranks, "
      "2 × 2 × 2, b = 16 in 2 micro-batches. <b>Predict</b> the bytes rank 0 sends per step, "
      "all three groups together.</p>"
      "<p>The <i>sequence parallel</i> variant (Korthikanti et al.) keeps each slice's "
      "1/t of the rows between the blocks: every all-reduce becomes a reduce-scatter and an "
      "all-gather, backward gathers the LayerNorms' rows once more (10 ring passes of "
      "b·s·h per block instead of 8), and the pipeline hands on b·s·h/t.</p>");
}

using Groups = std::array<double, 3>;  // data, tensor, pipeline bytes per step

// The "traffic" event's "formula bytes per step: data N tensor N pipeline N" ("-": none).
std::optional<Groups> formulaOf(const std::string& text) {
  std::istringstream in(text.substr(text.find(':') + 1));
  Groups groups{};
  for (double& bytes : groups) {
    std::string name, value;
    if (!(in >> name >> value) || value == "-") return std::nullopt;
    bytes = std::stod(value);
  }
  return groups;
}

// Each rank's bytes to each group per step (median over its steps) and its formula.
struct RankTraffic {
  std::vector<double> data, tensor, pipeline;
  std::optional<Groups> formula;
};

std::map<int, RankTraffic> trafficOf(const LessonRun& run) {
  std::map<int, RankTraffic> ranks;
  for (const StepRow& s : run.steps) {
    RankTraffic& r = ranks[s.rank];
    r.data.push_back(double(s.bytes_tx - s.bytes_tensor - s.bytes_pipeline));
    r.tensor.push_back(double(s.bytes_tensor));
    r.pipeline.push_back(double(s.bytes_pipeline));
  }
  for (const EventRow& e : run.events)
    if (e.kind == "traffic" && ranks.count(e.rank)) ranks[e.rank].formula = formulaOf(e.text);
  return ranks;
}

// "0, 1": the ranks that share rank r's group along one of the layout's axes.
QString groupOf(int r, int axis, int n, int p, int t) {
  const int replica = r / (p * t), stage = r / t % p, slice = r % t;
  QStringList members;
  const int size = axis == 0 ? n : axis == 1 ? t : p;
  for (int i = 0; i < size; ++i) {
    const int d = axis == 0 ? i : replica, s = axis == 2 ? i : stage, c = axis == 1 ? i : slice;
    members << QString::number((d * p + s) * t + c);
  }
  return members.join(QStringLiteral(", "));
}

QString trafficRows(const std::map<int, RankTraffic>& ranks, const JobSpec& job) {
  const int p = job.parallel.pipeline, t = job.parallel.tensor;
  const int n = job.parallel.ranks / (p * t);
  QString rows;
  for (const auto& [rank, r] : ranks) {
    const Groups measured{medianOf(r.data), medianOf(r.tensor), medianOf(r.pipeline)};
    QString cells;
    for (int g = 0; g < 3; ++g) {
      cells += QObject::tr("<td align=right>%L1 (%L2)</td><td>{%3}</td>")
                   .arg(qint64(measured[size_t(g)]))
                   .arg(r.formula ? qint64((*r.formula)[size_t(g)]) : 0)
                   .arg(groupOf(rank, g, n, p, t));
    }
    rows += QObject::tr("<tr><td>rank %1</td><td>%2 · %3 · %4</td>%5</tr>")
                .arg(rank)
                .arg(rank / (p * t))
                .arg(rank / t % p)
                .arg(rank % t)
                .arg(cells);
  }
  return rows;
}

LessonAnswer threeDAnswer(const LessonRun& run, const JobSpec& job) {
  LessonAnswer a;
  const std::map<int, RankTraffic> ranks = trafficOf(run);
  if (job.parallel.pipeline < 2 || job.parallel.tensor < 2 || ranks.empty() ||
      !ranks.begin()->second.formula) {
    a.error = QObject::tr(
                  "this lesson needs a run on data x pipeline x tensor ranks that recorded its "
                  "traffic formulas; run %1 has parallel.pipeline = %2, parallel.tensor = %3")
                  .arg(run.run.id)
                  .arg(job.parallel.pipeline)
                  .arg(job.parallel.tensor);
    return a;
  }
  const RankTraffic& first = ranks.begin()->second;
  const Groups& f = *first.formula;
  a.measured = medianOf(first.data) + medianOf(first.tensor) + medianOf(first.pipeline);
  a.formula = f[0] + f[1] + f[2];
  a.formula_text = QObject::tr("data %L1 + tensor %L2 + pipeline %L3")
                       .arg(qint64(f[0]))
                       .arg(qint64(f[1]))
                       .arg(qint64(f[2]));
  a.detail = QObject::tr(
                 "<p>Each rank's place (replica · stage · slice), then per group the bytes it "
                 "sent per step, median over its steps (the formula's), and the group's "
                 "ranks:</p><table cellpadding=3><tr><th></th><th>place</th>"
                 "<th>data</th><th>data group</th><th>tensor</th><th>tensor group</th>"
                 "<th>pipeline</th><th>pipeline group</th></tr>%1</table>"
                 "<p>The first stage sends activations, the last their gradients; both send "
                 "the token table. The slices of a stage send the same; the replicas too.</p>")
                 .arg(trafficRows(ranks, job));
  return a;
}

}  // namespace

Lesson makeThreeDLesson() {
  return {.id = QStringLiteral("three-d"),
          .title = QObject::tr("12. 3D parallelism: who talks to whom"),
          .text = threeDText(),
          .question = QObject::tr("Bytes rank 0 sends per step, all groups together:"),
          .unit = QObject::tr("bytes"),
          .answer = withJob(threeDAnswer),
          .variants = {{QObject::tr("2 × 2 × 2 (the preset)"), {}},
                       {QObject::tr("batch 32"), {"train.batch_size=32"}},
                       {QObject::tr("ZeRO 1"), {"parallel.zero=1"}},
                       {QObject::tr("sequence parallel"), {"parallel.sequence_parallel=true"}}}};
}

}  // namespace ranklab
