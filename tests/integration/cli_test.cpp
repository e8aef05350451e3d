// The `ranklab` CLI end to end: real mpirun, real ranks, a real run store file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/integration/cli_runner.h"
#include "tests/support/process_lookup.h"

namespace {

namespace fs = std::filesystem;

using ranklab::testing::lastJson;
using ranklab::testing::sourceDir;

ranklab::testing::CliResult run(const std::string& args, const std::string& prefix = "") {
  return ranklab::testing::runCli(args, prefix);
}

// The runs this test started in the background.
std::vector<pid_t>& launched() {
  static std::vector<pid_t> pids;
  return pids;
}

void stopLaunchedRuns();

class Cli : public ranklab::testing::CliTest {
 protected:
  void TearDown() override { stopLaunchedRuns(); }
  // Runs resources/jobs/NAME.toml on its first 3200 training samples; `runs show --json`.
  // The preset run as the store's run `id` (the test's id-th run), as `runs show --json`.
  nlohmann::json runPresetOn3200Samples(const std::string& name, int id = 1) const {
    const std::string job = sourceDir() + "/resources/jobs/" + name + ".toml";
    const auto r = run("run " + job + " --set data.train_limit=3200 --set data.test_limit=1000" +
                       " --quiet --db " + db());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    const auto shown = run("runs show " + std::to_string(id) + " --json --db " + db());
    EXPECT_EQ(shown.exit_code, 0) << shown.out;
    return shown.exit_code == 0 ? nlohmann::json::parse(shown.out) : nlohmann::json::object();
  }
  std::string file(const std::string& name, const std::string& text) const {
    const auto path = folder_.file(name);
    std::ofstream(path) << text;
    return path;
  }
};

// The acceptance run: 4 ranks, 2 epochs, >= 0.85 test accuracy, steps from every rank.
TEST_F(Cli, QuickstartOnFourRanksReachesTheTargetAccuracy) {
  const auto r = run("run " + quickstart() + " --ranks 4 --quiet --db " + db());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto shown = run("runs show 1 --json --db " + db());
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  const auto s = nlohmann::json::parse(shown.out);
  std::printf("quickstart 4 ranks: test accuracy %.4f, %.0f samples/s, wall %.1f s\n",
              s["test_accuracy"].get<double>(), s["samples_per_s"].get<double>(),
              s["wall_s"].get<double>());
  EXPECT_EQ(s["status"], "done");
  EXPECT_EQ(s["world"], 4);
  EXPECT_EQ(s["strategy"], "allreduce");
  EXPECT_EQ(s["algorithm"], "ring");
  EXPECT_EQ(s["codec"], "none");
  EXPECT_EQ(s["amp"], "fp32");
  EXPECT_EQ(s["epochs"], 2);
  EXPECT_EQ(s["layout"]["data"], 4);
  EXPECT_EQ(s["layout"]["schedule"], "data-parallel");
  EXPECT_TRUE(s["bubble_fraction"].is_null());
  EXPECT_GE(s["test_accuracy"].get<double>(), 0.85);
  EXPECT_GT(s["samples_per_s"].get<double>(), 0);
  EXPECT_GT(s["wall_s"].get<double>(), s["train_s"].get<double>());
  ASSERT_EQ(s["ranks"].size(), 4u);
  for (const auto& rank : s["ranks"]) {
    EXPECT_EQ(rank["steps"], s["steps"]) << rank.dump();
    EXPECT_GT(rank["bytes_tx"].get<int64_t>(), 0);
    EXPECT_GT(rank["comm_s"].get<double>(), 0);
    EXPECT_GT(rank["compute_s"].get<double>(), 0);
  }
  EXPECT_EQ(s["steps"].get<int64_t>(), 2 * (60000 / 4 / 64));
  EXPECT_EQ(s["samples"].get<int64_t>(), 4 * s["steps"].get<int64_t>() * 64);
}

TEST_F(Cli, MpiAlgorithmWithOverridesAndJsonOutput) {
  const auto r = run("run " + quickstart() +
                     " --ranks 2 --set parallel.algorithm=mpi --set data.train_limit=6400"
                     " --set data.test_limit=1000 --set train.epochs=1 --quiet --json --db " +
                     db());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto s = lastJson(r.out);
  EXPECT_EQ(s["algorithm"], "mpi");
  EXPECT_EQ(s["world"], 2);
  EXPECT_EQ(s["steps"], 6400 / 2 / 64);
  const auto list = run("runs list --json --db " + db());
  ASSERT_EQ(list.exit_code, 0) << list.out;
  EXPECT_EQ(nlohmann::json::parse(list.out).size(), 1u);
}

TEST_F(Cli, ValidateNamesLineKeyAndAllowedValues) {
  const auto job =
      file("bad.toml", "[train]\nepochs = 2\nbatchsize = 64\n\n[parallel]\nalgorithm = \"tree\"\n");
  const auto r = run("validate " + job + " --db " + db());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("bad.toml:3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("train.batchsize"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("batch_size"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bad.toml:6"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ring, mpi, hierarchical"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(db())) << "validate must not create a run";
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
// replica, each replica's samples counted once; the run learns. A GPT's blocks split over 2
// real ranks, in 2 replicas with ZeRO 1, clipped: every rank measures the same norm. And the
// GPT in all three dimensions on 8 real ranks.
TEST_F(Cli, ThreeDimensionsAndAGptSplitByHeadsRunOnRealRanks) {
  const auto s = runPresetOn3200Samples("hybrid-3d");
  EXPECT_EQ(s["status"], "done");
  EXPECT_EQ(s["world"], 8);
  EXPECT_EQ(s["layout"]["data"], 2);
  EXPECT_EQ(s["layout"]["pipeline"], 2);
  EXPECT_EQ(s["layout"]["tensor"], 2);
  EXPECT_EQ(s["samples"], 3200 / 2 / 64 * 64 * 2);
  EXPECT_GT(s["test_accuracy"].get<double>(), 0.3);
  ASSERT_EQ(s["ranks"].size(), 8u);
  // Each group's bytes per step as its formula says: the data ring's, f and g's, the
  // activations and gradients between the stages.
  const auto expectTrafficAsTheFormulas = [](const nlohmann::json& run) {
    for (const auto& rank : run["ranks"]) {
      for (const char* group : {"data", "tensor", "pipeline"}) {
        const auto& t = rank["traffic"][group];
        ASSERT_TRUE(t["formula"].is_number()) << group << " " << rank.dump();
        EXPECT_GT(t["formula"].get<double>(), 0) << group;
        EXPECT_NEAR(t["measured"].get<double>(), t["formula"].get<double>(),
                    1e-3 * t["formula"].get<double>())
            << group << " rank " << rank["rank"];
      }
    }
  };
  expectTrafficAsTheFormulas(s);
  for (const auto& rank : s["ranks"]) EXPECT_GT(rank["collectives"]["allreduce"], 0) << rank.dump();

  const std::string gpt = sourceDir() + "/resources/jobs/gpt-char.toml";
  const auto r = run("run " + gpt +
                     " --set parallel.ranks=4 --set parallel.tensor=2 --set parallel.zero=1"
                     " --set train.max_steps=12 --set train.eval_every=6 --set train.eval_batches=2"
                     " --set model.blocks=1 --set train.sample_chars=20 --quiet --db " +
                     db());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto shown = run("runs show 2 --json --db " + db());
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  const auto g = nlohmann::json::parse(shown.out);
  EXPECT_EQ(g["status"], "done");
  EXPECT_EQ(g["layout"]["tensor"], 2);
  EXPECT_EQ(g["steps"], 12);
  EXPECT_EQ(g["sample"]["step"], 12) << "the first replica's slices drew it together";
  const auto csv = run("runs export 2 --csv - --db " + db());
  ASSERT_EQ(csv.exit_code, 0) << csv.out;
  std::istringstream lines(csv.out);
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
  ASSERT_LT(norm, header.size()) << line;
  std::map<std::string, std::set<std::string>> norms_by_step;
  while (std::getline(lines, line)) {
    const std::vector<std::string> row = cells(line);
    if (row.size() == header.size()) norms_by_step[row[step]].insert(row[norm]);
  }
  ASSERT_EQ(norms_by_step.size(), 12u);
  for (const auto& [at, norms] : norms_by_step) {
    EXPECT_EQ(norms.size(), 1u) << "step " << at << ": every rank the same norm";
    EXPECT_GT(std::stod(*norms.begin()), 0.0) << "step " << at;
  }

  // The GPT in 3D: 2 replicas x 2 stages x 2 slices on 8 real ranks.
  const auto d3 = run("run " + sourceDir() + "/resources/jobs/gpt-3d.toml" +
                      " --set train.max_steps=6 --set train.eval_batches=1 --set model.blocks=2"
                      " --quiet --db " +
                      db());
  ASSERT_EQ(d3.exit_code, 0) << d3.out;
  const auto shown3 = run("runs show 3 --json --db " + db());
  ASSERT_EQ(shown3.exit_code, 0) << shown3.out;
  const auto g3 = nlohmann::json::parse(shown3.out);
  EXPECT_EQ(g3["status"], "done");
  EXPECT_EQ(g3["world"], 8);
  EXPECT_EQ(g3["layout"]["data"], 2);
  EXPECT_EQ(g3["layout"]["pipeline"], 2);
  EXPECT_EQ(g3["layout"]["tensor"], 2);
  EXPECT_EQ(g3["steps"], 6);
  EXPECT_EQ(g3["sample"]["step"], 6) << "drawn through the stages";
  expectTrafficAsTheFormulas(g3);
  EXPECT_LT(g3["test_loss"].get<double>(), 5.6) << "below a uniform guess's ln 256";
}

// The gpt-char preset, cut to 2 of its 5 epochs: its validation loss ends below the bigram
// model's counted on the same training split, and runs show prints both and tokens/s.
TEST_F(Cli, GptCharLearnsMoreThanPairsOfBytes) {
  const auto r = run("run " + sourceDir() + "/resources/jobs/gpt-char.toml" +
                     " --set train.epochs=2 --set train.eval_every=0 --quiet --db " + db());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto shown = run("runs show 1 --json --db " + db());
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  const auto s = nlohmann::json::parse(shown.out);
  ASSERT_TRUE(s["bigram_baseline"].is_number()) << shown.out;
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

// train.device = "cuda": refused with the reason and nothing stored where no GPU can be
// used; where one can, each Fashion-MNIST data-parallel preset trains on it, one rank, 40
// steps, to the end.
TEST_F(Cli, GpuJobsRunWhereAGpuIsAndAreRefusedWithTheReasonWhereNone) {
  const auto check = run("validate " + quickstart() + " --set train.device=cuda");
  if (check.exit_code != 0) {
    EXPECT_EQ(check.exit_code, 2) << check.out;
    EXPECT_NE(check.out.find("train.device: \"cuda\" needs a GPU, but "), std::string::npos)
        << check.out;
    const auto r = run("run " + quickstart() + " --set train.device=cuda --quiet --db " + db());
    EXPECT_EQ(r.exit_code, 2) << r.out;
    const auto listed = run("runs list --json --db " + db());
    EXPECT_EQ(nlohmann::json::parse(listed.out).size(), 0u) << listed.out;
    return;
  }
  int id = 0;
  for (const std::string preset : {"quickstart", "fashion-mlp", "fashion-cnn"}) {
    const std::string job = sourceDir() + "/resources/jobs/" + preset + ".toml";
    const auto r = run("run " + job +
                       " --ranks 1 --set train.device=cuda --set train.max_steps=40"
                       " --set data.train_limit=3200 --set data.test_limit=1000 --quiet --db " +
                       db());
    EXPECT_EQ(r.exit_code, 0) << preset << "\n" << r.out;
    const auto shown = nlohmann::json::parse(
        run("runs show " + std::to_string(++id) + " --json --db " + db()).out);
    EXPECT_EQ(shown["status"], "done") << preset;
    EXPECT_GT(shown["test_accuracy"].get<double>(), 0.3) << preset;
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

TEST_F(Cli, ValidAJobPassesValidate) {
  const auto r = run("validate " + quickstart());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("valid"), std::string::npos) << r.out;
}

TEST_F(Cli, MissingDatasetFailsClearlyAndTheRunIsKept) {
  const auto r = run("run " + quickstart() +
                     " --ranks 2 --set data.path=/nonexistent/fmnist --quiet --db " + db());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("/nonexistent/fmnist/train-images-idx3-ubyte.gz"), std::string::npos)
      << r.out;
  const auto shown = run("runs show 1 --json --db " + db());
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  EXPECT_EQ(nlohmann::json::parse(shown.out)["status"], "failed");
}

using ranklab::testing::startInBackground;

// Steps stored so far for run 1, or -1 while the run is not there yet.
int64_t storedSteps(const std::string& db) {
  const auto shown = run("runs show 1 --json --db " + db);
  if (shown.exit_code != 0) return -1;
  return nlohmann::json::parse(shown.out)["steps"].get<int64_t>();
}

// Starts a run that would last minutes; returns its pid once it has stored steps, or -1
// (with the reason on stderr) when it ended or stored nothing within two minutes.
pid_t startLongRunWithSteps(const std::string& db, const std::string& log,
                            const std::vector<std::string>& extra = {}) {
  const std::string job = sourceDir() + "/resources/jobs/quickstart.toml";
  std::vector<std::string> args{"run",     job,    "--ranks", "2", "--set", "train.epochs=100",
                                "--quiet", "--db", db};
  args.insert(args.end(), extra.begin(), extra.end());
  const pid_t pid = startInBackground(args, log);
  launched().push_back(pid);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (pid > 0 && storedSteps(db) <= 0) {
    int status = 0;
    const bool ended = waitpid(pid, &status, WNOHANG) == pid;
    if (ended || std::chrono::steady_clock::now() > deadline) {
      std::ifstream in(log);
      std::fprintf(stderr, "the long run %s before storing a step; its output:\n%s\n",
                   ended ? "ended" : "stored nothing in 120 s",
                   std::string(std::istreambuf_iterator<char>(in), {}).c_str());
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return pid;
}

// Stops and reaps every run a test started that is still going (Ctrl-C, then SIGKILL): a
// failed assertion used to leave a 100-epoch run loading the machine for the whole suite.
void stopLaunchedRuns() {
  for (const pid_t pid : launched()) {
    if (pid <= 0 || waitpid(pid, nullptr, WNOHANG) != 0) continue;  // reaped or gone
    kill(pid, SIGINT);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (waitpid(pid, nullptr, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  launched().clear();
}

// The pid of one ranklab-worker of the run `launcher` started, 0 if none. The launcher's job
// file is named after its pid; mpirun's command line is not a worker's.
int firstWorkerOf(pid_t launcher) {
  const auto workers = ranklab::testing::processesMatching("^[^ ]*ranklab-worker --job .*ranklab-" +
                                                           std::to_string(launcher) + "-");
  return workers.empty() ? 0 : workers.front();
}

TEST_F(Cli, InterruptStopsTheRanksAndKeepsWhatTheyReported) {
  // Ctrl-C once steps are being stored, in a job that would run for minutes.
  const pid_t pid = startLongRunWithSteps(db(), folder_.file("run.log"));
  ASSERT_GT(pid, 0);
  const auto interrupted = std::chrono::steady_clock::now();
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  const double stop_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - interrupted).count();
  std::ifstream log(folder_.file("run.log"));
  const std::string out((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 130) << "128 + SIGINT, as shells expect\n" << out;
  const auto shown = run("runs show 1 --json --db " + db());
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  const auto s = nlohmann::json::parse(shown.out);
  EXPECT_EQ(s["status"], "stopped");
  EXPECT_GT(s["steps"].get<int64_t>(), 0) << "steps recorded before the stop were lost";
  EXPECT_GT(s["samples_per_s"].get<double>(), 0) << "a stopped run still has a rate";
  EXPECT_LT(stop_s, 15.0) << "stop did not end the ranks promptly";
}

TEST_F(Cli, UnknownRunAndUnknownCommandAreClearErrors) {
  run("runs list --db " + db());
  const auto missing = run("runs show 42 --db " + db());
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.out.find("no run with id 42"), std::string::npos) << missing.out;
  const auto unknown = run("frobnicate");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.out.find("allowed: run, resume, validate, runs, compare, bench, version"),
            std::string::npos)
      << unknown.out;
}

// Issue 33, item 3: a run whose test loss went NaN was stored with test loss 0 and ranked
// best. Now it is "diverged" in the summary, the JSON and the comparison.
TEST_F(Cli, ADivergedRunIsShownDivergedNeverWithLossZero) {
  const std::string spirals = sourceDir() + "/resources/jobs/spirals.toml";
  const auto r = run("run " + spirals +
                     " --set train.epochs=1 --set train.optimizer='\"sgd\"' --set train.lr=10"
                     " --set train.momentum=0.99 --set 'model.layers=[4096,4096]' --quiet --db " +
                     db());
  EXPECT_NE(r.out.find("test loss diverged (not finite)"), std::string::npos) << r.out;
  const auto shown = run("runs show 1 --json --db " + db());
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  const auto json = nlohmann::json::parse(shown.out);
  EXPECT_EQ(json["diverged"], true);
  EXPECT_TRUE(json["test_loss"].is_null()) << json["test_loss"];
  const auto fine = run("run " + spirals + " --set train.epochs=1 --quiet --db " + db());
  ASSERT_EQ(fine.exit_code, 0) << fine.out;
  const auto compared = run("compare 1 2 --db " + db());
  EXPECT_NE(compared.out.find("diverged (not finite)"), std::string::npos) << compared.out;
}

// Issue 33, item 9: what used to be ignored or misread is refused, naming what is wrong.
TEST_F(Cli, StrayWordsEmptyStoresAndControlCharactersAreRefused) {
  const auto verb = run("runs frob --db " + db());
  EXPECT_EQ(verb.exit_code, 2);
  EXPECT_NE(verb.out.find("unknown runs verb \"frob\" (allowed: list, show,"), std::string::npos)
      << verb.out;
  const auto extra = run("validate " + quickstart() + " " + quickstart());
  EXPECT_EQ(extra.exit_code, 2);
  EXPECT_NE(extra.out.find("validate: unexpected argument"), std::string::npos) << extra.out;
  const auto list = run("runs list extra --db " + db());
  EXPECT_EQ(list.exit_code, 2);
  EXPECT_NE(list.out.find("runs list: unexpected argument \"extra\""), std::string::npos)
      << list.out;
  const auto empty_db = run("runs list --db ''");
  EXPECT_EQ(empty_db.exit_code, 2);
  EXPECT_NE(empty_db.out.find("--db: the path is empty"), std::string::npos) << empty_db.out;
  const auto escape = run("validate " + quickstart() + " --set 'name=\"\\u001b[31mRED\"'");
  EXPECT_EQ(escape.exit_code, 2);
  EXPECT_NE(escape.out.find("must not contain control characters (\\x1b at offset 0)"),
            std::string::npos)
      << escape.out;
}

// --ranks 0, -3 or "4x" used to be dropped silently and the job file's ranks ran instead.
TEST_F(Cli, BadRanksOptionIsAnErrorNotIgnored) {
  for (const std::string n : {"0", "-3", "1000"}) {
    const auto r = run("validate " + quickstart() + " --ranks " + n);
    EXPECT_EQ(r.exit_code, 2) << n << ": " << r.out;
    EXPECT_NE(r.out.find("parallel.ranks: must be 1..256, got " + n), std::string::npos) << r.out;
  }
  const auto trailing = run("validate " + quickstart() + " --ranks 4x");
  EXPECT_EQ(trailing.exit_code, 2) << trailing.out;
  EXPECT_NE(trailing.out.find("--ranks: \"4x\" is not a number (allowed: 1..256)"),
            std::string::npos)
      << trailing.out;
}

// --worlds 1000 used to start 1000 ranks; an empty list ran nothing and exited 0.
TEST_F(Cli, BenchRejectsHugeOrEmptyWorldListsAndBatchLengthsOutOfRange) {
  const auto huge = run("bench allreduce --worlds 1000", "timeout 20 ");
  EXPECT_EQ(huge.exit_code, 2) << huge.out;
  EXPECT_NE(huge.out.find("--worlds takes an integer 1..256, got \"1000\""), std::string::npos)
      << huge.out;
  for (const std::string flag : {"--worlds", "--algorithms"}) {
    const auto empty = run("bench allreduce " + flag + " ,", "timeout 20 ");
    EXPECT_EQ(empty.exit_code, 2) << empty.out;
    EXPECT_NE(empty.out.find(flag + " takes a comma-separated list, got \",\""), std::string::npos)
        << empty.out;
  }
  for (const std::string seconds : {"0", "61", "0.1s"}) {
    const auto bad = run("bench allreduce --seconds " + seconds, "timeout 20 ");
    EXPECT_EQ(bad.exit_code, 2) << bad.out;
    EXPECT_NE(bad.out.find("--seconds takes seconds > 0 and <= 60, got \"" + seconds + "\""),
              std::string::npos)
        << bad.out;
  }
}

// An unknown algorithm (or shm-sharded, a training algorithm) used to start the ranks, which
// aborted with nothing but mpirun's MPI_ABORT notice.
TEST_F(Cli, BenchRejectsAlgorithmsThatAreNotAllreduces) {
  for (const std::string algorithm : {"bogus", "shm-sharded"}) {
    const auto r = run("bench allreduce --worlds 2 --algorithms ring," + algorithm, "timeout 20 ");
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("--algorithms: unknown all-reduce algorithm \"" + algorithm + "\""),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("allowed: ring, mpi, hierarchical, shm, naive"), std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("MPI_ABORT"), std::string::npos) << r.out;
  }
}

// Ctrl-C on `bench` used to kill the CLI only: mpirun (its own process group) and the ranks
// ran on. A --min-bytes no other run uses marks this run's processes.
TEST_F(Cli, InterruptedBenchStopsItsRanks) {
  const std::string marker = "--min-bytes " + std::to_string(8 + 4 * (getpid() % 4096));
  const auto r = run("bench allreduce --worlds 2 " + marker + " --max-bytes 64M --repeats 3",
                     "timeout -s INT 4 ");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("interrupted; the ranks were stopped"), std::string::npos) << r.out;
  // mpirun and the ranks carry the marker; the CLI and timeout that passed it on have exited.
  EXPECT_EQ(ranklab::testing::processesMatching(marker + " ").size(), 0u)
      << "ranks still running after the interrupt";
}

// Deleting a run while it ran used to end the launcher with a bare "upsert rank: FOREIGN
// KEY constraint failed".
TEST_F(Cli, RunDeletedWhileRunningIsNamedAndItsRanksStop) {
  const pid_t pid = startLongRunWithSteps(db(), folder_.file("run.log"));
  ASSERT_GT(pid, 0);
  const auto deleted = run("runs delete 1 --db " + db());
  ASSERT_EQ(deleted.exit_code, 0) << deleted.out;
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream log(folder_.file("run.log"));
  const std::string out((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 1) << out;
  EXPECT_NE(out.find(db() + ": run 1 was deleted from the store while it ran"), std::string::npos)
      << out;
}

// Open MPI's shared-memory segment files (4 MB each, in /dev/shm) are unlinked by the rank
// that made them, so a rank killed with SIGKILL left its file behind for good. They now live
// in a folder of the run's own, which the launcher removes whatever the ending.
TEST_F(Cli, KilledRankLeavesNoSharedMemorySegmentsBehind) {
  const pid_t pid = startLongRunWithSteps(db(), folder_.file("run.log"));
  ASSERT_GT(pid, 0);
  const std::string prefix = "ranklab-" + std::to_string(pid) + "-";
  std::vector<std::filesystem::path> folders;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm"))
    if (entry.path().filename().string().rfind(prefix, 0) == 0) folders.push_back(entry.path());
  ASSERT_EQ(folders.size(), 1u) << "no segment folder of this run in /dev/shm";
  size_t segments = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folders[0]))
    segments += entry.path().filename().string().rfind("vader_segment", 0) == 0;
  EXPECT_EQ(segments, 2u) << "the ranks' segments are not in the run's folder";
  const int worker = firstWorkerOf(pid);
  ASSERT_GT(worker, 0);
  kill(worker, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_FALSE(std::filesystem::exists(folders[0])) << folders[0] << " left behind";
}

// A rank that is alive but frozen (SIGSTOP) used to keep the run "running" for ever: the
// others block in the all-reduce and nobody reports. The launcher's silence limit ends it.
TEST_F(Cli, FrozenRankEndsTheRunAfterTheSilenceLimit) {
  const pid_t pid = startLongRunWithSteps(db(), folder_.file("run.log"),
                                          {"--set", "telemetry.silence_limit_s=3"});
  ASSERT_GT(pid, 0);
  const int worker = firstWorkerOf(pid);
  ASSERT_GT(worker, 0);
  kill(worker, SIGSTOP);
  const auto frozen = std::chrono::steady_clock::now();
  int status = 0;
  waitpid(pid, &status, 0);
  const double end_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - frozen).count();
  kill(worker, SIGKILL);  // in case the launcher left it behind
  std::ifstream log(folder_.file("run.log"));
  const std::string out((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 1) << out;
  EXPECT_NE(out.find("telemetry.silence_limit_s"), std::string::npos) << out;
  EXPECT_LT(end_s, 30.0) << "the silent run was not ended promptly";
  const auto shown = run("runs show 1 --json --db " + db());
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  const auto s = nlohmann::json::parse(shown.out);
  EXPECT_EQ(s["status"], "failed");
  EXPECT_GT(s["steps"].get<int64_t>(), 0) << "steps recorded before the freeze were lost";
}

}  // namespace
