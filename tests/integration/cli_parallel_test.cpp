// The `ranklab` CLI end to end over parallel layouts: pipelines, ZeRO, tensor slices, all
// three at once, and the GPT on them; real mpirun, real ranks, a real run store file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/integration/cli_runner.h"

namespace {

using ranklab::testing::sourceDir;

ranklab::testing::CliResult run(const std::string& args) {
  return ranklab::testing::runCli(args, "");
}

class Cli : public ranklab::testing::CliTest {
 protected:
  // The store's run `id` (the test's id-th run), as `runs show --json`.
  nlohmann::json shown(int id) const {
    const auto r = run("runs show " + std::to_string(id) + " --json --db " + db());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
  }
  // Runs resources/jobs/NAME.toml with `settings` (" --set k=v ..."); its summary, as the
  // store's run `id`.
  nlohmann::json runPreset(const std::string& name, const std::string& settings, int id) const {
    const auto r = run("run " + sourceDir() + "/resources/jobs/" + name + ".toml" + settings +
                       " --quiet --db " + db());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return shown(id);
  }
  // Runs resources/jobs/NAME.toml on its first 3200 training samples; its summary.
  nlohmann::json runPresetOn3200Samples(const std::string& name, int id = 1) const {
    return runPreset(name, " --set data.train_limit=3200 --set data.test_limit=1000", id);
  }
  std::string file(const std::string& name, const std::string& text) const {
    const auto path = folder_.file(name);
    std::ofstream(path) << text;
    return path;
  }
};

// Each group's bytes per step as its formula says: the data ring's, f and g's, the
// activations and gradients between the stages.
void expectTrafficAsTheFormulas(const nlohmann::json& summary) {
  for (const auto& rank : summary["ranks"]) {
    for (const char* group : {"data", "tensor", "pipeline"}) {
      const auto& t = rank["traffic"][group];
      ASSERT_TRUE(t["formula"].is_number()) << group << " " << rank.dump();
      EXPECT_GT(t["formula"].get<double>(), 0) << group;
      EXPECT_NEAR(t["measured"].get<double>(), t["formula"].get<double>(),
                  1e-3 * t["formula"].get<double>())
          << group << " rank " << rank["rank"];
    }
  }
}

// A pipeline preset over real mpirun ranks: both stages report every step, the samples
// are counted once per replica, activations cross between the ranks, and the run learns.
TEST_F(Cli, PipelinePresetTrainsOnTwoStages) {
  const auto s = runPresetOn3200Samples("pipeline-1f1b");
  EXPECT_EQ(s["status"], "done");
  EXPECT_EQ(s["world"], 2);
  EXPECT_EQ(s["steps"], 3200 / 128);
  EXPECT_EQ(s["samples"], 3200 / 128 * 128);
  EXPECT_GT(s["test_accuracy"].get<double>(), 0.3);  // 10 classes: chance is 0.1
  EXPECT_EQ(s["layout"]["data"], 1);
  EXPECT_EQ(s["layout"]["pipeline"], 2);
  EXPECT_EQ(s["layout"]["schedule"], "1f1b");
  EXPECT_EQ(s["layout"]["microbatches"], 8);
  EXPECT_DOUBLE_EQ(s["bubble_formula"].get<double>(), 1.0 / 9);
  const double bubble = s["bubble_fraction"].get<double>();
  EXPECT_GT(bubble, 0);
  EXPECT_LT(bubble, 1);
  ASSERT_EQ(s["ranks"].size(), 2u);
  for (const auto& rank : s["ranks"]) {
    EXPECT_EQ(rank["steps"], s["steps"]) << rank.dump();
    EXPECT_GT(rank["bytes_tx"].get<int64_t>(), 0) << rank.dump();
    // 1F1B, 2 stages, 8 micro-batches: stage 0 holds 2, stage 1 one at a time.
    EXPECT_EQ(rank["stashed_peak"], rank["rank"] == 0 ? 2 : 1) << rank.dump();
    EXPECT_GT(rank["activations_peak_bytes"].get<int64_t>(), 0) << rank.dump();
  }
}

// ZeRO 2 and 3 over real mpirun ranks: each rank's ledger holds half of Adam's state and
// half of the gradients (and under 3 of the parameters) plus one layer's scratch; one
// reduce-scatter per layer and one all-gather per step (3: two per layer); the run learns.
TEST_F(Cli, ZeroPresetShardsTheLedgerAcrossRealRanks) {
  const auto s = runPresetOn3200Samples("zero-2");
  EXPECT_EQ(s["status"], "done");
  EXPECT_EQ(s["layout"]["zero"], 2);
  EXPECT_GT(s["test_accuracy"].get<double>(), 0.3);
  const int64_t params = 784 * 1024 + 1024 + 3 * (1024 * 1024 + 1024) + 1024 * 10 + 10;
  const int64_t largest = 1024 * 1024 + 1024;
  ASSERT_EQ(s["ranks"].size(), 2u);
  int64_t optimizer = 0;
  for (const auto& rank : s["ranks"]) {
    const auto& memory = rank["memory"];
    EXPECT_EQ(memory["params"], 4 * params) << rank.dump();
    EXPECT_EQ(memory["grads"], 4 * (params / 2)) << rank.dump();
    EXPECT_EQ(memory["buffers"], 4 * largest) << "one layer's gradient scratch: " << rank.dump();
    EXPECT_GT(memory["activations_peak"].get<int64_t>(), 0) << rank.dump();
    optimizer += memory["optimizer"].get<int64_t>();
    EXPECT_EQ(rank["collectives"]["reduce_scatter"], 5) << rank.dump();
    EXPECT_EQ(rank["collectives"]["all_gather"], 1) << rank.dump();
    EXPECT_EQ(rank["collectives"]["allreduce"], 0) << rank.dump();
  }
  EXPECT_EQ(optimizer, 8 * params);
  // ZeRO 3: half the parameters, one layer's scratch for them and one for its gradients;
  // every layer gathered twice.
  const auto z3 = runPresetOn3200Samples("zero-3", 2);
  EXPECT_GT(z3["test_accuracy"].get<double>(), 0.3);
  for (const auto& rank : z3["ranks"]) {
    EXPECT_EQ(rank["memory"]["params"], 4 * (params / 2)) << rank.dump();
    EXPECT_EQ(rank["memory"]["buffers"], 2 * 4 * largest) << rank.dump();
    EXPECT_EQ(rank["collectives"]["all_gather"], 10) << rank.dump();
    EXPECT_EQ(rank["collectives"]["reduce_scatter"], 5) << rank.dump();
  }
  EXPECT_EQ(z3["test_accuracy"], s["test_accuracy"]) << "bit-equal training, same evaluation";
}

// Tensor parallelism over real mpirun ranks: each rank holds half of the split layers,
// takes part in 3 all-reduces a step (2 forward, 1 backward), counts the batch once, and the
// run learns; data x tensor on 4 ranks adds the replicas' gradient all-reduce.
TEST_F(Cli, TensorParallelPresetsSplitTheLayersAcrossRealRanks) {
  const auto s = runPresetOn3200Samples("tensor-parallel");
  EXPECT_EQ(s["status"], "done");
  EXPECT_EQ(s["layout"]["tensor"], 2);
  EXPECT_EQ(s["layout"]["data"], 1);
  EXPECT_EQ(s["samples"], 3200 / 128 * 128);
  EXPECT_GT(s["test_accuracy"].get<double>(), 0.3);
  // fc0, fc2: half the rows and the bias; fc1, fc3: half the columns, the whole bias; fc4
  // whole.
  const int64_t params = (784 * 512 + 512) + (1024 * 512 + 1024) + (1024 * 512 + 512) +
                         (1024 * 512 + 1024) + (1024 * 10 + 10);
  ASSERT_EQ(s["ranks"].size(), 2u);
  for (const auto& rank : s["ranks"]) {
    EXPECT_EQ(rank["memory"]["params"], 4 * params) << rank.dump();
    EXPECT_EQ(rank["collectives"]["allreduce"], 3) << rank.dump();
  }
  const auto h = runPresetOn3200Samples("hybrid-dp-tp", 2);
  EXPECT_EQ(h["layout"]["data"], 2);
  EXPECT_EQ(h["samples"], 3200 / 2 / 64 * 64 * 2);
  EXPECT_GT(h["test_accuracy"].get<double>(), 0.3);
  for (const auto& rank : h["ranks"]) EXPECT_EQ(rank["collectives"]["allreduce"], 4);
}

// Data x pipeline x tensor over 8 real ranks: each rank a slice of one stage of one
// replica, each replica's samples counted once; the run learns.
TEST_F(Cli, ThreeDimensionsRunOnRealRanks) {
  const auto s = runPresetOn3200Samples("hybrid-3d");
  EXPECT_EQ(s["status"], "done");
  EXPECT_EQ(s["world"], 8);
  EXPECT_EQ(s["layout"]["data"], 2);
  EXPECT_EQ(s["layout"]["pipeline"], 2);
  EXPECT_EQ(s["layout"]["tensor"], 2);
  EXPECT_EQ(s["samples"], 3200 / 2 / 64 * 64 * 2);
  EXPECT_GT(s["test_accuracy"].get<double>(), 0.3);
  ASSERT_EQ(s["ranks"].size(), 8u);
  expectTrafficAsTheFormulas(s);
  for (const auto& rank : s["ranks"]) EXPECT_GT(rank["collectives"]["allreduce"], 0) << rank.dump();
}

// Each step's gradient norms over the ranks, from a run's exported step rows (CSV).
std::map<std::string, std::set<std::string>> normsByStep(const std::string& csv) {
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  const auto cells = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string cell; std::getline(in, cell, ',');) out.push_back(cell);
    return out;
  };
  const std::vector<std::string> header = cells(line);
  const auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const size_t step = column("step"), norm = column("grad_norm");
  EXPECT_LT(norm, header.size()) << line;
  std::map<std::string, std::set<std::string>> norms;
  while (std::getline(lines, line)) {
    const std::vector<std::string> row = cells(line);
    if (norm < header.size() && row.size() == header.size()) norms[row[step]].insert(row[norm]);
  }
  return norms;
}

// A GPT's blocks split over 2 real ranks, in 2 replicas with ZeRO 3 (its token table held
// for the step), clipped: every rank measures the same norm, and the slices of both
// replicas draw the sample together (each layer is gathered from both).
TEST_F(Cli, AGptSplitByHeadsRunsOnRealRanks) {
  const auto g = runPreset("gpt-char",
                           " --set parallel.ranks=4 --set parallel.tensor=2 --set parallel.zero=3"
                           " --set train.max_steps=12 --set train.eval_every=6"
                           " --set train.eval_batches=2 --set model.blocks=1"
                           " --set train.sample_chars=20",
                           1);
  EXPECT_EQ(g["status"], "done");
  EXPECT_EQ(g["layout"]["tensor"], 2);
  EXPECT_EQ(g["steps"], 12);
  EXPECT_EQ(g["sample"]["step"], 12) << "the replicas' slices drew it together";
  const auto csv = run("runs export 1 --csv - --db " + db());
  ASSERT_EQ(csv.exit_code, 0) << csv.out;
  const auto norms_by_step = normsByStep(csv.out);
  ASSERT_EQ(norms_by_step.size(), 12u);
  for (const auto& [at, norms] : norms_by_step) {
    EXPECT_EQ(norms.size(), 1u) << "step " << at << ": every rank the same norm";
    EXPECT_GT(std::stod(*norms.begin()), 0.0) << "step " << at;
  }
}

// The GPT in 3D: 2 replicas x 2 stages x 2 slices with ZeRO 1 on 8 real ranks; its
// checkpoint (the whole model) resumed on one replica's 4.
TEST_F(Cli, AGptInThreeDimensionsRunsOnRealRanks) {
  const auto g3 = runPreset("gpt-3d",
                            " --set train.max_steps=6 --set train.eval_batches=1 "
                            "--set model.blocks=2 --set train.checkpoint_path=\"" +
                                folder_.file("gpt.ckpt") + "\"",
                            1);
  EXPECT_EQ(g3["status"], "done");
  EXPECT_EQ(g3["world"], 8);
  EXPECT_EQ(g3["layout"]["data"], 2);
  EXPECT_EQ(g3["layout"]["pipeline"], 2);
  EXPECT_EQ(g3["layout"]["tensor"], 2);
  EXPECT_EQ(g3["steps"], 6);
  EXPECT_EQ(g3["sample"]["step"], 6) << "drawn through the stages";
  expectTrafficAsTheFormulas(g3);
  // The memory ledger per layer: stage 0's embedding and block, stage 1's block, final
  // LayerNorm, head and loss, each as its formula says (1F1B: stage 0 holds 2 copies).
  for (const auto& rank : g3["ranks"]) {
    ASSERT_FALSE(rank["activations"].empty()) << rank.dump();
    for (const auto& layer : rank["activations"]) {
      ASSERT_TRUE(layer["formula"].is_number()) << layer.dump();
      EXPECT_NEAR(layer["bytes"].get<double>(), layer["formula"].get<double>(),
                  0.05 * layer["formula"].get<double>())
          << "rank " << rank["rank"] << " " << layer.dump();
    }
  }
  EXPECT_LT(g3["test_loss"].get<double>(), 5.6) << "below a uniform guess's ln 256";
  const auto resumed = run("resume 1 --ranks 4 --set train.max_steps=9 --quiet --db " + db());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  const auto one = shown(2);
  EXPECT_EQ(one["status"], "done");
  EXPECT_EQ(one["layout"]["data"], 1);
  EXPECT_EQ(one["steps"], 3) << "steps 7 to 9";
  EXPECT_LT(one["test_loss"].get<double>(), g3["test_loss"].get<double>() + 0.2);
}

// The gpt-char preset, cut to 2 of its 5 epochs: its validation loss ends below the bigram
// model's counted on the same training split, and runs show prints both and tokens/s.
TEST_F(Cli, GptCharLearnsMoreThanPairsOfBytes) {
  const auto s = runPreset("gpt-char", " --set train.epochs=2 --set train.eval_every=0", 1);
  ASSERT_TRUE(s["bigram_baseline"].is_number()) << s.dump();
  const double baseline = s["bigram_baseline"].get<double>(), loss = s["val_loss"].get<double>();
  std::printf("gpt-char, 2 epochs: validation loss %.4f, bigram baseline %.4f, %.0f tokens/s\n",
              loss, baseline, s["tokens_per_s"].get<double>());
  EXPECT_GT(baseline, 2.0);  // a bigram model of English verse: about 2.5 nats
  EXPECT_LT(loss, baseline);
  EXPECT_DOUBLE_EQ(s["tokens_per_s"].get<double>(), s["samples_per_s"].get<double>() * 64);
  const auto text = run("runs show 1 --db " + db());
  EXPECT_NE(text.out.find("against a bigram model's"), std::string::npos) << text.out;
}

// Data x pipeline over 4 real ranks: two replicas of two stages, each replica's samples
// counted once, and activations reported as sent uncompressed (no false codec ratio).
TEST_F(Cli, HybridPresetRunsTwoPipelinesSideBySide) {
  const auto s = runPresetOn3200Samples("hybrid-dp-pp");
  EXPECT_EQ(s["world"], 4);
  EXPECT_EQ(s["layout"]["data"], 2);
  EXPECT_EQ(s["layout"]["pipeline"], 2);
  EXPECT_EQ(s["steps"], 3200 / 2 / 64);
  EXPECT_EQ(s["samples"], 3200 / 2 / 64 * 64 * 2);
  EXPECT_EQ(s["bytes_raw"], s["bytes_tx"]);
  EXPECT_GT(s["test_accuracy"].get<double>(), 0.3);
}

TEST_F(Cli, PipelineKeysThatCannotWorkAreNamed) {
  const std::pair<std::string, std::string> cases[] = {
      {"ranks = 3\npipeline = 2\n", "parallel.pipeline: must divide parallel.ranks (3)"},
      {"ranks = 4\npipeline = 4\n", "must be at most the model's 2 blocks"},
      {"ranks = 2\npipeline = 2\nstrategy = \"ps-sync\"\n",
       "needs parallel.strategy = \"allreduce\""},
      {"ranks = 2\npipeline = 2\nschedule = \"zigzag\"\n", "one of: gpipe, 1f1b"}};
  for (const auto& [parallel, expected] : cases) {
    const auto job = file("pp.toml", "[model]\nlayers = [32]\n[parallel]\n" + parallel);
    const auto r = run("validate " + job);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find(expected), std::string::npos) << r.out;
  }
}

// The GPT preset on 2 ranks for 40 steps: it learns the verse (from ln 256 = 5.55 nats per
// token, a uniform guess, to well under 4 on the validation tenth) and every rank's steps
// are stored.
TEST_F(Cli, TheGptPresetLearnsTextOnTwoRanks) {
  const std::string job = sourceDir() + "/resources/jobs/gpt-char.toml";
  const auto r = run("run " + job + " --set train.max_steps=40 --quiet --db " + db());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto shown = nlohmann::json::parse(run("runs show 1 --json --db " + db()).out);
  std::printf("gpt-char 2 ranks, 40 steps: validation loss %.3f nats/token, %.0f samples/s\n",
              shown["test_loss"].get<double>(), shown["samples_per_s"].get<double>());
  EXPECT_EQ(shown["status"], "done");
  EXPECT_EQ(shown["world"], 2);
  EXPECT_EQ(shown["steps"], 40);
  EXPECT_LT(shown["test_loss"].get<double>(), 4.0);
  EXPECT_GT(shown["test_accuracy"].get<double>(), 0.1);
  // The first rank's text at the evaluation: the newline it starts from and 200 bytes.
  ASSERT_TRUE(shown["sample"].is_object()) << shown.dump();
  EXPECT_EQ(shown["sample"]["step"], 40);
  EXPECT_EQ(shown["sample"]["text"].get<std::string>().front(), '\n');
  EXPECT_GE(shown["sample"]["text"].get<std::string>().size(), 201u);
  // The first step's loss is a uniform guess's, in nats per token: ln 256.
  const auto csv = run("runs export 1 --csv - --db " + db());
  std::istringstream rows(csv.out);
  std::string header, first;
  std::getline(rows, header);
  std::getline(rows, first);
  const auto column = [](const std::string& line, size_t index) {
    std::istringstream cells(line);
    std::string cell;
    for (size_t i = 0; i <= index && std::getline(cells, cell, ','); ++i) {
    }
    return cell;
  };
  size_t loss_index = 0;
  for (std::istringstream names(header); std::getline(names, header, ',') && header != "loss";)
    ++loss_index;
  EXPECT_NEAR(std::stod(column(first, loss_index)), std::log(256.0), 0.1) << first;
}

}  // namespace
