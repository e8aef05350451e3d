// Workbench responsiveness. (1) UI event-loop latency while the live page ingests 16 ranks
// x 100 steps/s: a producer thread emits steps one by one as queued signals, exactly as the
// run thread does, through the same StepBatcher into LiveRunModel and the visible
// LivePage; a 10 ms precise timer on the UI thread records how late each tick fires.
// (2) Time to open a stored run of 1,000,000 step rows: RunStoreReader::loadRun until the
// live page has drawn it, from the step bins written when the run finished, and (the peer)
// from every row, as for a run without bins. Prints a table, or one JSON line with --json.
#include <sqlite3.h>

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <thread>

#include "storage/run_store.h"
#include "views/live_page.h"
#include "views/models/live_run_model.h"
#include "views/models/log_model.h"
#include "views/models/record_metatypes.h"
#include "views/models/step_batcher.h"
#include "views/run_store_reader.h"

using namespace ranklab;

namespace {

constexpr int64_t kMs = 1'000'000;

StepRow syntheticStep(int64_t run_id, int rank, int64_t step, double t_s) {
  StepRow s;
  s.run_id = run_id;
  s.rank = rank;
  s.step = step;
  s.epoch = int(step / 1000);
  s.samples = 64;
  s.data_ns = 1 * kMs;
  s.forward_ns = 2 * kMs + rank * 50'000;
  s.backward_ns = 3 * kMs;
  s.comm_ns = 2 * kMs;
  s.wait_ns = (rank % 4) * kMs;
  s.update_ns = 500'000;
  s.loss = 2.3 * std::exp(-double(step) / 800.0) + 0.3 + 0.05 * ((step * 7 + rank) % 11) / 11.0;
  s.bytes_tx = s.bytes_rx = s.bytes_raw = 900'000;
  s.lr = 0.05;
  s.time_ns = int64_t(t_s * 1e9);
  return s;
}

// Emits steps from its own thread at a fixed rate per rank, like the run thread does.
class StepSource : public QObject {
  Q_OBJECT

 public:
  StepSource(int ranks, int steps_per_s, double seconds)
      : ranks_(ranks), rate_(steps_per_s), seconds_(seconds) {}
  void run() {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    if (rate_ == 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds_));
    const int64_t total = int64_t(rate_ * seconds_);
    for (int64_t step = 0; step < total && !stop_; ++step) {
      const auto due = start + std::chrono::microseconds(int64_t(step * 1e6 / rate_));
      std::this_thread::sleep_until(due);
      const double t = std::chrono::duration<double>(Clock::now() - start).count();
      for (int r = 0; r < ranks_; ++r) emit step_(syntheticStep(1, r, step, t));
      if (step % 1000 == 999) emit eval_(EvalRow{1, 0, step, 0, 0.5, 0.8, int64_t(t * 1e9)});
      if (step % 100 == 0)
        emit line_(step % (100 * ranks_) / 100, QStringLiteral("step %1").arg(step));
    }
    emit done();
  }
  std::atomic<bool> stop_{false};

 signals:
  void step_(const ranklab::StepRow& step);
  void eval_(const ranklab::EvalRow& eval);
  void line_(int rank, const QString& text);
  void done();

 private:
  int ranks_, rate_;
  double seconds_;
};

struct Latency {
  double p50 = 0, p99 = 0, max = 0;
  int64_t ticks = 0, steps = 0;
};

// rate 0: no steps at all, the same probe: what the machine itself costs the event loop.
Latency measureIngest(LivePage& page, LiveRunModel& model, LogModel& log, int ranks, int rate,
                      double seconds) {
  model.reset(1);
  model.setWorld(ranks);
  StepBatcher batcher;
  QObject::connect(&batcher, &StepBatcher::batchReady, &model, &LiveRunModel::addSteps);
  int64_t steps = 0;
  QObject::connect(&batcher, &StepBatcher::batchReady, &model,
                   [&steps](const std::vector<StepRow>& b) { steps += int64_t(b.size()); });

  QThread thread;
  StepSource source(ranks, rate, seconds);
  source.moveToThread(&thread);
  QObject::connect(&source, &StepSource::step_, &batcher, &StepBatcher::add);
  QObject::connect(&source, &StepSource::eval_, &model, &LiveRunModel::addEval);
  QObject::connect(&source, &StepSource::line_, &log,
                   [&log](int rank, const QString& text) { log.append(rank, false, text); });
  QObject::connect(&thread, &QThread::started, &source, &StepSource::run);

  // The probe: a 10 ms timer; lateness = actual interval - 10 ms.
  std::vector<double> late_ms;
  QElapsedTimer clock;
  QTimer probe;
  probe.setTimerType(Qt::PreciseTimer);
  probe.setInterval(10);
  qint64 last = -1;
  QObject::connect(&probe, &QTimer::timeout, [&] {
    const qint64 now = clock.nsecsElapsed();
    if (last >= 0) late_ms.push_back(std::max(0.0, double(now - last) / 1e6 - 10.0));
    last = now;
  });
  QEventLoop loop;
  QObject::connect(&source, &StepSource::done, &loop, &QEventLoop::quit, Qt::QueuedConnection);
  clock.start();
  probe.start();
  thread.start();
  loop.exec();
  probe.stop();
  thread.quit();
  thread.wait();
  batcher.flush();
  page.refreshNow();

  Latency result;
  std::sort(late_ms.begin(), late_ms.end());
  result.ticks = int64_t(late_ms.size());
  result.steps = steps;
  if (!late_ms.empty()) {
    result.p50 = late_ms[late_ms.size() / 2];
    result.p99 = late_ms[std::min(late_ms.size() - 1, size_t(late_ms.size() * 0.99))];
    result.max = late_ms.back();
  }
  return result;
}

struct BigRun {
  int64_t id = 0;
  double write_s = 0, finish_s = 0;  // rows; finishRun (which sums the steps into bins)
};

BigRun writeBigRun(const QString& db, int ranks, int64_t rows) {
  QElapsedTimer clock;
  clock.start();
  RunStore store(db.toStdString());
  NewRun run;
  run.name = "one million steps";
  run.world = ranks;
  run.strategy = "allreduce";
  run.algorithm = "ring";
  run.codec = "none";
  run.amp = "fp32";
  BigRun big;
  const int64_t id = big.id = store.createRun(run);
  const int64_t steps = rows / ranks;
  RecordBatch batch;
  for (int64_t step = 0; step < steps; ++step) {
    for (int r = 0; r < ranks; ++r) batch.steps.push_back(syntheticStep(id, r, step, step * 0.01));
    if (batch.steps.size() >= 50'000) {
      store.write(batch);
      batch.clear();
    }
  }
  for (int64_t step = 999; step < steps; step += 1000)
    batch.evals.push_back(EvalRow{id, 0, step, int(step / 1000), 0.5, 0.8, int64_t(step * 1e7)});
  store.write(batch);
  big.write_s = double(clock.nsecsElapsed()) / 1e9;
  clock.restart();
  store.finishRun(id, "done", steps * 0.01, steps * 0.01);
  big.finish_s = double(clock.nsecsElapsed()) / 1e9;
  return big;
}

// A run finished by an older ranklab has no bins: the reader falls back to every row.
void dropBins(const QString& db, int64_t run_id) {
  sqlite3* raw = nullptr;
  const std::string sql = "DELETE FROM step_bins WHERE run_id = " + std::to_string(run_id);
  if (sqlite3_open(qPrintable(db), &raw) != SQLITE_OK ||
      sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
    std::fprintf(stderr, "bench: cannot drop the bins: %s\n", sqlite3_errmsg(raw));
  sqlite3_close(raw);
}

struct Opens {
  double best_ms = 0, median_ms = 0, cpu_ms = 0;
};

double measureOpen(LivePage& page, LiveRunModel& model, const QString& db, int64_t run_id) {
  RunStoreReader reader(db);
  QEventLoop loop;
  QElapsedTimer clock;
  double ms = -1;
  QObject::connect(&reader, &RunStoreReader::runLoaded, &page, [&](const StoredRun& run) {
    model.load(run.run.id, run.series);
    page.refreshNow();
    ms = double(clock.nsecsElapsed()) / 1e6;
    loop.quit();
  });
  QObject::connect(&reader, &RunStoreReader::failed, &loop, [&](const QString& message) {
    std::fprintf(stderr, "bench: %s\n", qPrintable(message));
    loop.quit();
  });
  clock.start();
  reader.loadRun(run_id);
  loop.exec();
  return ms;
}

// Best and median of 3 opens, and the CPU time of one (every thread of the process).
Opens measureOpens(LivePage& page, LiveRunModel& model, const QString& db, int64_t run_id) {
  std::vector<double> ms;
  timespec cpu0{}, cpu1{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
  for (int i = 0; i < 3; ++i) ms.push_back(measureOpen(page, model, db, run_id));
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
  std::sort(ms.begin(), ms.end());
  Opens opens;
  opens.best_ms = ms[0];
  opens.median_ms = ms[1];
  opens.cpu_ms = ((cpu1.tv_sec - cpu0.tv_sec) * 1e3 + (cpu1.tv_nsec - cpu0.tv_nsec) / 1e6) / 3;
  return opens;
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QCommandLineParser parser;
  parser.addHelpOption();
  const QCommandLineOption json(QStringLiteral("json"), "One JSON line.");
  const QCommandLineOption seconds(QStringLiteral("seconds"), "Ingest for this long.", "S", "30");
  const QCommandLineOption rows(QStringLiteral("rows"), "Step rows of the stored run.", "N",
                                "1000000");
  parser.addOptions({json, seconds, rows});
  parser.process(app);
  registerRecordMetaTypes();

  LogModel log;
  LivePage page(&log);
  LiveRunModel model;
  page.resize(1600, 1000);
  page.setSmoothing(0.6);
  page.setModel(&model);
  page.show();

  constexpr int kRanks = 16, kRate = 100;
  const double duration = parser.value(seconds).toDouble();
  const Latency idle = measureIngest(page, model, log, kRanks, 0, std::min(duration, 10.0));
  const Latency ingest = measureIngest(page, model, log, kRanks, kRate, duration);

  // What one redraw of 16 ranks' charts costs, painted: the UI thread's share per 200 ms.
  QElapsedTimer redraw_clock;
  redraw_clock.start();
  constexpr int kRedraws = 10;
  for (int i = 0; i < kRedraws; ++i) {
    page.refreshNow();
    page.repaint();
  }
  const double redraw_ms = double(redraw_clock.nsecsElapsed()) / 1e6 / kRedraws;

  QTemporaryDir dir;
  const QString db = dir.filePath(QStringLiteral("big.db"));
  const BigRun big = writeBigRun(db, kRanks, parser.value(rows).toLongLong());
  const Opens binned = measureOpens(page, model, db, big.id);
  const size_t binned_points = model.rankAt(0).series.samples().size();
  dropBins(db, big.id);
  const Opens every_row = measureOpens(page, model, db, big.id);

  if (parser.isSet(json)) {
    std::printf(
        "{\"ranks\":%d,\"steps_per_s_per_rank\":%d,\"steps_ingested\":%lld,\"ticks\":%lld,"
        "\"latency_p50_ms\":%.2f,\"latency_p99_ms\":%.2f,\"latency_max_ms\":%.2f,"
        "\"idle_p99_ms\":%.2f,\"redraw_ms\":%.1f,\"open_rows\":%lld,\"finish_s\":%.2f,"
        "\"open_best_ms\":%.1f,\"open_median_ms\":%.1f,\"open_cpu_ms\":%.1f,"
        "\"every_row_best_ms\":%.1f,\"every_row_median_ms\":%.1f,\"every_row_cpu_ms\":%.1f,"
        "\"points_per_curve\":%zu}\n",
        kRanks, kRate, (long long)ingest.steps, (long long)ingest.ticks, ingest.p50, ingest.p99,
        ingest.max, idle.p99, redraw_ms, parser.value(rows).toLongLong(), big.finish_s,
        binned.best_ms, binned.median_ms, binned.cpu_ms, every_row.best_ms, every_row.median_ms,
        every_row.cpu_ms, binned_points);
    return 0;
  }
  std::printf("ingest: %d ranks x %d steps/s, %lld steps in %s s, %lld probe ticks\n", kRanks,
              kRate, (long long)ingest.steps, qPrintable(parser.value(seconds)),
              (long long)ingest.ticks);
  std::printf("  idle baseline (no steps): p50 %.2f ms   p99 %.2f ms   max %.2f ms\n", idle.p50,
              idle.p99, idle.max);
  std::printf(
      "  UI event-loop latency  p50 %.2f ms   p99 %.2f ms   max %.2f ms   (goal p99 < 50)\n",
      ingest.p50, ingest.p99, ingest.max);
  std::printf("  one redraw of the charts, painted: %.1f ms (every %d ms at most)\n", redraw_ms,
              LivePage::kRedrawIntervalMs);
  std::printf(
      "open: stored run of %lld step rows (written in %.1f s; finishRun summed them into "
      "bins in %.2f s)\n",
      parser.value(rows).toLongLong(), big.write_s, big.finish_s);
  std::printf(
      "  from the bins:     best %.0f ms   median of 3 %.0f ms   CPU %.0f ms   (goal < 1000)\n",
      binned.best_ms, binned.median_ms, binned.cpu_ms);
  std::printf("  from every row:    best %.0f ms   median of 3 %.0f ms   CPU %.0f ms   (no bins)\n",
              every_row.best_ms, every_row.median_ms, every_row.cpu_ms);
  std::printf("  samples kept per curve: %zu\n", binned_points);
  return 0;
}

#include "workbench_responsiveness.moc"
