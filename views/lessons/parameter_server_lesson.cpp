// Lesson 2: with a parameter server, each shard receives every worker's share of the
// gradient each step: W · S / k bytes, so too few shards make a server the bottleneck.
#include <QObject>
#include <map>

#include "views/lessons/lesson.h"

namespace ranklab {

namespace {

QString serverText() {
  return QObject::tr(
      "<p>A <b>parameter server</b> keeps the model; the <i>W</i> workers each compute a "
      "gradient, <b>push</b> it to the server, and <b>pull</b> the updated parameters back. "
      "The server is usually <b>sharded</b>: <i>k</i> server ranks each own a range of the "
      "parameters, so a worker pushes S/<i>k</i> bytes to each shard.</p>"
      "<p>Each step, every shard receives a push from every worker:</p>"
      "<p align=center><b><i>W</i> · <i>S</i> / <i>k</i></b> bytes per shard per step</p>"
      "<p>It grows with the number of workers: with one shard, the server takes in <i>W</i> "
      "whole gradients a step while each worker sends only one. That is why a single server "
      "becomes the bottleneck, and why shards (or an all-reduce, where no rank is special) "
      "are used as <i>W</i> grows. Each shard's busy and idle time shows how loaded it is.</p>"
      "<p>The preset has <i>W</i> = 4 workers and <i>k</i> = 2 shards (6 ranks) and trains "
      "the quickstart MLP (S = 940,584 bytes of fp32 gradient). <b>Predict</b> the bytes "
      "each shard receives per step.</p>");
}

LessonAnswer serverAnswer(const LessonRun& run) {
  LessonAnswer a;
  std::map<std::pair<int, int>, ServerLoadRow> shards;  // (rank, shard) -> summed load
  for (const ServerLoadRow& r : run.server_loads) {
    ServerLoadRow& s = shards[{r.rank, r.shard}];
    s.rank = r.rank;
    s.key_begin = r.key_begin;
    s.key_end = r.key_end;
    s.pushes += r.pushes;
    s.bytes_rx += r.bytes_rx;
    s.busy_ns += r.busy_ns;
    s.idle_ns += r.idle_ns;
  }
  std::map<int, int64_t> workers;  // rank -> the parameter bytes its ledger counted
  for (const StepRow& s : run.steps) workers[s.rank] = s.mem_params;
  if (shards.empty() || workers.empty()) {
    a.error = QObject::tr("this run has no parameter server loads (strategy %1)")
                  .arg(QString::fromStdString(run.run.strategy));
    return a;
  }
  const double w = double(workers.size()), k = double(shards.size());
  const double gradient_bytes = double(workers.begin()->second);
  a.formula = w * gradient_bytes / k;
  a.formula_text =
      QObject::tr("W · S / k = %1 · %L2 B / %3").arg(w).arg(qint64(gradient_bytes)).arg(k);
  QString rows;
  double sum = 0;
  for (const auto& [key, s] : shards) {
    const double per_step = s.pushes > 0 ? double(s.bytes_rx) / (double(s.pushes) / w) : 0;
    sum += per_step;
    const double busy = double(s.busy_ns) / double(std::max<int64_t>(1, s.busy_ns + s.idle_ns));
    rows += QStringLiteral(
                "<tr><td>rank %1, keys %L2–%L3</td><td align=right>%4 pushes</td>"
                "<td align=right>%L5 B a step</td><td align=right>busy %6 %</td></tr>")
                .arg(s.rank)
                .arg(s.key_begin)
                .arg(s.key_end)
                .arg(s.pushes)
                .arg(qint64(per_step))
                .arg(100 * busy, 0, 'f', 1);
  }
  a.measured = sum / k;
  a.detail = QObject::tr(
                 "<p>Each shard's bytes received per step (its bytes over its pushes, "
                 "%1 pushes a step), from the servers' load records:</p>"
                 "<table cellpadding=3>%2</table><p>A push carries a few bytes of "
                 "header besides its gradient slice.</p>")
                 .arg(w)
                 .arg(rows);
  a.focus_step = 5;
  return a;
}

// Step `step`'s round on every worker: each shard's push and how long its reply took to
// come back after it, from the run's spans; the slowest reply holds the worker up.
QString shardRounds(const LessonRun& run, int64_t step) {
  std::map<std::pair<int, int>, std::pair<const SpanRow*, const SpanRow*>> rounds;  // rank, shard
  for (const SpanRow& s : run.spans) {
    if (s.step != step) continue;
    if (s.kind == "ps-push") rounds[{s.rank, s.part}].first = &s;
    if (s.kind == "ps-reply") rounds[{s.rank, s.part}].second = &s;
  }
  if (rounds.empty()) return {};
  QString rows;
  for (const auto& [at, round] : rounds) {
    const auto& [push, reply] = round;
    if (!push || !reply) continue;
    rows += QObject::tr(
                "<tr><td>worker %1</td><td>shard %2 (rank %3)</td><td align=right>%L4 B"
                "</td><td align=right>%5 ms</td><td align=right>%6 ms</td></tr>")
                .arg(at.first)
                .arg(at.second)
                .arg(push->peer)
                .arg(push->bytes)
                .arg(double(push->end_ns - push->start_ns) / 1e6, 0, 'f', 2)
                .arg(double(reply->end_ns - reply->start_ns) / 1e6, 0, 'f', 2);
  }
  return QObject::tr(
             "<p><b>Step %1, push by push</b>, from the run's spans: each worker sends "
             "every shard its slice, then waits for each shard's reply (the synchronous "
             "server answers when every worker has pushed).</p><table cellpadding=3>"
             "<tr><th>worker</th><th>to</th><th>pushed</th><th>push took</th>"
             "<th>reply came after</th></tr>%2</table>")
      .arg(step)
      .arg(rows);
}

}  // namespace

Lesson makeParameterServerLesson() {
  return {
      .id = QStringLiteral("parameter-server"),
      .title = QObject::tr("2. Parameter server: sharded pushes"),
      .text = serverText(),
      .question = QObject::tr("Bytes each server shard receives per step:"),
      .unit = QObject::tr("bytes"),
      .answer = serverAnswer,
      .step_view = shardRounds,
  };
}

}  // namespace ranklab
