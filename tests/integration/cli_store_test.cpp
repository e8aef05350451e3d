// The CLI's powers over stored runs (compare, export, rename, tag), its version line and its
// progress line, against real runs in a real store file.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "storage/chrome_trace.h"
#include "storage/run_store.h"
#include "tests/integration/cli_runner.h"
#include "tests/support/second_account.h"

namespace {

using ranklab::testing::runCli;

class CliStore : public ranklab::testing::CliTest {
 protected:
  // A short run (100 steps on 2 ranks); returns the CLI's output.
  std::string shortRun(const std::string& extra, int ranks = 2) {
    const auto r = runCli("run " + quickstart() + " --ranks " + std::to_string(ranks) +
                          " --set data.train_limit=12800 --set data.test_limit=1000"
                          " --set train.epochs=1 --quiet --db " +
                          db() + " " + extra);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return r.out;
  }
};

TEST_F(CliStore, VersionNamesTheCommit) {
  const auto r = runCli("--version");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(^ranklab \d+\.\d+\.\d+ \(commit \S+\))")))
      << r.out;
  EXPECT_EQ(r.out.find("unknown"), std::string::npos) << "built from a git checkout: " << r.out;
}

// Issue 57: a store another account owns could hold what that account wants this one to read
// and run again; it is opened only with --allow-foreign-store, named in the refusal.
TEST_F(CliStore, AStoreAnotherAccountOwnsIsRefusedUnlessTheFlagSaysSo) {
  if (!ranklab::testing::canBecomeNobody()) GTEST_SKIP() << "needs root to chown to nobody";
  ASSERT_EQ(runCli("runs list --db " + db()).exit_code, 0);
  EXPECT_EQ(ranklab::testing::modeOf(db()), 0600u) << "a new store is this account's alone";
  ASSERT_EQ(chown(db().c_str(), ranklab::testing::kNobody, ranklab::testing::kNobody), 0);
  const auto refused = runCli("runs list --db " + db());
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_NE(refused.out.find(db() + ": owned by uid 65534 (nobody), not by this account (root); "
                                    "pass --allow-foreign-store to open it anyway"),
            std::string::npos)
      << refused.out;
  const auto allowed = runCli("runs list --allow-foreign-store --db " + db());
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out;
}

TEST_F(CliStore, CompareListsTheSettingsThatDifferAndBothSummaries) {
  shortRun("");
  shortRun("--set parallel.algorithm=mpi --set train.lr=0.02");
  const auto text = runCli("compare 1 2 --db " + db());
  ASSERT_EQ(text.exit_code, 0) << text.out;
  EXPECT_TRUE(std::regex_search(text.out, std::regex(R"(parallel\.algorithm +ring +mpi)")))
      << text.out;
  EXPECT_TRUE(std::regex_search(text.out, std::regex(R"(train\.lr +0\.05 +0\.02)"))) << text.out;
  EXPECT_EQ(text.out.find("train.epochs"), std::string::npos) << "same in both: " << text.out;
  EXPECT_TRUE(std::regex_search(text.out, std::regex(R"(status +done +done)"))) << text.out;
  EXPECT_TRUE(std::regex_search(text.out, std::regex(R"(steps +100 +100)"))) << text.out;
  // The same model on both: the same ledger (parameters, gradients, momentum), not zero.
  std::smatch held;
  ASSERT_TRUE(std::regex_search(
      text.out, held, std::regex(R"(held MB per rank \(largest\) +([0-9.]+) +([0-9.]+))")))
      << text.out;
  EXPECT_EQ(held[1], held[2]);
  EXPECT_GT(std::stod(held[1]), 0.1);

  const auto json = runCli("compare 1 2 --json --db " + db());
  ASSERT_EQ(json.exit_code, 0) << json.out;
  const auto doc = nlohmann::json::parse(json.out);
  ASSERT_EQ(doc["runs"].size(), 2u);
  EXPECT_EQ(doc["runs"][1]["algorithm"], "mpi");
  bool algorithm_listed = false;
  for (const auto& d : doc["differences"])
    if (d["key"] == "parallel.algorithm") {
      algorithm_listed = true;
      EXPECT_EQ(d["values"], nlohmann::json({"ring", "mpi"}));
    }
  EXPECT_TRUE(algorithm_listed) << json.out;

  const auto one = runCli("compare 1 --db " + db());
  EXPECT_EQ(one.exit_code, 2) << one.out;
  EXPECT_NE(one.out.find("two or more run IDs"), std::string::npos) << one.out;
  const auto missing = runCli("compare 1 9 --db " + db());
  EXPECT_EQ(missing.exit_code, 1) << missing.out;
  EXPECT_NE(missing.out.find("no run with id 9"), std::string::npos) << missing.out;
}

TEST_F(CliStore, ExportWritesEveryStepRowAsCsv) {
  shortRun("");
  const std::string csv = folder_.file("steps.csv");
  const auto r = runCli("runs export 1 --csv " + csv + " --db " + db());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("200 step rows written"), std::string::npos) << r.out;
  std::ifstream in(csv);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("run_id,rank,step,epoch,samples,data_ns,", 0), 0u) << header;
  int rows = 0;
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, 2 * 100);

  const auto no_file = runCli("runs export 1 --db " + db());
  EXPECT_EQ(no_file.exit_code, 2) << no_file.out;
  EXPECT_NE(no_file.out.find("--csv FILE or --trace FILE.json"), std::string::npos) << no_file.out;
  const auto bad_dir = runCli("runs export 1 --csv /nonexistent/dir/x.csv --db " + db());
  EXPECT_EQ(bad_dir.exit_code, 1) << bad_dir.out;
  EXPECT_NE(bad_dir.out.find("/nonexistent/dir/x.csv"), std::string::npos) << bad_dir.out;
}

// A real 4-rank run as a Chrome trace: valid JSON, a named process per rank, and every step
// of every rank with its compute and communication phases; every 10th step's ring hops,
// each the start of a flow arrow that ends on the rank it sent to.
TEST_F(CliStore, TraceExportHasAProcessPerRankAndEveryStepsPhases) {
  shortRun("--set parallel.algorithm=ring --set telemetry.span_every=10", 4);
  const std::string path = folder_.file("trace.json");
  const auto r = runCli("runs export 1 --trace " + path + " --json --db " + db());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto result = nlohmann::json::parse(r.out);
  EXPECT_EQ(result["trace"], path);
  std::ifstream in(path);
  const auto trace = nlohmann::json::parse(in);
  EXPECT_EQ(result["trace_events"].get<size_t>(), trace["traceEvents"].size());

  std::set<int> named;
  std::map<std::pair<int, int64_t>, std::set<std::string>> phases;  // (pid, step) -> names
  std::map<int64_t, int> hops;                                      // step -> hops
  std::map<int64_t, int> device;                                    // step -> device pieces
  std::map<int64_t, std::pair<int, int>> flows;                     // id -> from, to pid
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") named.insert(e["pid"].get<int>());
    if (e["ph"] == "s") flows[e["id"]].first = e["pid"];
    if (e["ph"] == "f") flows[e["id"]].second = e["pid"];
    if (e["ph"] == "X" && e["tid"] == ranklab::kPieceThread) {
      ++hops[e["args"]["step"].get<int64_t>()];
      continue;
    }
    if (e["ph"] == "X" && e["tid"] == ranklab::kDeviceThread) {
      ++device[e["args"]["step"].get<int64_t>()];
      continue;
    }
    if (e["ph"] != "X" || e["cat"] == "span") continue;
    EXPECT_GE(e["ts"].get<double>(), 0) << e;
    EXPECT_GE(e["dur"].get<double>(), 0) << e;
    phases[{e["pid"], e["args"]["step"]}].insert(e["name"].get<std::string>());
  }
  EXPECT_EQ(named, (std::set<int>{1, 2, 3, 4}));
  ranklab::RunStore store(db());
  const auto steps = store.steps(1);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(phases.size(), steps.size()) << "a (rank, step) pair with no phase";
  for (const auto& s : steps) {
    const auto& names = phases[{s.rank + 1, s.step}];
    for (const char* phase : {"forward", "backward", "comm", "update"})
      EXPECT_TRUE(names.count(phase)) << "rank " << s.rank << " step " << s.step << " " << phase;
  }
  // 50 steps: 10, 20, ... 50 sampled, 2(4-1) hops on each of 4 ranks.
  EXPECT_EQ(hops, (std::map<int64_t, int>{{10, 24}, {20, 24}, {30, 24}, {40, 24}, {50, 24}}));
  EXPECT_EQ(flows.size(), 5u * 24u);
  // Their work on the device on a thread of its own: 9 pieces on each of 4 ranks.
  EXPECT_EQ(device, (std::map<int64_t, int>{{10, 36}, {20, 36}, {30, 36}, {40, 36}, {50, 36}}));
  for (const auto& [id, ends] : flows)
    EXPECT_EQ(ends.second, ends.first % 4 + 1) << "flow " << id << " from pid " << ends.first;

  // A part of the run: steps 20..30 of ranks 1 and 3 (what a thousand ranks' trace needs).
  const auto part =
      runCli("runs export 1 --trace " + path + " --step-range 20:30 --rank-list 1,3 --db " + db());
  ASSERT_EQ(part.exit_code, 0) << part.out;
  std::ifstream part_in(path);
  const auto windowed = nlohmann::json::parse(part_in);
  std::set<int> part_named;
  std::map<int64_t, int> part_hops;
  for (const auto& e : windowed["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") part_named.insert(e["pid"].get<int>());
    if (e["ph"] != "X" || e["cat"] == "span" || !e["args"].contains("step")) continue;
    const auto step = e["args"]["step"].get<int64_t>();
    EXPECT_TRUE(step >= 20 && step <= 30) << e;
    if (e["tid"] == ranklab::kPieceThread) ++part_hops[step];
  }
  EXPECT_EQ(part_named, (std::set<int>{2, 4}));
  EXPECT_EQ(part_hops, (std::map<int64_t, int>{{20, 12}, {30, 12}}));
  const auto bad = runCli("runs export 1 --trace " + path + " --rank-list 1,x --db " + db());
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--rank-list: \"x\""), std::string::npos) << bad.out;

  const auto missing = runCli("runs export 7 --trace " + path + " --db " + db());
  EXPECT_EQ(missing.exit_code, 1) << missing.out;
  EXPECT_NE(missing.out.find("no run with id 7"), std::string::npos) << missing.out;
}

TEST_F(CliStore, RenameAndTagEditTheStoredRun) {
  shortRun("");
  ASSERT_EQ(runCli("runs rename 1 baseline-ring --db " + db()).exit_code, 0);
  ASSERT_EQ(runCli("runs tag 1 fast ring --db " + db()).exit_code, 0);
  ASSERT_EQ(runCli("runs tag 1 teaching --db " + db()).exit_code, 0);
  const auto untag = runCli("runs untag 1 fast --db " + db());
  ASSERT_EQ(untag.exit_code, 0) << untag.out;
  EXPECT_NE(untag.out.find("run 1 tags: ring teaching"), std::string::npos) << untag.out;
  const auto shown = nlohmann::json::parse(runCli("runs show 1 --json --db " + db()).out);
  EXPECT_EQ(shown["name"], "baseline-ring");
  EXPECT_EQ(shown["tags"], nlohmann::json({"ring", "teaching"}));

  const auto no_run = runCli("runs rename 7 x --db " + db());
  EXPECT_EQ(no_run.exit_code, 1) << no_run.out;
  EXPECT_NE(no_run.out.find("no run with id 7"), std::string::npos) << no_run.out;
  const auto no_tag = runCli("runs tag 1 --db " + db());
  EXPECT_EQ(no_tag.exit_code, 2) << no_tag.out;
  const auto comma = runCli("runs tag 1 a,b --db " + db());
  EXPECT_EQ(comma.exit_code, 2) << comma.out;
  EXPECT_NE(comma.out.find("tag \"a,b\""), std::string::npos) << comma.out;
}

// Telemetry lost in transit (sequence holes counted by the collector) is said by `runs show`,
// in its text and its JSON: a summary never hides missing steps.
TEST_F(CliStore, LostTelemetryIsShownInTheSummary) {
  shortRun("");
  {
    ranklab::RunStore store(db());
    ranklab::RecordBatch batch;
    ranklab::RankRow rank = store.ranks(1).at(1);
    rank.seq_gaps = 3;
    batch.ranks.push_back(rank);
    store.write(batch);
  }
  const auto shown = nlohmann::json::parse(runCli("runs show 1 --json --db " + db()).out);
  EXPECT_EQ(shown["ranks"][0]["lost_messages"], 0);
  EXPECT_EQ(shown["ranks"][1]["lost_messages"], 3);
  const auto text = runCli("runs show 1 --db " + db());
  EXPECT_NE(text.out.find("telemetry lost: 3 messages never arrived (rank 1: 3)"),
            std::string::npos)
      << text.out;
}

// Evaluations and checkpoints are spans: from each rank through ZeroMQ into the store.
TEST_F(CliStore, EvaluationsAndCheckpointsAreStoredAsSpans) {
  shortRun("--set train.checkpoint_path=" + folder_.file("run.ckpt"));
  ranklab::RunStore store(db());
  const auto spans = store.spans(1);
  int evaluations = 0, checkpoints = 0, hops = 0, device = 0;
  const auto steps = store.steps(1);
  for (const auto& s : spans) {
    if (ranklab::isCommSpan(s)) {  // steps 50 and 100 (telemetry.span_every = 50) opened up
      EXPECT_TRUE(s.step == 50 || s.step == 100) << s.kind << " at step " << s.step;
      ++hops;
      continue;
    }
    if (ranklab::isDeviceSpan(s)) {  // and their work on the device, inside the step
      EXPECT_TRUE(s.step == 50 || s.step == 100) << s.kind << " at step " << s.step;
      EXPECT_GE(s.end_ns, s.start_ns) << s.kind;
      for (const auto& step : steps) {
        if (step.rank == s.rank && step.step == s.step) {
          EXPECT_LE(s.end_ns, step.time_ns) << s.kind << " after its step's end";
        }
      }
      ++device;
      continue;
    }
    EXPECT_EQ(s.step, 100) << s.kind;
    EXPECT_GT(s.end_ns, s.start_ns) << s.kind;
    EXPECT_GT(s.start_ns, 0) << "on the rank's clock, after its start";
    evaluations += s.kind == "evaluate";
    checkpoints += s.kind == "checkpoint";
  }
  EXPECT_EQ(evaluations, 2) << "one per rank";
  EXPECT_EQ(checkpoints, 2) << "every rank takes part in writing it";
  EXPECT_EQ(hops, 2 * 2 * 2) << "2 ranks, 2 sampled steps, 2(N-1) = 2 ring hops each";
  // 3 Linear layers' forward and backward, the loss head's two, the update.
  EXPECT_EQ(device, 2 * 2 * (2 * 3 + 2 + 1)) << "2 ranks, 2 sampled steps";
  // The evaluation follows the rank's last step on the same clock.
  for (const auto& s : spans) {
    for (const auto& step : steps) {
      if (step.rank == s.rank && step.step == 100 && s.kind == "evaluate") {
        EXPECT_GE(s.start_ns, step.time_ns - 1000000) << "rank " << s.rank;
      }
    }
  }
}

// The one-line-a-second progress counts towards the ranks' planned last step.
TEST_F(CliStore, ProgressShowsPercentDoneAndAnEta) {
  // 1 ms more a step on rank 1: the 1872 steps take more than the second between two
  // lines even on an idle machine (the quickstart alone trains 4 epochs in 0.9 s).
  const auto r = runCli("run " + quickstart() +
                        " --ranks 2 --set train.epochs=4 --set fault.straggler_rank=1"
                        " --set fault.straggler_delay_ms=1 --db " +
                        db());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::regex line(R"(step (\d+)/1872 +(\d+\.\d) % +ETA (\d+ s|\d+ min \d+ s))");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, line)) << r.out;
  const double percent = std::stod(m[2]);
  EXPECT_NEAR(percent, 100.0 * std::stod(m[1]) / 1872, 0.06) << m[0];
  EXPECT_GT(percent, 0);
  EXPECT_LT(percent, 100);
}

}  // namespace
