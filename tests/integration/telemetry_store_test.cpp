// Ranks (threads) report over real ZeroMQ sockets; the collector and recorder write a real
// SQLite file; reading it back gives exactly what was sent.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "comm/telemetry/collector.h"
#include "comm/telemetry/reporter.h"
#include "launch/run_recorder.h"
#include "storage/run_store.h"
#include "tests/support/temp_folder.h"

namespace ranklab {
namespace {

class CountingObserver : public RunObserver {
 public:
  void onStep(const StepRow&) override { ++steps; }
  void onEval(const EvalRow&) override { ++evals; }
  int steps = 0;
  int evals = 0;
};

// Step k of rank r carries values derived from (r, k), so every field can be checked.
telemetry::Step makeStep(int rank, int k) {
  telemetry::Step s;
  s.set_step(k);
  s.set_epoch(1 + k / 50);
  s.set_samples(64);
  auto* p = s.mutable_phases();
  p->set_data_ns(1000 + k);
  p->set_forward_ns(2000 + rank);
  p->set_backward_ns(3000 + k * rank);
  p->set_compress_ns(7);
  p->set_comm_ns(5000 + k);
  p->set_wait_ns(100 * rank);
  p->set_update_ns(900);
  s.set_loss(2.5 / (k + 1) + rank * 0.001);
  s.set_bytes_tx(1000000 + k);
  s.set_bytes_rx(1000000 - k);
  s.set_bytes_raw(4 * 235146);
  s.set_lr(0.05);
  s.set_loss_scale(1.0);
  s.set_staleness(rank);
  return s;
}

TEST(TelemetryIntoStore, EveryStepOfEveryRankArrivesIntact) {
  const testing::TempFolder folder;
  const auto db = folder.path() / "runs.db";
  const int world = 4, steps = 300;
  RunStore store(db.string());
  NewRun run;
  run.name = "wire";
  run.world = world;
  const int64_t run_id = store.createRun(run);
  Collector collector("wire-1", world);
  CountingObserver observer;
  RunRecorder recorder(store, run_id, world, observer);

  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r) {
    ranks.emplace_back([&, r] {
      Reporter reporter({collector.endpoint(), "wire-1", r, 4096, 5000, 0, std::nullopt, nullptr});
      reporter.hello(world, "host-" + std::to_string(r), 1000 + r);
      for (int k = 1; k <= steps; ++k) reporter.step(makeStep(r, k));
      if (r == 0) {
        telemetry::Eval eval;
        eval.set_step(steps);
        eval.set_epoch(6);
        eval.set_test_loss(0.375);
        eval.set_test_accuracy(0.875);
        reporter.eval(eval);
      }
      reporter.bye(0, 123456789 + r, "");
      reporter.close();
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!recorder.allRanksSaidBye() && std::chrono::steady_clock::now() < deadline) {
    for (const auto& e : collector.receive(50)) recorder.ingest(e);
  }
  for (auto& t : ranks) t.join();
  recorder.flush();
  store.finishRun(run_id, "done", 1.0, recorder.slowestTrainNs() / 1e9);
  ASSERT_TRUE(recorder.allRanksSaidBye());
  EXPECT_EQ(observer.steps, world * steps);
  EXPECT_EQ(observer.evals, 1);

  // A second connection to the file, as the CLI or the workbench would open it.
  RunStore reader(db.string());
  const auto rows = reader.steps(run_id);
  ASSERT_EQ(rows.size(), static_cast<size_t>(world * steps));
  for (const auto& row : rows) {
    const auto sent = makeStep(row.rank, static_cast<int>(row.step));
    ASSERT_EQ(row.epoch, sent.epoch());
    ASSERT_EQ(row.samples, sent.samples());
    ASSERT_EQ(row.data_ns, sent.phases().data_ns());
    ASSERT_EQ(row.forward_ns, sent.phases().forward_ns());
    ASSERT_EQ(row.backward_ns, sent.phases().backward_ns());
    ASSERT_EQ(row.compress_ns, sent.phases().compress_ns());
    ASSERT_EQ(row.comm_ns, sent.phases().comm_ns());
    ASSERT_EQ(row.wait_ns, sent.phases().wait_ns());
    ASSERT_EQ(row.update_ns, sent.phases().update_ns());
    ASSERT_EQ(row.loss, sent.loss());  // doubles survive protobuf and SQLite bit for bit
    ASSERT_EQ(row.bytes_tx, sent.bytes_tx());
    ASSERT_EQ(row.bytes_rx, sent.bytes_rx());
    ASSERT_EQ(row.bytes_raw, sent.bytes_raw());
    ASSERT_EQ(row.lr, sent.lr());
    ASSERT_EQ(row.staleness, sent.staleness());
    ASSERT_GT(row.time_ns, 0);
  }
  const auto ranks_back = reader.ranks(run_id);
  ASSERT_EQ(ranks_back.size(), static_cast<size_t>(world));
  for (const auto& r : ranks_back) {
    EXPECT_EQ(r.host, "host-" + std::to_string(r.rank));
    EXPECT_EQ(r.pid, 1000 + r.rank);
    EXPECT_EQ(r.status, "done");
    EXPECT_EQ(r.train_ns, 123456789 + r.rank);
    EXPECT_EQ(r.seq_gaps, 0);
  }
  const auto summary = reader.summary(run_id);
  ASSERT_TRUE(summary.has_value());
  EXPECT_EQ(summary->steps, steps);
  EXPECT_EQ(summary->samples, int64_t{world} * steps * 64);
  EXPECT_DOUBLE_EQ(*summary->test_accuracy, 0.875);
}

}  // namespace
}  // namespace ranklab
