// The memory estimate before a launch: `validate` prints it, `run` refuses a job whose ranks
// on this machine need more than it has (nothing started), and the estimate agrees with
// the ledger a real run stores.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/cli_runner.h"

namespace {

using ranklab::testing::runCli;

class CliMemory : public ranklab::testing::CliTest {
 protected:
  std::string job(const std::string& name, const std::string& text) const {
    const std::string path = folder_.file(name);
    std::ofstream(path) << text;
    return path;
  }
};

// The JSON object in a command's output, its stderr lines before or after it.
nlohmann::json jsonIn(const std::string& out) {
  const size_t first = out.find('{');
  return nlohmann::json::parse(out.substr(first, out.rfind('}') - first + 1));
}

// The four memory bombs, each valid key by key.
struct Bomb {
  const char* name;
  const char* toml;
  const char* key;  // the key the refusal must name
};

const Bomb kBombs[] = {
    {"wide-mlp",
     "[model]\nlayers = [65536, 65536, 65536, 65536, 65536, 65536, 65536, 65536]\n"
     "[parallel]\nranks = 2\n",
     "model.layers["},
    {"big-gpt",
     "[data]\ndataset = \"text\"\n[model]\nkind = \"gpt\"\nwidth = 8192\nblocks = 64\n"
     "context = 4096\nheads = 8\n[parallel]\nranks = 1\n",
     "model."},
    {"wide-cnn",
     "[model]\nkind = \"cnn\"\nchannels = [4096, 4096, 4096, 4096]\nkernel_size = 3\n"
     "[parallel]\nranks = 2\n",
     "model.channels["},
    {"many-ranks", "[parallel]\nranks = 256\n", "parallel.ranks = 256"},
};

// Each refused by `run` in well under a second, naming its key. The 256 quickstart ranks
// (~344 MB each with their copy of Fashion-MNIST) are a bomb on a machine with less than
// ~88 GB available; on a bigger one they are only checked to be weighed by rank count.
TEST_F(CliMemory, RunRefusesEachMemoryBombBeforeAnyRankStarts) {
  for (const Bomb& bomb : kBombs) {
    const std::string path = job(std::string(bomb.name) + ".toml", bomb.toml);
    const auto start = std::chrono::steady_clock::now();
    const auto r = runCli("run " + path + " --quiet --db " + db());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (std::string(bomb.name) == "many-ranks" &&
        r.out.find("--ignore-memory-estimate") == std::string::npos) {
      EXPECT_NE(r.out.find("parallel.ranks"), std::string::npos) << r.out;
      continue;  // this machine has room for 256 quickstart ranks (its cores may refuse them)
    }
    EXPECT_EQ(r.exit_code, 3) << bomb.name << ": " << r.out;
    EXPECT_NE(r.out.find("not launched"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(bomb.key), std::string::npos) << bomb.name << ": " << r.out;
    EXPECT_NE(r.out.find("--ignore-memory-estimate"), std::string::npos) << r.out;
    EXPECT_LT(seconds, 5.0) << bomb.name << ": refused, but only after " << seconds << " s";
    // Nothing was launched: not even the run store was opened.
    EXPECT_FALSE(std::filesystem::exists(db())) << bomb.name;
  }
}

// A cluster's job (4,096 ranks, a valid file for simulate and plan) run here would start
// 4,096 processes on this machine's cores: refused before anything starts, naming the key,
// its value and what this machine allows; --ignore-memory-estimate does not lift it. Under
// Slurm the ranks are not this machine's to count; 8 ranks on 2 cores stay a normal run.
TEST_F(CliMemory, AClustersRanksAreRefusedBeforeLaunchNamingWhatThisMachineAllows) {
  const std::string path = job("cluster.toml", "[parallel]\nranks = 4096\n");
  const auto start = std::chrono::steady_clock::now();
  const auto r = runCli("run " + path + " --quiet --ignore-memory-estimate --db " + db());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("ranklab: not launched: parallel.ranks = 4096: 4096 rank processes would "
                       "start on this machine, which allows at most "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" a core, "), std::string::npos) << r.out;
  EXPECT_LT(seconds, 5.0) << "refused, but only after " << seconds << " s";
  EXPECT_FALSE(std::filesystem::exists(db()));  // nothing launched, no store opened

  const auto validated = runCli("validate " + path + " --json --ignore-memory-estimate");
  EXPECT_EQ(validated.exit_code, 3) << validated.out;
  const auto v = jsonIn(validated.out);
  EXPECT_FALSE(v["rank_capacity"]["fits"].get<bool>());
  EXPECT_EQ(v["rank_capacity"]["ranks_here"].get<int>(), 4096);
  const int allowed = v["rank_capacity"]["ranks_allowed"].get<int>();
  EXPECT_EQ(allowed, 32 * v["rank_capacity"]["cores"].get<int>());
  EXPECT_NE(validated.out.find("at most " + std::to_string(allowed)), std::string::npos);
  EXPECT_EQ(v["memory"]["per_rank"].size(), 4096u);

  const auto slurm = runCli("validate " + path +
                            " --json --set launch.scheduler='\"slurm\"' --set launch.nodes=32");
  EXPECT_EQ(slurm.exit_code, 0) << slurm.out;
  EXPECT_EQ(jsonIn(slurm.out)["rank_capacity"]["ranks_here"].get<int>(), 0);
  const auto eight = runCli("validate " + quickstart() + " --ranks 8");
  EXPECT_EQ(eight.exit_code, 0) << eight.out;
  EXPECT_NE(eight.out.find(": valid (8 ranks"), std::string::npos) << eight.out;
}

TEST_F(CliMemory, ValidateSaysABombIsValidButTooBig) {
  const std::string path = job("wide.toml", kBombs[0].toml);
  const auto r = runCli("validate " + path);
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("valid, but too big for this machine's memory"), std::string::npos) << r.out;
  // 7 x 65,536^2 + 784 x 65,536 + ... = 30.1 G parameters of 4 bytes.
  EXPECT_NE(r.out.find("parameters 120 GB"), std::string::npos) << r.out;
  // Insisting makes it a plain success for scripts; the warning stays.
  const auto insisted = runCli("validate " + path + " --ignore-memory-estimate");
  EXPECT_EQ(insisted.exit_code, 0) << insisted.out;
  EXPECT_NE(insisted.out.find("model.layers["), std::string::npos) << insisted.out;
}

TEST_F(CliMemory, ValidatePrintsEachRanksEstimateAndJson) {
  const auto text = runCli("validate " + quickstart());
  ASSERT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find("memory (estimated peak per rank"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("this machine: 4 ranks need"), std::string::npos) << text.out;
  const auto json = runCli("validate " + quickstart() + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.out;
  const auto v = nlohmann::json::parse(json.out.substr(json.out.find('{')));
  EXPECT_TRUE(v["fits_memory"].get<bool>());
  ASSERT_EQ(v["memory"]["per_rank"].size(), 4u);
  EXPECT_GT(v["memory"]["host_available_bytes"].get<int64_t>(), 0);
  // The host holds its ranks' private memory each and the libraries they share once.
  const auto& host = v["memory"]["hosts"][0];
  int64_t ranks_sum = 0;
  for (const auto& rank : v["memory"]["per_rank"]) ranks_sum += rank["total_bytes"].get<int64_t>();
  EXPECT_GT(host["shared_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(host["bytes"].get<int64_t>(), ranks_sum + host["shared_bytes"].get<int64_t>());
  // A pipeline's stages differ: the table has a row per rank.
  const auto piped = runCli("validate " + quickstart() +
                            " --set parallel.pipeline=2 --set parallel.microbatches=2");
  EXPECT_NE(piped.out.find("rank  stage  total"), std::string::npos) << piped.out;
}

// The estimate's ledger parts against the ledger a real short run stores, per rank: the
// parameters, gradients and optimizer state to the byte, activations within 10 % (outputs
// are sized for the evaluation's batch of 256: the run evaluates at step 2, and the later
// steps' records hold that).
TEST_F(CliMemory, TheQuickstartEstimateMatchesTheStoredLedger) {
  const std::string sets =
      " --set train.max_steps=5 --set train.eval_every=2 --set data.train_limit=2000"
      " --set data.test_limit=1000";
  const auto estimate = runCli("validate " + quickstart() + " --ranks 2 --json" + sets);
  ASSERT_EQ(estimate.exit_code, 0) << estimate.out;
  const auto e = nlohmann::json::parse(estimate.out.substr(estimate.out.find('{')));
  const auto r = runCli("run " + quickstart() + " --ranks 2 --quiet --db " + db() + sets);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto shown = runCli("runs show 1 --json --db " + db());
  const auto s = nlohmann::json::parse(shown.out.substr(shown.out.find('{')));
  const auto& est = e["memory"]["per_rank"][0];
  const auto& led = s["ranks"][0]["memory"];
  EXPECT_EQ(est["params_bytes"], led["params"]);
  EXPECT_EQ(est["grads_bytes"], led["grads"]);
  EXPECT_EQ(est["optimizer_bytes"], led["optimizer"]);
  const double ratio =
      est["activations_bytes"].get<double>() / led["activations_peak"].get<double>();
  std::printf("quickstart activations: estimate / ledger = %.3f\n", ratio);
  EXPECT_NEAR(ratio, 1.0, 0.1);
}

}  // namespace
