// `ranklab import` and `ranklab analyze` on real runs: a real 2-process PyTorch DDP job
// (gloo, python3-torch) profiled by torch.profiler, and ranklab's own runs, each with a
// planted straggler the analyses must name.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/integration/cli_runner.h"

namespace ranklab::testing {
namespace {

constexpr int kTorchSteps = 6;

class CliImportTest : public CliTest {
 protected:
  // Runs tests/reference/ddp_profiled_job.py into `out`; extra arguments plant a straggler.
  void runTorchJob(const std::string& out, const std::string& extra = "") {
    const int port = 20000 + int(getpid() % 20000);
    const std::string command = "/usr/bin/python3 " + sourceDir() +
                                "/tests/reference/ddp_profiled_job.py " + out + " --steps " +
                                std::to_string(kTorchSteps) + " --port " + std::to_string(port) +
                                " " + extra + " 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  // The quickstart on 2 ranks for 25 steps, rank 1 `delay_ms` slower each; returns its id.
  int64_t runStraggler(int delay_ms) {
    const CliResult run = runCli("run " + quickstart() +
                                 " --ranks 2 --quiet --json --set data.train_limit=3200 "
                                 "--set train.epochs=1 --set fault.straggler_rank=1 "
                                 "--set fault.straggler_delay_ms=" +
                                 std::to_string(delay_ms) + " --db " + db());
    EXPECT_EQ(run.exit_code, 0) << run.out;
    return lastJson(run.out)["id"];
  }
  nlohmann::json analyze(int64_t id) {
    const CliResult result = runCli("analyze " + std::to_string(id) + " --json --db " + db());
    EXPECT_EQ(result.exit_code, 0) << result.out;
    return lastJson(result.out);
  }
  nlohmann::json importTraces(const std::string& folder) {
    const CliResult result = runCli("import " + folder + " --json --db " + db());
    EXPECT_EQ(result.exit_code, 0) << result.out;
    return lastJson(result.out);
  }
};

TEST_F(CliImportTest, ARealPyTorchDdpJobImportsWithItsRanksStepsAndAllReduces) {
  const std::string traces = folder_.file("ddp");
  runTorchJob(traces);
  const nlohmann::json report = importTraces(traces);
  ASSERT_EQ(report["ranks"].size(), 2u) << report.dump(2);
  EXPECT_EQ(report["steps"], 2 * kTorchSteps);
  // DDP's one bucket (the MLP's 235,146 parameters fit its 25 MB) is one all-reduce a step.
  // The legacy profiler once in a while leaves out one of gloo's worker-thread events (seen
  // once: 11 of 12); the import matches collectives by step, so the others still match.
  EXPECT_GE(report["collectives"], 2 * kTorchSteps - 1);
  EXPECT_LE(report["collectives"], 2 * kTorchSteps);
  EXPECT_EQ(report["collective_source"], "the backend's ops (gloo:/nccl: events)");
  const int64_t id = report["run_id"];
  const CliResult shown = runCli("runs show " + std::to_string(id) + " --json --db " + db());
  const nlohmann::json run = lastJson(shown.out);
  EXPECT_EQ(run["origin"], "pytorch-import");
  EXPECT_EQ(run["strategy"], "pytorch-ddp");
  EXPECT_EQ(run["algorithm"], "gloo");
  EXPECT_TRUE(run["layout"].is_null()) << "an imported trace has no ranklab layout";
  const nlohmann::json a = analyze(id);
  ASSERT_EQ(a["breakdown"].size(), 2u);
  ASSERT_EQ(a["collectives"].size(), 1u);
  EXPECT_EQ(a["collectives"][0]["kind"], "all_reduce");
  EXPECT_GE(a["collectives"][0]["count"], kTorchSteps - 1);
  // The parts add up to each rank's time from its first step's start to its last's end.
  const double train_s = run["train_s"];
  for (const auto& b : a["breakdown"]) {
    const double sum = b["compute_s"].get<double>() + b["comm_s"].get<double>() +
                       b["wait_s"].get<double>() + b["data_s"].get<double>() +
                       b["idle_s"].get<double>();
    EXPECT_GT(sum, 0.5 * train_s);
    EXPECT_LE(sum, train_s * 1.0001) << b.dump();
  }
  double shares = 0;
  for (const auto& s : a["critical_path"]["shares"]) shares += s["share"].get<double>();
  EXPECT_NEAR(shares, 1.0, 1e-9);
}

TEST_F(CliImportTest, APlantedStragglerInAPyTorchJobIsNamedWithItsCost) {
  const std::string traces = folder_.file("slow");
  runTorchJob(traces, "--slow-rank 1 --slow-ms 60");
  const int64_t id = importTraces(traces)["run_id"];
  const nlohmann::json a = analyze(id);
  const auto& worst = a["stragglers"][0];
  EXPECT_EQ(worst["rank"], 1) << a.dump(2);
  EXPECT_GE(worst["last_arrivals"].get<int>(), kTorchSteps - 1);
  // Rank 0 waits about 60 ms at each step's all-reduce.
  EXPECT_GT(worst["caused_wait_s"].get<double>(), 0.5 * 0.060 * kTorchSteps) << a.dump(2);
  EXPECT_EQ(a["critical_path"]["what_if_rank"], 1);
  EXPECT_EQ(a["critical_path"]["shares"][0]["rank"], 1) << a.dump(2);
  EXPECT_EQ(a["critical_path"]["shares"][0]["phase"], "forward") << a.dump(2);
  // Of two ranks the median is the faster: without the sleep each step is ~60 ms shorter.
  EXPECT_LT(a["critical_path"]["what_if_s"].get<double>(),
            a["critical_path"]["path_s"].get<double>() - 0.5 * 0.060 * kTorchSteps);
}

TEST_F(CliImportTest, AnalyzeNamesTheStragglerOfRanklabsOwnRun) {
  const int64_t id = runStraggler(20);
  const nlohmann::json a = analyze(id);
  EXPECT_EQ(a["origin"], "ranklab");
  EXPECT_EQ(a["stragglers"][0]["rank"], 1) << a.dump(2);
  EXPECT_EQ(a["collectives"][0]["kind"], "all_reduce");
  EXPECT_GT(a["collectives"][0]["busbw_gbps"].get<double>(), 0);
  EXPECT_EQ(a["critical_path"]["what_if_rank"], 1);
  // Rank 0 waits about 20 ms a step for rank 1.
  const double steps = a["breakdown"][0]["steps"];
  EXPECT_GT(a["breakdown"][0]["wait_s"].get<double>(), 0.5 * 0.020 * steps) << a.dump(2);
}

TEST_F(CliImportTest, DiffSplitsAPlantedStragglersCostByRankAndPhase) {
  const std::string args =
      " --ranks 2 --quiet --json --set data.train_limit=3200 "
      "--set train.epochs=1 --db " +
      db();
  const CliResult clean = runCli("run " + quickstart() + args);
  const CliResult slow = runCli("run " + quickstart() + args +
                                " --set fault.straggler_rank=1 --set fault.straggler_delay_ms=20");
  ASSERT_EQ(slow.exit_code, 0) << slow.out;
  const int64_t a = lastJson(clean.out)["id"], b = lastJson(slow.out)["id"];
  const CliResult diff =
      runCli("diff " + std::to_string(a) + " " + std::to_string(b) + " --json --db " + db());
  ASSERT_EQ(diff.exit_code, 0) << diff.out;
  const nlohmann::json d = lastJson(diff.out);
  const double steps = d["steps"], total = d["total_delta_s"];
  EXPECT_EQ(steps, 3200 / 2 / 64);
  // The sleep is in rank 1's backward: about 20 ms a step more there.
  EXPECT_EQ(d["parts"][0]["rank"], 1) << d.dump(2);
  EXPECT_EQ(d["parts"][0]["phase"], "backward") << d.dump(2);
  EXPECT_GT(d["parts"][0]["delta_s"].get<double>(), 0.5 * 0.020 * steps) << d.dump(2);
  EXPECT_GT(total, 0.5 * 0.020 * steps);
  EXPECT_NEAR(d["parts_sum_s"].get<double>(), total, 0.05 * total) << d.dump(2);
  ASSERT_EQ(d["differences"].size(), 2u) << d.dump(2);
  EXPECT_EQ(d["differences"][0]["key"], "fault.straggler_rank") << d.dump(2);
  EXPECT_EQ(d["differences"][1]["key"], "fault.straggler_delay_ms") << d.dump(2);
}

TEST_F(CliImportTest, DiffSetsAPyTorchDdpRunBesideRanklabsOwn) {
  const std::string traces = folder_.file("ddp");
  runTorchJob(traces);
  const int64_t torch = importTraces(traces)["run_id"];
  const CliResult own = runCli("run " + quickstart() +
                               " --ranks 2 --quiet --json --set data.train_limit=1280 "
                               "--set train.epochs=1 --db " +
                               db());
  ASSERT_EQ(own.exit_code, 0) << own.out;
  const int64_t ours = lastJson(own.out)["id"];
  const CliResult diff =
      runCli("diff " + std::to_string(torch) + " " + std::to_string(ours) + " --json --db " + db());
  ASSERT_EQ(diff.exit_code, 0) << diff.out;
  const nlohmann::json d = lastJson(diff.out);
  EXPECT_GE(d["steps"].get<int>(), kTorchSteps - 1) << d.dump(2);
  const double total = d["total_delta_s"], sum = d["parts_sum_s"];
  // Over these 6 steps the first step's start (the ranks' starts differ before the path's
  // last rank starts) weighs: under ASan 4.9 ms of a 5.3 ms difference (CI). The 5 % of the
  // issue is held over 25 steps, by DiffSplitsAPlantedStragglersCostByRankAndPhase.
  EXPECT_NEAR(sum, total, 0.25 * std::abs(total) + 6e-3) << d.dump(2);
}

// ranklab's own trace export read back is the same run to every analysis.
TEST_F(CliImportTest, AnExportImportedBackGivesTheSameAnalyses) {
  const int64_t original = runStraggler(5);
  const std::string trace = folder_.file("run.json");
  const CliResult exported =
      runCli("runs export " + std::to_string(original) + " --trace " + trace + " --db " + db());
  ASSERT_EQ(exported.exit_code, 0) << exported.out;
  const int64_t back = importTraces(trace)["run_id"];
  const nlohmann::json shown =
      lastJson(runCli("runs show " + std::to_string(back) + " --json --db " + db()).out);
  EXPECT_EQ(shown["origin"], "ranklab-trace");
  EXPECT_EQ(shown["strategy"], "allreduce");
  EXPECT_EQ(shown["algorithm"], "ring");
  EXPECT_EQ(shown["steps"], 3200 / 2 / 64);
  EXPECT_EQ(shown["samples"], 3200);
  const nlohmann::json a = analyze(original), b = analyze(back);
  auto near = [](const nlohmann::json& x, const nlohmann::json& y) {
    return std::abs(x.get<double>() - y.get<double>()) <= 1e-6;
  };
  ASSERT_EQ(a["breakdown"].size(), b["breakdown"].size());
  for (size_t r = 0; r < a["breakdown"].size(); ++r)
    for (const char* key : {"compute_s", "comm_s", "wait_s", "data_s", "idle_s"})
      EXPECT_TRUE(near(a["breakdown"][r][key], b["breakdown"][r][key]))
          << key << " rank " << r << ": " << a["breakdown"][r] << " vs " << b["breakdown"][r];
  ASSERT_EQ(a["stragglers"].size(), b["stragglers"].size());
  for (size_t i = 0; i < a["stragglers"].size(); ++i) {
    EXPECT_EQ(a["stragglers"][i]["rank"], b["stragglers"][i]["rank"]);
    EXPECT_EQ(a["stragglers"][i]["last_arrivals"], b["stragglers"][i]["last_arrivals"]);
    EXPECT_TRUE(near(a["stragglers"][i]["caused_wait_s"], b["stragglers"][i]["caused_wait_s"]));
  }
  EXPECT_EQ(a["collectives"][0]["count"], b["collectives"][0]["count"]);
  EXPECT_TRUE(near(a["collectives"][0]["transfer_s"], b["collectives"][0]["transfer_s"]));
  const auto& pa = a["critical_path"];
  const auto& pb = b["critical_path"];
  EXPECT_TRUE(near(pa["path_s"], pb["path_s"])) << pa << "\n" << pb;
  EXPECT_TRUE(near(pa["what_if_s"], pb["what_if_s"])) << pa << "\n" << pb;
  ASSERT_EQ(pa["shares"].size(), pb["shares"].size());
  for (size_t i = 0; i < pa["shares"].size(); ++i) {
    EXPECT_EQ(pa["shares"][i]["rank"], pb["shares"][i]["rank"]);
    EXPECT_EQ(pa["shares"][i]["phase"], pb["shares"][i]["phase"]);
  }
  // The export holds every rank: with another file beside it (a copy: the same file named
  // twice is refused as such), it is refused.
  const std::string copy = folder_.file("copy.json");
  std::filesystem::copy_file(trace, copy);
  const CliResult two = runCli("import " + trace + " " + copy + " --db " + db());
  EXPECT_NE(two.exit_code, 0);
  EXPECT_NE(two.out.find("import it alone"), std::string::npos) << two.out;
  const CliResult same = runCli("import " + trace + " " + trace + " --db " + db());
  EXPECT_NE(same.exit_code, 0);
  EXPECT_NE(same.out.find(trace + " is named twice"), std::string::npos) << same.out;
}

TEST_F(CliImportTest, ImportRefusesAFileThatIsNoTraceAndStoresNothing) {
  const std::string bad = folder_.file("bad.json");
  std::ofstream(bad) << "[{\"ph\": \"X\", \"name\": ";
  const CliResult result = runCli("import " + bad + " --db " + db());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.out.find("bad.json: not valid JSON at byte"), std::string::npos) << result.out;
  const CliResult list = runCli("runs list --json --db " + db());
  EXPECT_EQ(lastJson(list.out).size(), 0u) << list.out;
}

}  // namespace
}  // namespace ranklab::testing
