// LiveRunModel and the RunSeries under it: per-rank rows, phase times, throughput, curves
// that stay bounded, debiased smoothing, the mean-of-ranks loss, evaluations, rank states
// and the straggler found from the compute/wait profile.
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>
#include <cmath>
#include <limits>

#include "views/models/live_run_model.h"

using namespace ranklab;

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;

// Step `step` of `rank`: every phase a known number of ms, ending at step+1 seconds.
StepRow makeStep(int rank, int64_t step, double loss, int64_t extra_compute_ms = 0) {
  StepRow s;
  s.run_id = 7;
  s.rank = rank;
  s.step = step;
  s.epoch = int(step / 10);
  s.samples = 64;
  s.data_ns = 1 * kMs;
  s.forward_ns = 2 * kMs;
  s.backward_ns = (3 + extra_compute_ms) * kMs;
  s.compress_ns = 4 * kMs;
  s.update_ns = 5 * kMs;  // compute: 15 ms
  s.comm_ns = 20 * kMs;
  s.wait_ns = (rank + 1) * 10 * kMs;
  s.loss = loss;
  s.bytes_tx = 1000;
  s.bytes_rx = 500;
  s.time_ns = (step + 1) * kS;
  return s;
}

bool near(double a, double b) {
  return std::abs(a - b) < 1e-9 * std::max(1.0, std::abs(b));
}

}  // namespace

class LiveRunModelTest : public QObject {
  Q_OBJECT

 private slots:
  void ranksAppearInRankOrder() {
    LiveRunModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy updated(&model, &LiveRunModel::updated);
    model.addStep(makeStep(1, 0, 2.0));
    model.addSteps({makeStep(0, 0, 2.5), makeStep(1, 1, 1.5)});
    QCOMPARE(inserted.count(), 2);
    QCOMPARE(updated.count(), 2);  // one per batch
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.rankAt(0).rank, 0);
    QCOMPARE(model.rankAt(1).rank, 1);
    QCOMPARE(model.rowOfRank(5), -1);
    QCOMPARE(model.index(1, LiveRunModel::StepColumn).data().toLongLong(), 1);
    QCOMPARE(model.index(1, LiveRunModel::LossColumn).data().toString(), QStringLiteral("1.5000"));
    QCOMPARE(model.index(1, LiveRunModel::StateColumn).data().toString(),
             QStringLiteral("waiting"));
    model.setRank(RankRow{7, 3, "host", 1, "running", 0, 0, 0, -1});  // hello before any step
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.index(2, LiveRunModel::StateColumn).data().toString(),
             QStringLiteral("starting"));
  }

  // A followed run's stored events come before its ranks and steps: the first event naming
  // a rank (its activations) inserts its row as the views expect, so a grid shows it (before,
  // the row appeared without rowsInserted and a table view stayed empty).
  void anEventBeforeAnyStepInsertsItsRanksRow() {
    LiveRunModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    EventRow activations;
    activations.rank = 1;
    activations.kind = "activations";
    activations.text = "per layer at micro-batch 64 x 1 copy (bytes kept for backward): fc0 100";
    model.addEvent(activations);
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(model.rowCount(), 1);
    EventRow launcher = activations;  // the launcher's own events name no rank
    launcher.rank = -1;
    launcher.kind = "log";
    model.addEvent(launcher);
    model.setRank(RankRow{7, 1, "host", 1, "running", 0, 0, 0, -1});
    model.addStep(makeStep(1, 0, 2.0));
    model.addStep(makeStep(0, 0, 2.5));
    QCOMPARE(inserted.count(), 2);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.rankAt(0).rank, 0);
  }

  // Ranks on hosts: each row names its host, and every other host's rows are tinted.
  void eachRankShowsItsHost() {
    LiveRunModel model;
    for (int rank = 0; rank < 4; ++rank)
      model.setRank(
          RankRow{1, rank, rank < 2 ? "node1" : "node2", 100 + rank, "running", 0, 0, 0, -1});
    QCOMPARE(model.headerData(LiveRunModel::HostColumn, Qt::Horizontal).toString(),
             QStringLiteral("host"));
    QCOMPARE(model.index(1, LiveRunModel::HostColumn).data().toString(), QStringLiteral("node1"));
    QCOMPARE(model.index(2, LiveRunModel::HostColumn).data().toString(), QStringLiteral("node2"));
    QCOMPARE(model.hostIndex(1), 0);
    QCOMPARE(model.hostIndex(3), 1);
    QVERIFY(!model.index(1, LiveRunModel::HostColumn).data(Qt::BackgroundRole).isValid());
    QVERIFY(model.index(2, LiveRunModel::HostColumn).data(Qt::BackgroundRole).isValid());
  }

  // Telemetry that never arrived is shown on its rank and counted for the run, never silent.
  void lostTelemetryIsShownOnItsRank() {
    LiveRunModel model;
    model.setRank(RankRow{1, 0, "h", 100, "running", 0, 0, 0, -1});
    model.setRank(RankRow{1, 1, "h", 101, "running", 0, 0, 7, 40});  // 7 sequence holes
    QVERIFY(!model.index(0, LiveRunModel::StateColumn).data().toString().contains("lost"));
    QVERIFY(model.index(1, LiveRunModel::StateColumn).data().toString().endsWith(" · 7 lost"));
    QVERIFY(model.index(1, LiveRunModel::StateColumn)
                .data(Qt::ToolTipRole)
                .toString()
                .startsWith("7 telemetry messages from rank 1 never arrived"));
    model.setRank(RankRow{1, 0, "h", 100, "running", 0, 0, 2, 40});
    QCOMPARE(model.series().lostMessages(), int64_t(9));
  }

  // A parameter server's rank (it reports its shard's load, never a step) says "server"
  // where a worker shows its step, and dashes for its epoch, loss and samples/s.
  void aServerRankIsNamedNotShownAtStepMinusOne() {
    LiveRunModel model;
    model.setRank(RankRow{1, 0, "h", 100, "running", 0, 0, 0, -1});
    model.setRank(RankRow{1, 1, "h", 101, "running", 0, 0, 0, -1});
    model.addStep(makeStep(0, 0, 2.0));
    ServerLoadRow load;
    load.run_id = 1;
    load.rank = 1;
    load.interval_ns = 1'000'000;
    model.addServerLoad(load);
    QCOMPARE(model.index(1, LiveRunModel::StepColumn).data().toString(), QStringLiteral("server"));
    QCOMPARE(model.index(1, LiveRunModel::LossColumn).data().toString(), QStringLiteral("–"));
    QCOMPARE(model.index(0, LiveRunModel::StepColumn).data().toLongLong(), 0LL);
    QCOMPARE(model.index(0, LiveRunModel::LossColumn).data().toString(), QStringLiteral("2.0000"));
  }

  void phaseTimesAndThroughput() {
    LiveRunModel model;
    for (int64_t step = 0; step < 4; ++step) {
      model.addStep(makeStep(0, step, 2.0));
      model.addStep(makeStep(1, step, 2.0));
    }
    const RankSeries& r1 = model.rankAt(1);
    QCOMPARE(r1.step, 3);
    QVERIFY(near(r1.computeSeconds(), 4 * 0.015));
    QVERIFY(near(r1.commSeconds(), 4 * 0.020));
    QVERIFY(near(r1.waitSeconds(), 4 * 0.020));
    QCOMPARE(r1.samples, 256);
    QCOMPARE(r1.bytes_tx, 4000);
    const auto ms = model.series().phaseMeansMs(1);
    QVERIFY(near(ms[waitPhase], 20.0));
    QVERIFY(near(ms[backwardPhase], 3.0));
    QCOMPARE(model.index(1, LiveRunModel::ComputeColumn).data().toString(),
             QStringLiteral("15.00"));
    // 64 samples a second, each step one second after the last.
    QVERIFY(near(r1.samples_per_s, 64.0));
    QVERIFY(near(model.samplesPerSecond(), 128.0));
    // Bandwidth of a step: its bytes over the time since the rank's previous step.
    const QList<QPointF> sent = curvePoints(r1.series, Metric::SentMBps, XAxis::Step, 0);
    QCOMPARE(sent.size(), 4);
    QVERIFY(near(sent[3].y(), 1000 / 1.0 / 1e6));
    const QList<QPointF> by_bytes = curvePoints(r1.series, Metric::Loss, XAxis::MegabytesSent, 0);
    QVERIFY(near(by_bytes[3].x(), 4000 / 1e6));
    const QList<QPointF> by_time = curvePoints(r1.series, Metric::Loss, XAxis::WallTime, 0);
    QVERIFY(near(by_time[3].x(), 4.0));
  }

  // Rank 0 compresses 57.4x (sent 1000 bytes a step of 57,400 raw); rank 1 sends raw.
  void sentCellShowsTheCompressionRatio() {
    LiveRunModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    for (int64_t step = 0; step < 1000; ++step) {
      StepRow compressed = makeStep(0, step, 2.0);
      compressed.bytes_raw = 57'400;
      StepRow plain = makeStep(1, step, 2.0);
      plain.bytes_raw = plain.bytes_tx;
      model.addSteps({compressed, plain});
    }
    QCOMPARE(model.rankAt(0).bytes_raw, 57'400'000);
    auto cell = [&](int row, int role) {
      return model.index(row, LiveRunModel::SentColumn).data(role).toString();
    };
    QCOMPARE(cell(0, Qt::DisplayRole), QStringLiteral("1.0 · 57.4x"));
    QCOMPARE(cell(0, Qt::ToolTipRole),
             QStringLiteral("1.0 MB sent of 57.4 MB uncompressed (57.4x)"));
    QCOMPARE(cell(1, Qt::DisplayRole), QStringLiteral("1.0"));
    QCOMPARE(cell(1, Qt::ToolTipRole), QStringLiteral("1.0 MB sent, uncompressed"));
  }

  // The memory cell: the latest step's ledger in MB, broken down in its tooltip.
  void memoryCellShowsTheLatestLedger() {
    LiveRunModel model;
    for (int64_t step = 0; step < 3; ++step) {
      StepRow row = makeStep(0, step, 2.0);
      row.mem_params = 15'900'000;
      row.mem_grads = 12'100'000 - step;
      row.mem_optimizer = 15'900'000;
      row.mem_activations = 2'000'000;
      row.mem_buffers = 4'200'000;
      model.addStep(row);
    }
    auto cell = [&](int role) {
      return model.index(0, LiveRunModel::MemoryColumn).data(role).toString();
    };
    QCOMPARE(cell(Qt::DisplayRole), QStringLiteral("50.1"));
    QCOMPARE(cell(Qt::ToolTipRole),
             QStringLiteral("held: parameters 15.9 MB, gradients 12.1 MB, optimizer state "
                            "15.9 MB, activations 2.0 MB, one-layer scratch 4.2 MB"));
    QCOMPARE(model.headerData(LiveRunModel::MemoryColumn, Qt::Horizontal).toString(),
             QStringLiteral("memory MB"));
  }

  void nonFiniteLossIsNotPlotted() {
    LiveRunModel model;
    model.addStep(makeStep(0, 0, 1.0));
    model.addStep(makeStep(0, 1, std::numeric_limits<double>::quiet_NaN()));
    model.addStep(makeStep(0, 2, std::numeric_limits<double>::infinity()));
    QCOMPARE(curvePoints(model.rankAt(0).series, Metric::Loss, XAxis::Step, 0).size(), 1);
    QCOMPARE(model.rankAt(0).step, 2);
  }

  // A restart from the checkpoint at step 6: steps 7..10 come again and are drawn once,
  // in the rank curves and their mean, and the evaluation after 6 goes too.
  void aRestartRollsTheCurvesBackToTheCheckpoint() {
    LiveRunModel model;
    model.setWorld(2);
    for (int64_t step = 1; step <= 10; ++step)
      model.addSteps({makeStep(0, step, 1.0), makeStep(1, step, 2.0)});
    EvalRow eval;
    eval.step = 8;
    eval.test_accuracy = 0.5;
    model.addEval(eval);
    model.rollBack(6);
    QCOMPARE(model.rankAt(0).step, 6);
    QCOMPARE(model.rankAt(1).steps, 6);
    QVERIFY(model.series().evals().empty());
    for (int64_t step = 7; step <= 10; ++step)
      model.addSteps({makeStep(0, step, 3.0), makeStep(1, step, 4.0)});
    for (const SampleSeries* series : {&model.rankAt(0).series, &model.series().global()}) {
      QCOMPARE(int(series->samples().size()), 10);
      for (size_t i = 0; i < series->samples().size(); ++i)
        QCOMPARE(series->samples()[i].step, double(i + 1));  // each step once, in order
    }
    QCOMPARE(model.series().global().samples().back().loss_sum, 3.5 * 2);  // the new steps'
    QCOMPARE(model.rankAt(0).steps, 10);
  }

  void curvesStayBoundedAndKeepEveryStep() {
    SampleSeries series;
    for (int i = 0; i < 100000; ++i) {
      Sample s;
      s.step = i;
      s.loss_sum = 1.0;
      s.loss_count = 1;
      s.count = 1;
      series.append(s);
    }
    QVERIFY(series.samples().size() <= size_t(2 * SampleSeries::kKeep));
    QVERIFY(series.samples().size() >= size_t(SampleSeries::kKeep / 2));
    int64_t steps = 0;
    for (const Sample& s : series.samples()) steps += s.count;
    QCOMPARE(steps, 100000);
    QCOMPARE(series.samples().back().step, 99999.0);
    for (const QPointF& p : curvePoints(series, Metric::Loss, XAxis::Step, 0)) QCOMPARE(p.y(), 1.0);
  }

  // 4,096 ranks' curves hold as many samples in all as 1,024 ranks': a quarter a rank, so a
  // long live run's memory stops growing; every step is still counted.
  void thousandsOfRanksKeepFewerSamplesARank() {
    QCOMPARE(RunSeries::keepPerRank(16), SampleSeries::kKeep);
    QCOMPARE(RunSeries::keepPerRank(1024), SampleSeries::kKeep);
    QCOMPARE(RunSeries::keepPerRank(4096), SampleSeries::kKeep / 4);
    QCOMPARE(RunSeries::keepPerRank(100000), 64);
    SampleSeries series;
    series.setKeep(RunSeries::keepPerRank(4096));
    for (int i = 0; i < 3000; ++i) {
      Sample s;
      s.step = i;
      s.count = 1;
      series.append(s);
    }
    QVERIFY(series.samples().size() <= size_t(2 * SampleSeries::kKeep / 4));
    int64_t steps = 0;
    for (const Sample& s : series.samples()) steps += s.count;
    QCOMPARE(steps, 3000);
  }

  // A simulation's bins (its steps sent at a pace of their own, 100 ms apart) give its time
  // per step from its phases (20 ms), as its rows do; a real run's from its clock.
  void aSimulatedRunsBinsTakeTheirTimeFromTheirPhases() {
    for (const bool simulated : {true, false}) {
      RunSeries run;
      run.setSimulated(simulated);
      for (int64_t first : {1, 5, 9}) {
        StepBin bin;
        bin.rank = 0;
        bin.first_step = first;
        bin.last_step = first + 3;
        bin.steps = 4;
        bin.forward_ns = 4 * 20'000'000;  // 20 ms a step
        bin.first_time_ns = first * 100'000'000;
        bin.last_time_ns = (first + 3) * 100'000'000;
        run.addBin(bin, 4);
      }
      const std::vector<Sample>& samples = run.ranks().front().series.samples();
      QCOMPARE(sampleValue(samples.back(), Metric::StepMs), simulated ? 20.0 : 100.0);
    }
  }

  void smoothingIsADebiasedEma() {
    SampleSeries series;
    for (int i = 0; i < 5; ++i) {
      Sample s;
      s.step = i;
      s.loss_sum = i == 0 ? 4.0 : 2.0;
      s.loss_count = 1;
      s.count = 1;
      series.append(s);
    }
    const QList<QPointF> smooth = curvePoints(series, Metric::Loss, XAxis::Step, 0.5);
    QCOMPARE(smooth[0].y(), 4.0);  // debiased: the first point is the value itself
    // Second: (0.25*4 + 0.5*2) / (1 - 0.25) = 2.6667
    QVERIFY(near(smooth[1].y(), (0.5 * 0.5 * 4.0 + 0.5 * 2.0) / 0.75));
    QVERIFY(smooth[4].y() > 2.0 && smooth[4].y() < smooth[1].y());
  }

  void meanOfRanksWaitsForEveryRank() {
    LiveRunModel model;
    model.setWorld(2);
    model.addStep(makeStep(0, 0, 1.0));
    model.addStep(makeStep(0, 1, 3.0));
    QVERIFY(model.series().global().empty());  // rank 1 has not reported step 0 yet
    model.addStep(makeStep(1, 0, 2.0));
    QCOMPARE(model.series().global().samples().size(), size_t(1));
    model.addStep(makeStep(1, 1, 5.0));
    const QList<QPointF> mean = curvePoints(model.series().global(), Metric::Loss, XAxis::Step, 0);
    QCOMPARE(mean, (QList<QPointF>{{0, 1.5}, {1, 4.0}}));
  }

  void evaluationsAreAveragedOverRanks() {
    LiveRunModel model;
    QVERIFY(!model.latestEval());
    model.addStep(makeStep(0, 9, 1.0));
    model.addEval({7, 0, 9, 0, 0.9, 0.50, 10 * kS});
    model.addEval({7, 1, 9, 0, 0.7, 0.54, 10 * kS});
    model.addEval({7, 0, 19, 1, 0.5, 0.70, 20 * kS});
    QCOMPARE(model.series().evals().size(), size_t(2));
    QVERIFY(near(model.series().evals()[0].accuracy, 0.52));
    QCOMPARE(model.series().evals()[0].ranks, 2);
    QVERIFY(near(model.series().evals()[0].sent_mb, 1000 / 1e6));
    QCOMPARE(model.latestEval()->accuracy, 0.70);
  }

  void stragglerIsFoundFromItsProfile() {
    LiveRunModel model;
    for (int64_t step = 0; step < 20; ++step) {
      std::vector<StepRow> batch;
      for (int rank = 0; rank < 4; ++rank) {
        StepRow s = makeStep(rank, step, 1.0, rank == 2 ? 20 : 0);
        s.wait_ns = rank == 2 ? 0 : 20 * kMs;  // the others wait for rank 2
        batch.push_back(s);
      }
      model.addSteps(batch);
    }
    QCOMPARE(model.series().stragglerRank(), 2);
    QVERIFY(QString::fromStdString(model.series().stragglerReason())
                .contains(QStringLiteral("rank 2 computes 35.0 ms/step, the others 15.0")));
    QCOMPARE(model.rankAt(2).state, RankState::Straggling);
    QCOMPARE(model.rankAt(0).state, RankState::Waiting);
    QVERIFY(model.index(2, LiveRunModel::StateColumn).data(Qt::BackgroundRole).isValid());

    model.setRank(RankRow{7, 3, "host", 1, "failed", 1, 0, 0, 9});
    model.finish("failed");
    QCOMPARE(model.rankAt(3).state, RankState::Failed);
    QCOMPARE(model.rankAt(0).state, RankState::Failed);  // never said goodbye
    QCOMPARE(model.index(2, LiveRunModel::StateColumn).data().toString(),
             QStringLiteral("failed · straggler"));
  }

  void loadSwapsInAStoredRun() {
    // A stored run comes rank by rank, each rank's steps in order, as the store reads them.
    RunSeries built;
    built.setWorld(3);
    built.setBulkLoad(true);
    constexpr int64_t kSteps = 6000;  // more than a live run waits for a silent rank
    for (int rank = 0; rank < 3; ++rank)
      for (int64_t step = 0; step < kSteps; ++step) built.addStep(makeStep(rank, step, rank));
    built.finish("done");
    for (const QPointF& p : curvePoints(built.global(), Metric::Loss, XAxis::Step, 0))
      QCOMPARE(p.y(), 1.0);  // the mean of ranks 0, 1 and 2 at every step
    LiveRunModel stored;
    QAbstractItemModelTester tester(&stored,
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy resets(&stored, &QAbstractItemModel::modelReset);
    stored.load(42, built);
    QCOMPARE(resets.count(), 1);
    QCOMPARE(stored.runId(), 42);
    QCOMPARE(stored.rankCount(), 3);
    QCOMPARE(stored.rankAt(2).state, RankState::Done);
    int64_t global_steps = 0;
    for (const Sample& sample : stored.series().global().samples()) global_steps += sample.count;
    QCOMPARE(global_steps, kSteps);
    stored.reset();
    QCOMPARE(stored.rowCount(), 0);
    QCOMPARE(stored.latestStep(), -1);
  }
};

QTEST_MAIN(LiveRunModelTest)
#include "test_live_run_model.moc"
