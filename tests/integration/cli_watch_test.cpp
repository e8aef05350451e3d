// PyTorch jobs as ranklab runs (docs/pytorch.md): the real `ranklab` CLI starting real DDP gloo
// ranks of resources/pytorch/train_fashion_mnist.py, through `ranklab watch` and a job file's
// [launch] command (launchers ranklab and mpirun), each read back from the real store; a
// planted straggler named, a killed rank found, Stop, and the errors a user meets.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "tests/integration/cli_runner.h"

namespace ranklab::testing {
namespace {

constexpr int64_t kMlpParamBytes = 4 * (784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);

std::string script() {
  return sourceDir() + "/resources/pytorch/train_fashion_mnist.py";
}

// `watch` of the training script with these options on N ranks; --json.
CliResult watch(const std::string& db, int ranks, const std::string& options) {
  return runCli("watch --db " + db + " --json --nproc " + std::to_string(ranks) +
                " -- /usr/bin/python3 " + script() + " " + options);
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
  return cells;
}

// The run's step rows (runs export --csv), each a column name -> value.
std::vector<std::map<std::string, double>> stepRows(const std::string& db, int64_t id) {
  const std::string file = db + ".csv";
  runCli("runs export " + std::to_string(id) + " --db " + db + " --csv " + file);
  std::ifstream csv(file);
  std::string line;
  std::getline(csv, line);
  const auto names = split(line);
  std::vector<std::map<std::string, double>> rows;
  while (std::getline(csv, line)) {
    const auto cells = split(line);
    std::map<std::string, double> row;
    for (size_t i = 0; i < cells.size() && i < names.size(); ++i)
      row[names[i]] = std::atof(cells[i].c_str());
    rows.push_back(row);
  }
  return rows;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Every rank's steps stored, their parts within 5 % of each step's time (median), and each
// step's all-reduced bytes the parameters'.
void expectWholeSteps(const std::string& db, int64_t id, int ranks, int steps, int64_t bytes) {
  std::map<int, std::vector<std::map<std::string, double>>> by_rank;
  for (auto& row : stepRows(db, id)) by_rank[int(row["rank"])].push_back(row);
  ASSERT_EQ(int(by_rank.size()), ranks);
  for (auto& [rank, rows] : by_rank) {
    ASSERT_EQ(int(rows.size()), steps) << "rank " << rank;
    std::vector<double> off;
    for (size_t i = 1; i < rows.size(); ++i) {
      auto& r = rows[i];
      const double took = r["time_ns"] - rows[i - 1]["time_ns"];
      const double parts = r["data_ns"] + r["forward_ns"] + r["backward_ns"] + r["wait_ns"] +
                           r["comm_ns"] - r["comm_hidden_ns"] + r["update_ns"];
      off.push_back(std::abs(parts - took) / took);
      EXPECT_EQ(int64_t(r["bytes_raw"]), bytes) << "rank " << rank << " step " << r["step"];
    }
    EXPECT_LE(median(off), 0.05) << "rank " << rank << ": parts against the step's time";
  }
}

class CliWatch : public CliTest {};

TEST_F(CliWatch, WatchStoresEveryStepOfTwoRanksAndNamesThePlantedStraggler) {
  const CliResult r = watch(db(), 2, "--limit 4096 --straggler-rank 1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto summary = lastJson(r.out);
  EXPECT_EQ(summary["origin"], "pytorch-live") << r.out;
  EXPECT_EQ(summary["name"], "train_fashion_mnist");
  EXPECT_GT(summary["test_accuracy"].get<double>(), 0.5) << "logged as test_accuracy";
  const int64_t id = summary["id"];
  expectWholeSteps(db(), id, 2, 4096 / 2 / 64, kMlpParamBytes);
  const auto analysis =
      lastJson(runCli("analyze " + std::to_string(id) + " --json --db " + db()).out);
  EXPECT_EQ(analysis["stragglers"][0]["rank"], 1) << analysis["stragglers"].dump();
  EXPECT_EQ(analysis["stragglers"][0]["kind"], "chronic");
}

TEST_F(CliWatch, AJobFileCommandRunsUnderMpirunAsFourRanksOfACnn) {
  const std::string job = folder_.file("cnn.toml");
  std::ofstream(job) << "name = \"cnn\"\n[parallel]\nranks = 4\n[launch]\nlauncher = \"mpirun\"\n"
                        "command = [\"/usr/bin/python3\", \""
                     << script() << "\", \"--model\", \"cnn\", \"--limit\", \"4096\"]\n";
  const CliResult r = runCli("run " + job + " --json --db " + db());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto summary = lastJson(r.out);
  EXPECT_EQ(summary["origin"], "pytorch-live");
  constexpr int64_t kCnnParamBytes = 4 * (8 * 9 + 8 + 16 * 8 * 9 + 16 + 16 * 49 * 10 + 10);
  expectWholeSteps(db(), summary["id"], 4, 4096 / 4 / 64, kCnnParamBytes);
}

TEST_F(CliWatch, AKilledRankFailsTheRunNamingIt) {
  const CliResult r = watch(db(), 2, "--limit 8192 --die-rank 1 --die-at-step 5");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("rank 1 died after step"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("signal 9"), std::string::npos) << r.out;
}

TEST_F(CliWatch, ARankThatDiesBeforeItsFirstStepIsNamed) {
  const CliResult r = watch(db(), 2, "--die-rank 1 --die-at-step 0");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("rank 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("signal 9"), std::string::npos) << r.out;
}

TEST_F(CliWatch, ACommandNotFoundStoresNothing) {
  const CliResult r = runCli("watch --db " + db() + " -- no-such-trainer-42 --epochs 1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("no-such-trainer-42: command not found"), std::string::npos) << r.out;
  EXPECT_EQ(runCli("runs list --json --db " + db()).out.find("\"id\""), std::string::npos);
}

TEST_F(CliWatch, AScriptThatNeverCallsWatchIsSaidSo) {
  const CliResult r = runCli("watch --db " + db() + " --nproc 2 -- /usr/bin/python3 -c pass");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("ranks 0, 1 never reported"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ranklab.torch.watch(model, optimizer)"), std::string::npos) << r.out;
}

TEST_F(CliWatch, ThePackageMissingFromThePythonPathIsSaidSo) {
  // -I: Python ignores PYTHONPATH, where ranklab put its package.
  const CliResult r =
      runCli("watch --db " + db() + " -- /usr/bin/python3 -I " + script() + " --limit 128");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("cannot import ranklab's Python package"), std::string::npos) << r.out;
}

// Stop (SIGINT, as the workbench's Stop sends it) ends every rank's process.
TEST_F(CliWatch, StopEndsEveryRanksProcess) {
  const std::string marker = "--limit=999936";  // names the ranks' processes
  const pid_t cli =
      startInBackground({"watch", "--db", db(), "--nproc", "2", "--", "/usr/bin/python3", script(),
                         marker, "--straggler-rank", "0"},
                        folder_.file("log"));
  const auto ranks_alive = [&] {
    int alive = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      if (entry.path().filename() == std::to_string(cli)) continue;
      std::ifstream in(entry.path() / "cmdline");
      std::string cmdline((std::istreambuf_iterator<char>(in)), {});
      alive += cmdline.find(marker) != std::string::npos;
    }
    return alive;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (stepRows(db(), 1).size() < 2) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "no step stored in 60 s";
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  EXPECT_EQ(ranks_alive(), 2);
  kill(cli, SIGINT);
  int status = 0;
  waitpid(cli, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_EQ(ranks_alive(), 0);
}

}  // namespace
}  // namespace ranklab::testing
