// The compare page's models (differing settings, summaries side by side) and the timeline
// built from step rows: phases laid back from each step's end, ranks aligned at the barrier.
#include <QAbstractItemModelTester>
#include <QtTest>
#include <cmath>

#include "engine/job/job_file.h"
#include "engine/job/job_spec.h"
#include "views/models/compare_models.h"
#include "views/models/timeline_data.h"

using namespace ranklab;

namespace {

constexpr int64_t kMs = 1'000'000;

ComparedRun comparedRun(int64_t id, const JobSpec& job, double loss) {
  ComparedRun c;
  c.run.id = id;
  c.run.name = job.name;
  c.run.status = "done";
  c.run.world = job.parallel.ranks;
  c.run.strategy = job.parallel.strategy;
  c.run.algorithm = job.parallel.algorithm;
  c.run.codec = "none";
  c.run.amp = "fp32";
  c.run.train_s = 2.0;
  c.run.job_toml = toTomlText(job);
  for (int rank = 0; rank < job.parallel.ranks; ++rank) {
    StepRow s;
    s.rank = rank;
    s.samples = 100;
    s.forward_ns = 4 * kMs;
    s.comm_ns = 2 * kMs;
    s.loss = loss;
    s.bytes_tx = 2'000'000;
    s.wait_ns = kMs / 2;  // 0.5 ms of the 2 s training time
    s.mem_params = 1'000'000;
    s.mem_grads = 1'000'000;
    s.mem_optimizer = 2'000'000 / (rank + 1);
    s.time_ns = 10 * kMs;
    c.series.addStep(s);
  }
  c.series.addEval(EvalRow{id, 0, 0, 0, 0.4, 0.875, 10 * kMs});
  c.series.finish("done");
  return c;
}

StepRow timedStep(int rank, int64_t step, int64_t end_ms, int64_t wait_ms) {
  StepRow s;
  s.rank = rank;
  s.step = step;
  s.forward_ns = 3 * kMs;
  s.backward_ns = 5 * kMs;
  s.wait_ns = wait_ms * kMs;
  s.comm_ns = 2 * kMs;
  s.update_ns = 1 * kMs;
  s.time_ns = end_ms * kMs;
  return s;
}

}  // namespace

class CompareModelsTest : public QObject {
  Q_OBJECT

 private slots:
  void onlyDifferingSettingsAreListed() {
    JobSpec a, b;
    a.name = "ring";
    b.name = "mpi";
    b.parallel.algorithm = "mpi";
    b.train.lr = 0.1;
    SettingsDiffModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setRuns({comparedRun(1, a, 1.0), comparedRun(2, b, 2.0)});
    QCOMPARE(model.differingKeys(), (QStringList{"name", "train.lr", "parallel.algorithm"}));
    QCOMPARE(model.columnCount(), 3);
    QCOMPARE(model.headerData(2, Qt::Horizontal).toString(), QStringLiteral("run 2 · mpi"));
    QCOMPARE(model.index(2, 1).data().toString(), QStringLiteral("ring"));
    QCOMPARE(model.index(2, 2).data().toString(), QStringLiteral("mpi"));
    model.setRuns({comparedRun(1, a, 1.0), comparedRun(3, a, 1.0)});
    QCOMPARE(model.rowCount(), 0);  // the same job twice
  }

  void summariesSideBySide() {
    JobSpec a;
    SummaryCompareModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setRuns({comparedRun(1, a, 1.5), comparedRun(2, a, 0.5)});
    QCOMPARE(model.columnCount(), 2);
    auto value = [&](const QString& metric, int run) {
      for (int row = 0; row < model.rowCount(); ++row)
        if (model.headerData(row, Qt::Vertical).toString() == metric)
          return model.index(row, run).data().toString();
      return QString();
    };
    QCOMPARE(value(QStringLiteral("final test accuracy"), 0), QStringLiteral("87.50 %"));
    QCOMPARE(value(QStringLiteral("final training loss (mean of ranks)"), 1),
             QStringLiteral("0.5000"));
    QCOMPARE(value(QStringLiteral("samples/s"), 0), QStringLiteral("100"));  // 2 x 100 / 2 s
    QCOMPARE(value(QStringLiteral("MB sent (all ranks)"), 0), QStringLiteral("4.0"));
    QCOMPARE(value(QStringLiteral("comm ms/step (mean)"), 1), QStringLiteral("2.00"));
    // The spread across ranks, side by side: all alike here, the last of the equals named.
    QCOMPARE(value(QStringLiteral("wait ms/step across ranks: median · p90 · max"), 0),
             QStringLiteral("0.50 · 0.50 · 0.50 (rank %1)").arg(a.parallel.ranks - 1));
    QCOMPARE(value(QStringLiteral("layout (data × pipeline × tensor)"), 0),
             QStringLiteral("%1 × 1 × 1").arg(a.parallel.ranks));
    QCOMPARE(value(QStringLiteral("pipeline bubble (formula)"), 0), QStringLiteral("–"));
    QCOMPARE(value(QStringLiteral("memory held per rank, MB (largest)"), 0), QStringLiteral("4.0"));

    // A diverged run: its final training loss is not finite, never 0.0000 (issue 33, item 3);
    // with a NaN test loss it has no point on the trade-off chart, so none on its front.
    ComparedRun diverged = comparedRun(5, a, std::nan(""));
    model.setRuns({diverged});
    QCOMPARE(value(QStringLiteral("final training loss (mean of ranks)"), 0),
             QStringLiteral("not finite (diverged)"));
    QVERIFY(tradeoffPoint(diverged.series).has_value());  // its test loss was finite
    RunSeries nan_eval;
    nan_eval.addStep(StepRow{});  // rank 0
    nan_eval.addEval(EvalRow{5, 0, 1, 1, std::nan(""), 0.1, 10 * kMs});
    nan_eval.finish("done");
    QVERIFY(!tradeoffPoint(nan_eval).has_value());

    // A pipeline of 2 stages and 4 micro-batches, and ZeRO 3 over 2 data ranks.
    JobSpec pipe, zero;
    pipe.parallel.ranks = 2;
    pipe.parallel.pipeline = 2;
    pipe.parallel.microbatches = 4;
    zero.parallel.ranks = 2;
    zero.parallel.zero = 3;
    model.setRuns({comparedRun(3, pipe, 1.0), comparedRun(4, zero, 1.0)});
    QCOMPARE(value(QStringLiteral("layout (data × pipeline × tensor)"), 0),
             QStringLiteral("1 × 2 × 1"));
    QCOMPARE(value(QStringLiteral("layout (data × pipeline × tensor)"), 1),
             QStringLiteral("2 × 1 × 1 · ZeRO 3"));
    // Each rank waited 0.5 ms of 2 s: 0.00025; (2 - 1) / (4 + 2 - 1) = 0.2.
    QCOMPARE(value(QStringLiteral("pipeline bubble (formula)"), 0),
             QStringLiteral("0.000 (0.200)"));
    QCOMPARE(value(QStringLiteral("pipeline bubble (formula)"), 1), QStringLiteral("–"));
  }

  // A run is a point (MB each rank sent, last accuracy); the front keeps the runs nothing
  // beats on both, cheapest first; a run without an evaluation has no point.
  // A run with a prediction: its step and the phases either side spent time in, predicted
  // beside measured (ms) with the signed error; a run without one adds no columns.
  void predictedAgainstMeasuredPerPhase() {
    JobSpec job;
    std::vector<ComparedRun> runs = {comparedRun(7, job, 1.0), comparedRun(8, job, 1.0)};
    PredictedAgainstMeasured check;
    check.predicted.simulated_run = 6;
    check.predicted.step_s = 0.012;
    check.predicted.phases = PhaseTimes{0, 5 * kMs, 0, 0, 0, 3 * kMs, 0};
    check.measured.step_s = 0.010;
    check.measured.phases = PhaseTimes{0, 4 * kMs, 0, 0, kMs, 4 * kMs, 0};
    runs[1].prediction = check;
    PredictionCompareModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setRuns(runs);
    QVERIFY(!model.empty());
    QCOMPARE(model.columnCount(), 3);
    QCOMPARE(model.rowCount(), 4);  // step, forward, wait, comm
    QCOMPARE(model.headerData(0, Qt::Horizontal).toString(),
             QStringLiteral("run 8: predicted ms\n(simulated run 6)"));
    const auto cell = [&](int row, int column) {
      return model.index(row, column).data().toString();
    };
    QCOMPARE(model.headerData(0, Qt::Vertical).toString(), QStringLiteral("step"));
    QCOMPARE(cell(0, 0), QStringLiteral("12.00"));
    QCOMPARE(cell(0, 1), QStringLiteral("10.00"));
    QCOMPARE(cell(0, 2), QStringLiteral("+20.0 %"));
    QCOMPARE(model.headerData(1, Qt::Vertical).toString(), QStringLiteral("forward"));
    QCOMPARE(cell(1, 2), QStringLiteral("+25.0 %"));
    QCOMPARE(model.headerData(2, Qt::Vertical).toString(), QStringLiteral("wait"));
    QCOMPARE(cell(2, 0), QStringLiteral("0.00"));
    QCOMPARE(cell(2, 2), QStringLiteral("-100.0 %"));
    QCOMPARE(cell(3, 2), QStringLiteral("-25.0 %"));
    check.measured.phases = PhaseTimes{0, 4 * kMs, 0, 0, kMs / 200, 4 * kMs, 0};
    runs[1].prediction = check;
    model.setRuns(runs);
    QCOMPARE(cell(2, 2), QStringLiteral("–"));  // 0.005 ms of a 10 ms step
    runs[1].prediction.reset();
    model.setRuns(runs);
    QVERIFY(model.empty());
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.columnCount(), 0);
  }

  void tradeoffPointsAndTheirParetoFront() {
    JobSpec job;
    job.parallel.ranks = 2;
    const auto point = tradeoffPoint(comparedRun(1, job, 0.5).series);
    QVERIFY(point);
    QCOMPARE(point->x(), 2.0);   // 2,000,000 bytes a rank
    QCOMPARE(point->y(), 87.5);  // the last evaluation
    QVERIFY(!tradeoffPoint(RunSeries{}));
    const QList<QPointF> runs = {{100, 86}, {3, 85}, {50, 80}, {10, 85}, {2, 70}, {100, 86}};
    QCOMPARE(paretoFront(runs), (QList<QPointF>{{2, 70}, {3, 85}, {100, 86}}));
  }

  void timelineLaysPhasesBackFromTheStepEnd() {
    const TimelineData t = buildTimeline(5, {timedStep(0, 7, 100, 4)}, false);
    QCOMPARE(t.ranks, (std::vector<int>{0}));
    // forward 3, backward 5, wait 4, comm 2, update 1 = 15 ms ending at 100 ms.
    QCOMPARE(int(t.bars.size()), 5);
    QCOMPARE(t.bars.front().phase, int(forwardPhase));
    QCOMPARE(t.bars.front().start_ms, 0.0);
    QCOMPARE(t.bars.back().phase, int(updatePhase));
    QCOMPARE(t.bars.back().end_ms, 15.0);
    QCOMPARE(t.end_ms, 15.0);
    QCOMPARE(describeBar(t.bars[1]),
             QStringLiteral("rank 0 · step 7 · backward 5.00 ms (3.00 → 8.00 ms)"));
  }

  // 3D parallelism: a step's communication split by group, the tensor slices' share, then
  // the pipeline's (the token table), then the data group's, each its own bar.
  void commBarsAreSplitByGroup() {
    StepRow s = timedStep(0, 7, 100, 4);
    s.comm_ns = 6 * kMs;
    s.comm_tensor_ns = 3 * kMs;
    s.comm_pipeline_ns = 1 * kMs;
    const TimelineData t = buildTimeline(5, {s}, false);
    std::vector<std::pair<CommGroup, double>> comm;  // group, ms
    for (const TimelineBar& bar : t.bars)
      if (bar.phase == commPhase) comm.emplace_back(bar.group, bar.end_ms - bar.start_ms);
    QCOMPARE(int(comm.size()), 3);
    QVERIFY(comm[0].first == CommGroup::kTensor && comm[0].second == 3.0);
    QVERIFY(comm[1].first == CommGroup::kPipeline && comm[1].second == 1.0);
    QVERIFY(comm[2].first == CommGroup::kData && comm[2].second == 2.0);
    QCOMPARE(t.end_ms, 19.0);  // 3 + 5 + 4 + 6 + 1
    QVERIFY(describeBar(t.bars[3]).contains("tensor group: f and g"));
  }

  // A fault and the launcher's verdict on it sit at the end of their step on their rank's
  // row; log events and other ranks' are not marked.
  void faultsAreMarkedAtTheEndOfTheirStep() {
    const std::vector<EventRow> events = {{5, 0, 7, "fault", "kill: SIGKILL after step 7", 0},
                                          {5, 0, 7, "failure", "rank 0 died after step 7", 0},
                                          {5, 0, 7, "log", "a line", 0},
                                          {5, 3, 7, "fault", "not shown", 0}};
    const TimelineData t = buildTimeline(5, {timedStep(0, 7, 100, 4)}, false, {}, events);
    QCOMPARE(int(t.marks.size()), 2);
    QCOMPARE(t.marks[0].kind, QStringLiteral("fault"));
    QCOMPARE(t.marks[0].at_ms, 15.0);  // the step's end, on the window's axis
    QCOMPARE(describeMark(t.marks[1]),
             QStringLiteral("rank 0 · failure after step 7: rank 0 died after step 7"));
  }

  // An event with a time of its own sits there: a fault whose step a restart trained again.
  void aMarkWithATimeSitsAtItsTime() {
    const std::vector<EventRow> events = {{5, 0, 7, "fault", "kill", 90'000'000}};
    const TimelineData t = buildTimeline(5, {timedStep(0, 7, 100, 4)}, false, {}, events);
    QCOMPARE(int(t.marks.size()), 1);
    QCOMPARE(t.marks[0].at_ms, 5.0);  // 90 ms on the step's axis, which starts at 85 ms
  }

  // An evaluation after step 7 sits on the same axis as the step, after it.
  void spansArePlacedOnTheBarsAxis() {
    const std::vector<SpanRow> spans = {{5, 0, 7, "evaluate", 101000000, 131000000},
                                        {5, 3, 7, "evaluate", 0, 1}};  // rank not shown
    const TimelineData t = buildTimeline(5, {timedStep(0, 7, 100, 4)}, false, spans);
    QCOMPARE(int(t.spans.size()), 1);
    QCOMPARE(t.spans[0].kind, QStringLiteral("evaluate"));
    QCOMPARE(t.spans[0].start_ms, 16.0);  // the step ended at 15 ms on this axis
    QCOMPARE(t.spans[0].end_ms, 46.0);
    QCOMPARE(t.end_ms, 46.0);
    QCOMPARE(describeSpan(t.spans[0]),
             QStringLiteral("rank 0 · evaluate after step 7 · 30.00 ms (16.00 → 46.00 ms)"));
  }

  // A pipeline step is drawn from its passes: each micro-batch's forward and backward where
  // it ran, the gaps between them as wait, and the sync and update after the last pass.
  void pipelinePassesBecomeBarsWithTheirGapsAsWait() {
    // Step ends at 100 ms: forward 3 + backward 5 + wait 4 + comm 2 + update 1 = 15 ms,
    // so it began at 85 ms. Passes: F0 85-86.5, F1 87-88.5 (0.5 ms gap), B0 90-92.5, B1 92.5-95.
    const std::vector<SpanRow> spans = {{5, 0, 7, "F0", 85000000, 86500000},
                                        {5, 0, 7, "B1", 92500000, 95000000},
                                        {5, 0, 7, "F1", 87000000, 88500000},
                                        {5, 0, 7, "B0", 90000000, 92500000},
                                        {5, 0, 7, "evaluate", 101000000, 102000000}};
    const TimelineData t = buildTimeline(5, {timedStep(0, 7, 100, 4)}, false, spans);
    QCOMPARE(int(t.spans.size()), 1);         // the passes became bars
    std::vector<std::pair<int, int>> phases;  // (phase, micro) in time order
    for (const TimelineBar& bar : t.bars) phases.push_back({bar.phase, bar.micro});
    const std::vector<std::pair<int, int>> expected = {
        {int(forwardPhase), 0}, {int(waitPhase), -1},    {int(forwardPhase), 1},
        {int(waitPhase), -1},   {int(backwardPhase), 0}, {int(backwardPhase), 1},
        {int(waitPhase), -1},   {int(commPhase), -1},    {int(updatePhase), -1}};
    QCOMPARE(phases, expected);
    QCOMPARE(t.bars[2].start_ms, 2.0);  // F1 at 87 ms, the window starting at 85 ms
    QCOMPARE(t.bars[6].end_ms, 12.0);   // wait until comm: 100 - 3 = 97 ms
    QCOMPARE(
        describeBar(t.bars[5]),
        QStringLiteral("rank 0 · step 7 · backward of micro-batch 1 2.50 ms (7.50 → 10.00 ms)"));
  }

  // A sampled step's device pieces are a strip of their own on the bars' axis (not grey
  // spans), and a piece's text says how busy the device was over the step's pieces.
  void devicePiecesAreAStripOfTheirOwn() {
    // The step runs 85-100 ms; on the device: layer 0 forward 86-88, the loss head 89-89.5,
    // layer 0 backward 90-93: 5.5 ms busy of the 7 ms from 86 to 93.
    std::vector<SpanRow> spans = {{5, 0, 7, "dev-fwd", 86000000, 88000000, 0},
                                  {5, 0, 7, "dev-loss", 89000000, 89500000},
                                  {5, 0, 7, "dev-bwd", 90000000, 93000000, 0}};
    const TimelineData t = buildTimeline(5, {timedStep(0, 7, 100, 4)}, false, spans);
    QVERIFY(t.spans.empty());
    QVERIFY(t.hops.empty());
    QCOMPARE(int(t.device.size()), 3);
    QCOMPARE(t.device[0].start_ms, 1.0);
    QCOMPARE(t.device[2].layer, 0);
    QCOMPARE(t.device[2].end_ms, 8.0);
    QCOMPARE(describeDevicePiece(t, t.device[2]),
             QStringLiteral("rank 0 · step 7 · layer 0 backward on the device: 3.000 ms; the "
                            "device was busy 5.50 of the 7.00 ms from its first piece to its "
                            "last in this step (79 %), idle in the gaps"));
    QVERIFY(describeDevicePiece(t, t.device[1]).contains(QStringLiteral("the loss head")));
  }

  void ranksAreAlignedAtTheBarrier() {
    // Rank 1's clock runs 40 ms ahead; it waits 1 ms, rank 0 waits 6 ms: same barrier exit.
    const std::vector<StepRow> steps = {timedStep(0, 3, 100, 6), timedStep(1, 3, 140, 1)};
    const TimelineData aligned = buildTimeline(5, steps, true);
    QCOMPARE(aligned.aligned_at_step, 3);
    auto waitEnd = [&](int rank) {
      for (const TimelineBar& bar : aligned.bars)
        if (bar.rank == rank && bar.phase == waitPhase) return bar.end_ms;
      return -1.0;
    };
    QCOMPARE(waitEnd(0), waitEnd(1));
    QCOMPARE(buildTimeline(5, steps, false).aligned_at_step, -1);
  }
};

QTEST_MAIN(CompareModelsTest)
#include "test_compare_models.moc"
