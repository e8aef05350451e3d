// Lesson 1: ring all-reduce sends 2(N−1)/N of the gradient from every rank, whatever N.
#include <QObject>
#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "comm/collectives/allreduce_registry.h"
#include "views/lessons/lesson.h"

namespace ranklab {

namespace {

QString ringText() {
  return QObject::tr(
      "<p>After backward, every rank holds its own gradient of <i>S</i> bytes, and every rank "
      "needs the sum. <b>Ring all-reduce</b> puts the <i>N</i> ranks in a ring and cuts the "
      "gradient into <i>N</i> chunks. In the <b>reduce-scatter</b> half, each rank sends one "
      "chunk to its right neighbour and adds the chunk coming from its left, <i>N</i>−1 times: "
      "then each rank owns one fully summed chunk. In the <b>all-gather</b> half, the summed "
      "chunks travel round the ring, again <i>N</i>−1 times. That is 2(<i>N</i>−1) steps.</p>"
      "<p>Each step moves one chunk of <i>S</i>/<i>N</i> bytes per rank, so every rank "
      "sends</p><p align=center><b>2(<i>N</i>−1)/<i>N</i> · <i>S</i></b></p>"
      "<p>bytes per all-reduce: almost 2<i>S</i>, and <i>independent of N</i>. No rank is a "
      "hot spot, which is why rings scale where a central server does not. The cost is "
      "latency: 2(<i>N</i>−1) messages, one after another.</p>"
      "<p>The preset trains the quickstart MLP on 4 ranks with the ring. <b>Predict</b> how "
      "many bytes each rank sends per all-reduce (the model has 235,146 parameters of 4 "
      "bytes), then run it: the answer is read from the bytes each rank counted on the "
      "wire.</p>"
      "<p><b>Compare</b> the same job with another algorithm. <i>Naive</i>: every rank sends "
      "its whole gradient to rank 0, which sums and sends the sum back: rank 0 moves "
      "(<i>N</i>−1)·<i>S</i> each way, the hot spot the ring removes. <i>Hierarchical</i> "
      "(here 2 hosts of 2): the ranks of each host sum in shared memory, the hosts' leaders "
      "run a ring, and a broadcast tree hands the sum back inside each host: a leader sends "
      "2(<i>L</i>−1)/<i>L</i>·<i>S</i> + 2(<i>H</i>−1)/<i>H</i>·<i>S</i> + "
      "⌈log<sub>2</sub><i>L</i>⌉·<i>S</i>, the others 2(<i>L</i>−1)/<i>L</i>·<i>S</i> and "
      "<i>S</i> for each child they have in the tree. <i>MPI</i>: the library picks its own "
      "algorithm, "
      "out of ranklab's sight; its bytes are counted as the ring's.</p>");
}

// The formula in words with the run's numbers: N, S, and for a host-shaped one L and H.
QString formulaText(const AllreduceAlgorithm& entry, int n, int per_host, double s) {
  QString text = QString::fromStdString(entry.formula) + QObject::tr(", N = %1").arg(n);
  if (entry.takes_ranks_per_host) {
    const int local = per_host > 0 ? std::min(per_host, n) : n;
    text += QObject::tr(", L = %1, H = %2").arg(local).arg((n + local - 1) / local);
  }
  return text + QObject::tr(", S = %L1 B").arg(qint64(s));
}

LessonAnswer ringAnswer(const LessonRun& run) {
  LessonAnswer a;
  std::map<int, std::vector<double>> per_rank;  // bytes sent per all-reduce, each step
  double gradient_bytes = 0;                    // S: the parameters the ledger counted
  for (const StepRow& s : run.steps) {
    if (s.allreduces <= 0) continue;
    per_rank[s.rank].push_back(double(s.bytes_tx) / double(s.allreduces));
    gradient_bytes = double(s.mem_params);
  }
  if (per_rank.empty() || gradient_bytes <= 0) {
    a.error = QObject::tr("this run recorded no all-reduce (strategy %1)")
                  .arg(QString::fromStdString(run.run.strategy));
    return a;
  }
  const int n = run.run.world;
  const auto job = jobOrError(run, a);
  if (!job) return a;
  const std::string& algorithm = job->parallel.algorithm;
  const int per_host = job->parallel.ranks_per_host;
  // The busiest rank answers (rank 0: a naive root, a hierarchical leader); the ring's are
  // all alike, so their mean does.
  const AllreduceAlgorithm* entry = findAllreduce(algorithm);
  if (entry == nullptr) {
    a.error = QObject::tr("run %1 used \"%2\", which this ranklab has no all-reduce of")
                  .arg(run.run.id)
                  .arg(QString::fromStdString(algorithm));
    return a;
  }
  const bool uneven = !entry->even_share;
  a.formula = entry->bytes_sent(0, n, per_host, gradient_bytes);
  a.formula_text = formulaText(*entry, n, per_host, gradient_bytes);
  QString rows;
  std::vector<double> medians;
  for (const auto& [rank, sent] : per_rank) {
    medians.push_back(medianOf(sent));
    const double expected = entry->bytes_sent(rank, n, per_host, gradient_bytes);
    rows += QStringLiteral(
                "<tr><td>rank %1</td><td align=right>%L2 B</td><td align=right>%L3 B</td>"
                "<td align=right>%4 %</td></tr>")
                .arg(rank)
                .arg(qint64(medians.back()))
                .arg(qint64(expected))
                .arg(100.0 * medians.back() / expected, 0, 'f', 3);
  }
  double sum = 0;
  for (double m : medians) sum += m;
  a.measured = uneven ? medians.front() : sum / double(medians.size());
  a.detail = QObject::tr(
                 "<p>Bytes each rank sent per all-reduce with <b>%4</b> (median over %1 "
                 "steps), against its formula:</p><table cellpadding=3><tr><th></th>"
                 "<th>measured</th><th>formula</th><th></th></tr>%2</table>"
                 "<p>S = %L3 B is the parameter memory each rank's ledger counted. "
                 "Chunks of uneven size (S/N is not a whole number of floats) make "
                 "the ranks differ by a few bytes.%5</p>")
                 .arg(per_rank.begin()->second.size())
                 .arg(rows)
                 .arg(qint64(gradient_bytes))
                 .arg(QString::fromStdString(algorithm))
                 .arg(entry->reference ? QObject::tr(" MPI's own bytes are out of sight: "
                                                     "ranklab counts the ring's.")
                                       : QString());
  a.focus_step = std::min<int64_t>(2, run.steps.empty() ? 1 : run.steps.back().step);
  a.focus_steps = 1;  // one step: its hops are wide enough to read
  return a;
}

// A chunk's colour, the same on every rank and hop: the eye follows one chunk round the ring.
QString chunkColour(int chunk) {
  static const char* colours[] = {"#cfe2ff", "#ffe0b3", "#d4edda", "#f8d7da",
                                  "#e2d9f3", "#fff3cd", "#d1ecf1", "#e9ecef"};
  return QString::fromLatin1(colours[size_t(chunk) % std::size(colours)]);
}

// Step `step`'s hops as a table: a row per hop, a column per rank, each cell the chunk the
// rank sent and to whom, from the run's stored spans.
QString ringSteps(const LessonRun& run, int64_t step) {
  std::map<int, std::map<int, const SpanRow*>> hops;  // part -> rank -> hop
  std::set<int> ranks;
  for (const SpanRow& s : run.spans) {
    if (s.step != step || (s.kind != "ring-rs" && s.kind != "ring-ag")) continue;
    hops[s.part][s.rank] = &s;
    ranks.insert(s.rank);
  }
  if (hops.empty()) return {};
  QString head = QObject::tr("<tr><th>hop</th><th>half</th>");
  for (int rank : ranks) head += QObject::tr("<th>rank %1 sends</th>").arg(rank);
  QString rows;
  for (const auto& [part, by_rank] : hops) {
    const bool scatter = by_rank.begin()->second->kind == "ring-rs";
    rows +=
        QStringLiteral("<tr><td align=center>%1</td><td>%2</td>")
            .arg(part + 1)
            .arg(scatter ? QObject::tr("reduce-scatter: add") : QObject::tr("all-gather: copy"));
    for (int rank : ranks) {
      const auto hop = by_rank.find(rank);
      if (hop == by_rank.end()) {
        rows += QStringLiteral("<td></td>");
        continue;
      }
      const SpanRow& h = *hop->second;
      rows += QObject::tr(
                  "<td bgcolor=%1>chunk <b>%2</b> → rank %3<br><small>%L4 B, %5 ms"
                  "</small></td>")
                  .arg(chunkColour(h.chunk))
                  .arg(h.chunk)
                  .arg(h.peer)
                  .arg(h.bytes)
                  .arg(double(h.end_ns - h.start_ns) / 1e6, 0, 'f', 2);
    }
    rows += QStringLiteral("</tr>");
  }
  const int n = int(ranks.size());
  return QObject::tr(
             "<p><b>Step %1, hop by hop</b>, from the run's spans: %2 hops = 2(N−1) "
             "for N = %3. Follow one colour: a chunk is summed on its way round, "
             "then copied round again.</p><table cellpadding=3 cellspacing=1>%4%5"
             "</table>")
      .arg(step)
      .arg(hops.size())
      .arg(n)
      .arg(head, rows);
}

}  // namespace

Lesson makeRingAllreduceLesson() {
  return {.id = QStringLiteral("ring-allreduce"),
          .title = QObject::tr("1. Ring all-reduce"),
          .text = ringText(),
          .question = QObject::tr("Bytes each rank sends per all-reduce:"),
          .unit = QObject::tr("bytes"),
          .answer = ringAnswer,
          .step_view = ringSteps,
          .variants = {{QObject::tr("ring (the preset)"), {}},
                       {QObject::tr("naive: all to rank 0"), {"parallel.algorithm=\"naive\""}},
                       {QObject::tr("hierarchical: 2 hosts of 2"),
                        {"parallel.algorithm=\"hierarchical\"", "parallel.ranks_per_host=2"}},
                       {QObject::tr("MPI_Allreduce"), {"parallel.algorithm=\"mpi\""}}}};
}

}  // namespace ranklab
