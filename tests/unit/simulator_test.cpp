// The simulator against the engine's own formulas: a pipeline's bubble where every stage
// computes alike, the bytes each group moves against the traffic formula, a straggler's delay
// felt by every rank, and a calibration's file read back or refused naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "comm/silent_peers.h"
#include "engine/job/fault_draws.h"
#include "engine/job/job_file.h"
#include "engine/job/pipeline_bubble.h"
#include "engine/model/transformer_block.h"
#include "engine/sim/calibration.h"
#include "engine/sim/model_parts.h"
#include "engine/sim/part_timing.h"
#include "engine/sim/simulator.h"
#include "engine/sim/step_actions.h"
#include "engine/sim/step_replay.h"
#include "engine/train/memory_estimate.h"
#include "engine/train/model_part.h"
#include "engine/train/strategy_registry.h"
#include "engine/train/thread_policy.h"
#include "engine/train/traffic_formula.h"

namespace ranklab {
namespace {

constexpr int kCores = 64;  // no two ranks share a core: compute is as calibrated

JobSpec spiralsJob(const std::vector<std::string>& settings) {
  const std::string toml = R"(
[data]
dataset = "spirals"
[model]
kind = "mlp"
layers = [32, 32, 32]
[train]
batch_size = 32
epochs = 1
)";
  return parseJob(toml, "sim.toml", settings);
}

// Every stage's forward takes `forward_ns` per micro-batch and its backward `backward_ns`,
// spread over its layers (and loss head); links and updates cost nothing.
Calibration uniformCalibration(const JobSpec& job, double forward_ns, double backward_ns,
                               int cores = kCores) {
  Calibration c;
  c.machine = "test";
  c.cores = cores;
  const int threads = blasThreadsFor(job.parallel, cores);
  const int rows = job.train.batch_size / job.parallel.microbatches;
  ModelParts parts(job);
  const int stages = parts.degrees().pipeline;
  for (int stage = 0; stage < stages; ++stage) {
    for (int slice = 0; slice < parts.degrees().tensor; ++slice) {
      const Network& part = parts.part(stage, slice);
      const bool last = stage == stages - 1;
      const double n = static_cast<double>(part.layers().size() + (last ? 1 : 0));
      for (const auto& layer : part.layers())
        c.add({layerKey(*layer), layerKind(layerKey(*layer)), rows, threads, "fp32",
               layerMacs(*layer, rows), forward_ns / n, backward_ns / n});
      if (last)
        c.add({lossKey(part), "loss", rows, threads, "fp32", 1, forward_ns / n, backward_ns / n});
    }
  }
  for (int world = 2; world <= 8; world *= 2) c.links.push_back({"ring", world, 0, 0});
  c.update_ns_per_param["sgd"] = 0;
  return c;
}

struct CollectedRows : RunRowSink {
  std::vector<StepRow> steps;
  std::vector<SpanRow> spans;
  void add(RankRow) override {}
  void add(StepRow row) override { steps.push_back(row); }
  void add(SpanRow row) override { spans.push_back(row); }
};

TEST(Simulator, APipelinesBubbleEqualsTheFormulaWhenEveryStageComputesAlike) {
  for (const char* schedule : {"gpipe", "1f1b"}) {
    const JobSpec job =
        spiralsJob({"parallel.ranks=4", "parallel.pipeline=4", "parallel.microbatches=4",
                    std::string("parallel.schedule=\"") + schedule + "\""});
    const double f = 1e6, b = 2e6;
    CollectedRows rows;
    const Prediction p = simulateRun(job, uniformCalibration(job, f, b), {8, 1}, rows);
    const int m = 4, stages = 4;
    EXPECT_NEAR(p.step_s, (m + stages - 1) * (f + b) / 1e9, 1e-9) << schedule;
    for (const StepRow& row : rows.steps) {
      if (row.step < 3) continue;
      const double step_ns = row.wait_ns + row.forward_ns + row.backward_ns;
      EXPECT_NEAR(row.wait_ns / step_ns, bubbleFormula(stages, m), 1e-9)
          << schedule << " rank " << row.rank << " step " << row.step;
    }
  }
}

TEST(Simulator, EachGroupsBytesEqualTheTrafficFormulaToTheByte) {
  for (const std::vector<std::string>& layout :
       {std::vector<std::string>{"parallel.ranks=4", "parallel.tensor=2"},
        std::vector<std::string>{"parallel.ranks=4", "parallel.pipeline=2",
                                 "parallel.microbatches=2"},
        std::vector<std::string>{"parallel.ranks=8", "parallel.pipeline=2", "parallel.tensor=2",
                                 "parallel.zero=1"}}) {
    const JobSpec job = spiralsJob(layout);
    CollectedRows rows;
    simulateRun(job, uniformCalibration(job, 1e5, 1e5), {2, 1}, rows);
    ModelParts parts(job);
    for (const StepRow& row : rows.steps) {
      const LayoutCoords at = coordsOf(row.rank, parts.degrees());
      const TrafficFormula f =
          trafficFormula(job, parts.part(at.stage, at.slice), at, parts.degrees());
      EXPECT_EQ(row.bytes_tensor, f.tensor.value_or(-1)) << layout[1] << " rank " << row.rank;
      EXPECT_EQ(row.bytes_pipeline, f.pipeline.value_or(-1)) << layout[1] << " rank " << row.rank;
      EXPECT_EQ(row.bytes_tx - row.bytes_tensor - row.bytes_pipeline, f.data.value_or(-1))
          << layout[1] << " rank " << row.rank;
    }
  }
}

TEST(Simulator, AStragglersDelayLandsOnEveryRankOfItsGroup) {
  const JobSpec steady = spiralsJob({"parallel.ranks=4"});
  const JobSpec slowed =
      spiralsJob({"parallel.ranks=4", "fault.straggler_rank=2", "fault.straggler_delay_ms=5"});
  const Calibration c = uniformCalibration(steady, 1e6, 1e6);
  const double base = predictRun(steady, c).step_s;
  EXPECT_NEAR(predictRun(slowed, c).step_s - base, 5e-3, 1e-9);
  CollectedRows rows;
  simulateRun(slowed, c, {6, 1}, rows);
  for (const StepRow& row : rows.steps) {
    if (row.rank == 2 || row.step == 1) continue;
    EXPECT_NEAR(row.wait_ns, 5e6, 1) << "rank " << row.rank;
  }
}

// A step's fixed cost, measured on data parallelism, is paid in proportion to the part a rank
// holds where its ranks meet a collective every step; a pipeline's stages alone meet none.
TEST(Simulator, AStepsFixedCostFollowsThePartARankHolds) {
  constexpr double kFixedNs = 1e6;
  const auto predicted = [&](const JobSpec& job) {
    Calibration c = uniformCalibration(job, 0, 0);
    c.step_overhead_ns[stepOverheadKey(4, modelSignature(job))] = kFixedNs;
    return predictRun(job, c).step_s * 1e9;
  };
  EXPECT_NEAR(predicted(spiralsJob({"parallel.ranks=4"})), kFixedNs, 1);
  const JobSpec sliced = spiralsJob({"parallel.ranks=4", "parallel.tensor=2"});
  ModelParts parts(sliced);
  const double first = static_cast<double>(parts.part(0, 0).parameterCount());
  const double second = static_cast<double>(parts.part(0, 1).parameterCount());
  const double held = std::max(first, second) / (first + second);
  EXPECT_NEAR(held, 0.5, 0.05);
  EXPECT_NEAR(predicted(sliced), held * kFixedNs, 1);
  EXPECT_NEAR(
      predicted(spiralsJob({"parallel.ranks=4", "parallel.pipeline=4", "parallel.microbatches=4"})),
      0, 1);
}

// Another model on hosts of as many ranks borrows the fixed cost measured for the first, in
// proportion to its parameters where the calibration says how many the reference held.
TEST(Simulator, ABorrowedFixedCostScalesWithTheModelsParameters) {
  constexpr double kFixedNs = 1e6;
  const JobSpec measured = spiralsJob({"parallel.ranks=4"});
  const JobSpec wider = spiralsJob({"parallel.ranks=4", "model.layers=[64, 64, 64]"});
  const auto params = [](const JobSpec& job) {
    ModelParts parts(job);
    return static_cast<double>(parts.part(0, 0).parameterCount());
  };
  Calibration c = uniformCalibration(wider, 0, 0);
  const std::string key = stepOverheadKey(4, modelSignature(measured));
  c.step_overhead_ns[key] = kFixedNs;
  EXPECT_NEAR(predictRun(wider, c).step_s * 1e9, kFixedNs, 1);  // an older file: borrowed whole
  c.step_overhead_params[key] = params(measured);
  EXPECT_NEAR(predictRun(wider, c).step_s * 1e9, kFixedNs * params(wider) / params(measured), 1);
  const Calibration back = parseCalibration(calibrationJson(c), "cal.json");
  EXPECT_EQ(back.step_overhead_params, c.step_overhead_params);
}

// Between hosts a reference run's own sync rescales that link's fits, and only that link's.
TEST(Simulator, AReferenceRunsSyncRescalesItsLinkAlone) {
  Calibration c;
  c.links = {{"ring over a:2,b:2", 4, 100, 2}, {"ring", 4, 10, 1}};
  EXPECT_DOUBLE_EQ(scaleLinks(c, "ring over a:2,b:2", 0.06, 0.04), 1.5);
  EXPECT_DOUBLE_EQ(c.links[0].latency_ns, 150);
  EXPECT_DOUBLE_EQ(c.links[0].ns_per_byte, 3);
  EXPECT_DOUBLE_EQ(c.links[1].latency_ns, 10);  // this machine's own ring: untouched
  EXPECT_DOUBLE_EQ(scaleLinks(c, "ring over a:2,b:2", 1.0, 0.01), 4);  // within [0.25, 4]
  EXPECT_DOUBLE_EQ(scaleLinks(c, "ring over a:2,b:2", 0.05, 0), 1);    // nothing to scale by
}

// Passes values through, and notes whether a backward was asked for an input gradient.
class InputGradientProbe : public Layer {
 public:
  explicit InputGradientProbe(bool* asked) : Layer("probe", {1, 1, 4}, {1, 1, 4}), asked_(asked) {}
  std::string describe() const override { return "Probe()"; }
  void forward(const float* x, float* y, int batch, const ForwardPass&) override {
    std::copy(x, x + 4 * batch, y);
  }
  void backward(const float*, const float*, const float* dy, float* dx, int batch) override {
    *asked_ = *asked_ || dx != nullptr;
    if (dx) std::copy(dy, dy + 4 * batch, dx);
  }

 private:
  bool* asked_;
};

// A pipeline's first stage sends no input gradient anywhere, so its run computes none
// (pipeline_schedule.cpp) and its calibration must not time one; a later stage's does, the
// last (with the loss head) too.
TEST(Simulator, AFirstStageIsTimedWithoutTheInputGradientItsRunSkips) {
  for (const size_t first_layer : {size_t{0}, size_t{2}}) {
    bool asked = false, second_asked = false;  // the first layer's question, the second's
    std::vector<std::unique_ptr<Layer>> layers;
    layers.push_back(std::make_unique<InputGradientProbe>(&asked));
    layers.push_back(std::make_unique<InputGradientProbe>(&second_asked));
    Network stage(std::move(layers), Network::PartOfModel{first_layer}, cpuDevice());
    for (const bool last_stage : {false, true}) {
      asked = second_asked = false;
      Calibration timed;
      timePart(stage, last_stage, 8, 1, 1, "fp32", timed, 1);
      EXPECT_EQ(asked, first_layer > 0)
          << "a stage from layer " << first_layer << (last_stage ? ", the last" : "");
      EXPECT_TRUE(second_asked);  // within a stage, every later layer hands one back
    }
  }
}

// A stage's output above Open MPI's eager limit moves only once the next stage has posted its
// receive, and the engine waits for each send: the first stage starts its next pass only then.
TEST(Simulator, ASendAboveTheEagerLimitWaitsForItsReceiver) {
  constexpr double kPass = 1e6, kMove = 0.5e6;  // each pass; each message's move
  const auto secondStart = [&](int batch) {     // the last stage's second forward's start
    const JobSpec job =
        spiralsJob({"parallel.ranks=2", "parallel.pipeline=2", "parallel.microbatches=2",
                    "parallel.schedule=\"gpipe\"", "train.batch_size=" + std::to_string(batch)});
    Calibration c = uniformCalibration(job, kPass, kPass);
    c.links = {{"ring", 2, 2 * kMove, 0}};  // a message is half a 2-rank ring's two hops
    ModelParts parts(job);
    const StepModel model(job, c, parts);
    StepReplay replay(model);
    std::vector<double> clock(2, 0.0);
    std::vector<SimStep> steps;
    replay.run(clock, {0, 0}, steps, true);
    return steps[1].passes.at(1).start_ns;
  };
  EXPECT_NEAR(secondStart(32), 2 * kPass + kMove, 1);       // 16 rows x 32 floats: eager
  EXPECT_NEAR(secondStart(128), 2 * kPass + 2 * kMove, 1);  // 64 rows: 8 KB, rendezvous
}

// Ranks past the cores take turns: a pass runs at its own speed once a core is free (an
// oversubscribed run's passes take their time, its waits grow), and each waits its turn.
TEST(Simulator, RanksPastTheCoresTakeTurnsOnThem) {
  constexpr double kForward = 1e6, kBackward = 2e6;
  for (const int ranks : {2, 4, 8}) {
    const JobSpec job = spiralsJob({"parallel.ranks=" + std::to_string(ranks)});
    CollectedRows rows;
    const Prediction p =
        simulateRun(job, uniformCalibration(job, kForward, kBackward, 2), {4, 1}, rows);
    const double turns = ranks / 2.0;  // each core's ranks, one after another
    EXPECT_NEAR(p.step_s * 1e9, turns * (kForward + kBackward), 1) << ranks << " ranks";
    for (const StepRow& row : rows.steps) {
      EXPECT_NEAR(row.forward_ns, kForward, 1) << ranks << " ranks, rank " << row.rank;
      EXPECT_NEAR(row.wait_ns, (turns - 1) * (kForward + kBackward), 1)
          << ranks << " ranks, rank " << row.rank;
    }
  }
}

// A tensor slice meets its sums inside a pass, between its layers: the pass's compute comes
// in pieces, a sum after each (so a rank sharing cores waits for one again), and its span is
// still one per pass.
TEST(Simulator, ASlicesPassIsSplitByItsSums) {
  const std::string layers = "model.layers=[32, 32, 32, 32, 32]";
  const JobSpec sliced = spiralsJob({"parallel.ranks=2", "parallel.tensor=2", layers});
  ModelParts parts(sliced);
  const StepModel model(sliced, uniformCalibration(sliced, 1e6, 2e6), parts);
  const std::vector<SimAction>& actions = model.plan(0).actions;
  std::vector<double> pieces;  // the forward's
  for (size_t i = 0; i < actions.size(); ++i) {
    if (actions[i].kind != ActionKind::kCompute || actions[i].phase != 1) continue;
    pieces.push_back(actions[i].ns);
    ASSERT_LT(i + 1, actions.size());
    EXPECT_EQ(actions[i + 1].kind, ActionKind::kCollective) << "after piece " << pieces.size();
    EXPECT_EQ(actions[i + 1].group, GroupKind::kTensor) << "after piece " << pieces.size();
  }
  ASSERT_GT(pieces.size(), 1u);
  for (double ns : pieces) EXPECT_NEAR(ns, pieces.front(), 1e-6);
  // Under a pipeline, a pass's pieces make one span.
  const JobSpec staged = spiralsJob({"parallel.ranks=4", "parallel.pipeline=2", "parallel.tensor=2",
                                     "parallel.microbatches=2", layers});
  ModelParts staged_parts(staged);
  const StepModel staged_model(staged, uniformCalibration(staged, 1e6, 2e6), staged_parts);
  StepReplay replay(staged_model);
  std::vector<double> clock(4, 0.0);
  std::vector<SimStep> steps;
  replay.run(clock, std::vector<double>(4, 0.0), steps, true);
  for (const SimStep& step : steps) EXPECT_EQ(step.passes.size(), 4u);  // 2 micro-batches x 2
}

// fault.moving_straggler_ms: each step one rank, drawn as every real rank draws it, sleeps.
TEST(Simulator, AMovingStragglerSlowsTheDrawnRankEachStep) {
  const JobSpec job = spiralsJob({"parallel.ranks=8", "fault.moving_straggler_ms=5"});
  CollectedRows rows;
  simulateRun(job, uniformCalibration(job, 1e5, 1e5), {20, 1}, rows);
  std::set<int> slowed;
  for (const StepRow& row : rows.steps) {
    const bool drawn = movingStragglerAt(job, row.step, 8) == row.rank;
    EXPECT_EQ(row.backward_ns >= 5'000'000, drawn) << "step " << row.step << " rank " << row.rank;
    if (drawn) slowed.insert(row.rank);
  }
  EXPECT_GE(slowed.size(), 4u);  // it moves
}

// An update runs at its own size's rate (a part that fits the caches is faster per parameter
// than 1 Mi parameters), read back from the file; a prefetched batch costs the step nothing,
// one the step loads itself its copy.
TEST(Simulator, AnUpdateRunsAtItsSizesRateAndAPrefetchedBatchIsFree) {
  const JobSpec job = spiralsJob({"parallel.ranks=1"});
  Calibration c = uniformCalibration(job, 0, 0);
  c.update_ns_per_param["sgd"] = 1.0;
  const double params = static_cast<double>(ModelParts(job).part(0, 0).parameterCount());
  EXPECT_NEAR(predictRun(job, c).step_s * 1e9, params, 1);  // a file without sizes
  c.update_by_size["sgd"] = {{params / 10, 0.2}, {params * 10, 0.6}};
  EXPECT_NEAR(predictRun(job, c).step_s * 1e9, 0.4 * params, 1);  // halfway in log size
  const Calibration back = parseCalibration(calibrationJson(c), "cal.json");
  EXPECT_NEAR(predictRun(job, back).step_s * 1e9, 0.4 * params, 1);
  c.data_ns_per_byte = 1;
  EXPECT_NEAR(predictRun(job, c).step_s * 1e9, 0.4 * params, 1);
  const JobSpec loads = spiralsJob({"parallel.ranks=1", "data.prefetch=0"});
  const double batch_bytes = 32.0 * 2 * 4;  // 32 samples of 2 floats
  EXPECT_NEAR(predictRun(loads, c).step_s * 1e9, 0.4 * params + batch_bytes, 1);
}

TEST(Simulator, ACalibrationReadsBackAndABadOneIsRefusedNamingTheField) {
  const JobSpec job = spiralsJob({"parallel.ranks=2"});
  const Calibration c = uniformCalibration(job, 1e6, 2e6);
  const Calibration back = parseCalibration(calibrationJson(c), "cal.json");
  EXPECT_EQ(back.layers.size(), c.layers.size());
  EXPECT_EQ(back.links.size(), c.links.size());
  EXPECT_DOUBLE_EQ(predictRun(job, back).step_s, predictRun(job, c).step_s);
  std::string text = calibrationJson(c);
  text.replace(text.find("\"cores\""), 7, "\"corez\"");
  try {
    parseCalibration(text, "cal.json");
    FAIL() << "a calibration without cores was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cal.json: field \"cores\" is missing"), std::string::npos)
        << e.what();
  }
}

TEST(Simulator, AJobThatIsNotModelledIsRefusedNamingTheKey) {
  const JobSpec job = spiralsJob({"parallel.ranks=2", "parallel.strategy=\"local-sgd\""});
  try {
    predictRun(job, uniformCalibration(spiralsJob({"parallel.ranks=2"}), 1e6, 1e6));
    FAIL() << "local SGD was simulated";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("parallel.strategy"), std::string::npos) << e.what();
  }
}

// A tensor slice's activations as the estimate (and so the simulation) counts them: what its
// layers hold after a training pass (the column-parallel output and its ReLU a slice's, the
// g all-reduce's whole copy).
TEST(Simulator, ATensorSlicesActivationsAreWhatItsLayersHold) {
  const JobSpec job = spiralsJob({"parallel.ranks=2", "parallel.tensor=2"});
  ModelParts parts(job);
  Network& part = parts.part(0, 0);
  const int rows = job.train.batch_size;
  std::vector<float> x(static_cast<size_t>(rows) * part.inputShape().size(), 0.5f);
  std::vector<uint8_t> labels(static_cast<size_t>(rows), 1);
  part.forward(x.data(), labels.data(), rows);
  part.backward(x.data(), labels.data(), rows);
  size_t held = 0;
  for (const LayerMemory& layer : part.memoryPerLayer()) held += layer.activations;
  EXPECT_EQ(estimateMemory(job, false).ranks[0].activations, held);
}

// PowerSGD's buffers as the estimate (and so the simulation) counts them, and its bytes as
// the simulation sends them: what the engine's own sync holds and sends on the part.
TEST(Simulator, PowerSgdHoldsAndSendsWhatItsSyncDoes) {
  const JobSpec job = spiralsJob({"parallel.ranks=2", "compression.codec=\"powersgd\""});
  ModelParts parts(job);
  Network& part = parts.part(0, 0);
  SilentPeers peers(0, 2);
  auto sync = makeGradientSync(job, peers, weightMatrices(part)).sync;
  std::vector<float> params(part.parameterCount());
  sync->start(params.data(), params.size());
  EXPECT_GT(sync->bufferBytesHeld(), 0u);
  EXPECT_EQ(estimateMemory(job, false).ranks[0].buffers, sync->bufferBytesHeld());
  // Its bytes: what the sync sends (its two sums), and the uncompressed ring's as bytes_raw.
  std::vector<float> grads(params.size(), 1e-3f);
  const SyncStats sent = sync->sync(grads.data(), grads.size());
  Calibration c = uniformCalibration(job, 1e5, 1e5);
  c.codecs[describeCompression(codecOptions(job))] = {0, 0, 0, 1};
  CollectedRows rows;
  simulateRun(job, c, {2, 1}, rows);
  ASSERT_FALSE(rows.steps.empty());
  for (const StepRow& row : rows.steps) {
    EXPECT_EQ(row.bytes_tx, sent.bytes_tx) << "rank " << row.rank;
    EXPECT_EQ(row.bytes_raw, sent.bytes_raw) << "rank " << row.rank;
  }
}

}  // namespace
}  // namespace ranklab
