// `ranklab calibrate`, `simulate` and `plan` through the real CLI: a simulated pipeline runs
// its passes in the order a real run's spans show, a real run of a simulated job stores its
// prediction and the error, and a plan of an invalid job is refused naming the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "storage/run_store.h"
#include "tests/integration/cli_runner.h"
#include "tests/support/elsewhere_calibration.h"

namespace {

using ranklab::testing::runCli;

// A two-stage pipeline of a small MLP on spirals, 1F1B over 4 micro-batches, every 5th step's
// passes recorded as spans; a few steps.
constexpr const char* kPipelineJob = R"(name = "plan-pipeline"
[data]
dataset = "spirals"
samples = 2048
[model]
kind = "mlp"
layers = [64, 64, 64]
[train]
epochs = 1
batch_size = 32
eval_every = 0
max_steps = 12
[parallel]
ranks = 2
pipeline = 2
microbatches = 4
schedule = "1f1b"
[telemetry]
span_every = 5
)";

class CliPlan : public ranklab::testing::CliTest {
 protected:
  std::string writeJob(const std::string& text) const {
    const std::string path = folder_.file("job.toml");
    std::ofstream(path) << text;
    return path;
  }
  std::string calibration() const { return folder_.file("calibration.json"); }
  std::string common() const { return " --db " + db() + " --calibration " + calibration(); }
};

nlohmann::json jsonIn(const std::string& out) {
  const size_t first = out.find('{');
  return nlohmann::json::parse(out.substr(first, out.rfind('}') - first + 1));
}

// Per rank, the order of step `step`'s passes ("F0 F1 B0 ...") as its spans give them.
std::map<int, std::string> passOrder(ranklab::RunStore& store, int64_t run, int64_t step) {
  std::map<int, std::string> order;
  for (const ranklab::SpanRow& span : store.spans(run))  // by rank, start
    if (span.step == step && (span.kind[0] == 'F' || span.kind[0] == 'B'))
      order[span.rank] += span.kind + " ";
  return order;
}

TEST_F(CliPlan, ASimulatedPipelineRunsItsPassesInTheOrderARealRunsSpansShow) {
  const std::string job = writeJob(kPipelineJob);
  const auto simulated = runCli("simulate " + job + " --steps 12 --json" + common());
  ASSERT_EQ(simulated.exit_code, 0) << simulated.out;
  const int64_t sim = jsonIn(simulated.out)["id"];
  EXPECT_EQ(jsonIn(simulated.out)["origin"], "simulated");
  const auto real = runCli("run " + job + " --quiet --json --db " + db());
  ASSERT_EQ(real.exit_code, 0) << real.out;
  const nlohmann::json measured = jsonIn(real.out);
  ranklab::RunStore store(db());
  for (int64_t step : {5, 10}) {
    const auto want = passOrder(store, measured["id"], step);
    ASSERT_EQ(want.size(), 2u) << "step " << step;
    EXPECT_EQ(passOrder(store, sim, step), want) << "step " << step;
  }
  // The real run found the simulation of its job and stored it as its prediction.
  ASSERT_TRUE(measured.contains("prediction")) << real.out;
  EXPECT_EQ(measured["prediction"]["simulated_run"], sim);
  EXPECT_GT(measured["prediction"]["step_s"].get<double>(), 0);
  EXPECT_TRUE(measured["prediction_error"].contains("step"));
  EXPECT_NEAR(measured["prediction_error"]["memory"].get<double>(), 0, 0.05) << real.out;
  const auto shown =
      runCli("runs show " + std::to_string(measured["id"].get<int64_t>()) + " --json --db " + db());
  EXPECT_EQ(jsonIn(shown.out)["prediction"]["simulated_run"], sim) << shown.out;
}

TEST_F(CliPlan, APlanRanksLayoutsAndRefusesAnInvalidJobNamingTheKey) {
  const std::string job = writeJob(kPipelineJob);
  const auto plan = runCli("plan " + job + " --ranks 4 --json --top 50" + common());
  ASSERT_EQ(plan.exit_code, 0) << plan.out;
  const nlohmann::json candidates = jsonIn(plan.out)["candidates"];
  ASSERT_GE(candidates.size(), 4u) << plan.out;
  for (size_t i = 1; i < candidates.size(); ++i)
    EXPECT_LE(candidates[i - 1]["sample_s"].get<double>(), candidates[i]["sample_s"].get<double>());
  for (const auto& c : candidates) {
    for (const char* key : {"data", "pipeline", "tensor", "zero", "microbatches", "schedule"})
      EXPECT_TRUE(c["layout"].contains(key)) << key;
    EXPECT_EQ(c["layout"]["data"].get<int>() * c["layout"]["pipeline"].get<int>() *
                  c["layout"]["tensor"].get<int>(),
              4);
  }
  const auto bad =
      runCli("plan " + job + " --ranks 4 --set parallel.schedule=\\\"zigzag\\\"" + common());
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("parallel.schedule"), std::string::npos) << bad.out;
}

constexpr const char* kElsewhere = ranklab::test_support::kElsewhereCalibration;

constexpr const char* kSpiralsJob = R"(name = "live"
[data]
dataset = "spirals"
[model]
kind = "mlp"
layers = [32, 32]
[train]
epochs = 1
batch_size = 32
eval_every = 0
[telemetry]
hang_limit_s = 2
heartbeat_ms = 200
)";

// 96 simulated ranks through the real path (Reporters, the collector, the recorder, the
// store): every rank's every step stored, at the pace asked for, as a simulated run.
TEST_F(CliPlan, ALiveSimulationSendsEveryRanksStepsThroughTheCollector) {
  const std::string job = writeJob(kSpiralsJob);
  std::ofstream(calibration()) << kElsewhere;
  const auto live =
      runCli("simulate " + job + " --ranks 96 --live --rate 20 --steps 30 --json" + common());
  ASSERT_EQ(live.exit_code, 0) << live.out;
  const nlohmann::json run = jsonIn(live.out);
  EXPECT_EQ(run["origin"], "simulated");
  EXPECT_EQ(run["status"], "done");
  ranklab::RunStore store(db());
  std::map<int, int64_t> steps;
  store.forEachStep(run["id"], [&](const ranklab::StepRow& s) { ++steps[s.rank]; });
  ASSERT_EQ(steps.size(), 96u);
  for (const auto& [rank, n] : steps) EXPECT_EQ(n, 30) << "rank " << rank;
  // 30 steps at 20 a second: 1.5 s of training, not the simulated milliseconds.
  EXPECT_GE(run["train_s"].get<double>(), 1.4) << live.out;
}

// A rank stopped for good: it goes silent, the others block in the next collective, and the
// launcher names it once telemetry.hang_limit_s has passed.
TEST_F(CliPlan, ALiveSimulationsStoppedRankIsNamedHung) {
  const std::string job = writeJob(std::string(kSpiralsJob) +
                                   "[[faults]]\nrank = 50\nat_step = 10\naction = \"stop\"\n");
  std::ofstream(calibration()) << kElsewhere;
  const auto live =
      runCli("simulate " + job + " --ranks 96 --live --rate 20 --steps 400" + common());
  EXPECT_EQ(live.exit_code, 1) << live.out;
  EXPECT_NE(live.out.find("rank 50 hung after step 10"), std::string::npos) << live.out;
  // Named silent two heartbeats in, long before the hang limit, and no other rank with it.
  ranklab::RunStore store(db());
  const auto events = store.events(store.listRuns().front().id);
  const auto kind = [&](const char* k) {
    return std::find_if(events.begin(), events.end(), [k](const auto& e) { return e.kind == k; });
  };
  const auto quiet = kind("quiet"), failure = kind("failure");
  ASSERT_NE(quiet, events.end()) << live.out;
  EXPECT_EQ(
      std::count_if(events.begin(), events.end(), [](const auto& e) { return e.kind == "quiet"; }),
      1);
  EXPECT_EQ(quiet->rank, 50);
  EXPECT_EQ(quiet->step, 10);
  EXPECT_NE(quiet->text.find("rank 50 silent for"), std::string::npos) << quiet->text;
  EXPECT_LT(quiet, failure);  // stored first: the hang limit came later
}

}  // namespace
