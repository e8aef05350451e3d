// `ranklab analyze --json` and `ranklab runs show` on runs stored through the real store:
// each straggler's kind and share, the hang section of a run that did not finish, their keys
// exactly (outside scripts read them), and the same in `runs show`'s text and JSON.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "tests/integration/cli_runner.h"
#include "tests/support/sync_run_rows.h"

namespace {

using ranklab::testing::runCli;
using ranklab::testing::storeSyncRun;
using ranklab::testing::SyncRunShape;

std::set<std::string> keysOf(const nlohmann::json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

class CliAnalyze : public ranklab::testing::CliTest {
 protected:
  // Rank 3 20 % slower every step; rank 1's rows end at step 6 unless the run is done.
  int64_t storeRun(const std::string& status) {
    ranklab::RunStore store(db());
    ranklab::EventRow failure;
    failure.rank = 1;
    failure.step = 6;
    failure.kind = "failure";
    failure.text = "rank 1 hung after step 6";
    const bool done = status == "done";
    return storeSyncRun(
        store, {.world = 8,
                .steps = 30,
                .status = status,
                .compute_ns = [](int rank, int64_t) { return rank == 3 ? 12'000'000 : 10'000'000; },
                .stopped_rank = done ? -1 : 1,
                .stopped_step = 6,
                .events = done ? std::vector<ranklab::EventRow>{}
                               : std::vector<ranklab::EventRow>{failure}});
  }
  nlohmann::json json(const std::string& command) {
    const auto r = runCli(command + " --json --db " + db());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return nlohmann::json::parse(r.out);
  }
};

TEST_F(CliAnalyze, StragglersCarryKindAndShareAndAFailedRunItsHangWithExactKeys) {
  const int64_t id = storeRun("failed");
  const nlohmann::json a = json("analyze " + std::to_string(id));
  ASSERT_EQ(a["stragglers"].size(), 8u);
  for (const auto& s : a["stragglers"])
    EXPECT_EQ(keysOf(s), (std::set<std::string>{"rank", "last_arrivals", "caused_wait_s", "kind",
                                                "last_share", "recent_share"}))
        << s.dump();
  EXPECT_EQ(a["stragglers"][0]["rank"], 3);
  EXPECT_EQ(a["stragglers"][0]["kind"], "chronic");
  EXPECT_EQ(a["stragglers"][0]["last_share"], 1.0);
  EXPECT_EQ(a["stragglers"][1]["kind"], "none");
  EXPECT_EQ(keysOf(a["chronic_rule"]), (std::set<std::string>{"window", "share_above"}));
  EXPECT_EQ(a["chronic_rule"]["window"], 6) << "the steps every rank recorded";

  const nlohmann::json& hang = a["hang"];
  EXPECT_EQ(keysOf(hang),
            (std::set<std::string>{"status", "failure", "median_last_step", "ranks_behind"}));
  EXPECT_EQ(hang["status"], "failed");
  EXPECT_EQ(hang["failure"], "rank 1 hung after step 6");
  EXPECT_EQ(hang["median_last_step"], 30);
  ASSERT_EQ(hang["ranks_behind"].size(), 1u) << hang.dump();
  const nlohmann::json& behind = hang["ranks_behind"][0];
  EXPECT_EQ(keysOf(behind),
            (std::set<std::string>{"rank", "host", "last_step", "last_collective", "phase"}));
  EXPECT_EQ(behind["rank"], 1);
  EXPECT_EQ(behind["host"], "node0");
  EXPECT_EQ(behind["last_step"], 6);
  EXPECT_EQ(behind["last_collective"], 6 * ranklab::testing::kAllreducesPerStep);
  EXPECT_EQ(behind["phase"], "update");

  const nlohmann::json shown = json("runs show " + std::to_string(id));
  EXPECT_EQ(shown["stragglers"], a["stragglers"]);
  EXPECT_EQ(shown["hang"], a["hang"]);
}

TEST_F(CliAnalyze, ARunThatEndedDoneHasANullHang) {
  const int64_t id = storeRun("done");
  const nlohmann::json a = json("analyze " + std::to_string(id));
  ASSERT_TRUE(a.contains("hang"));
  EXPECT_TRUE(a["hang"].is_null());
  EXPECT_TRUE(json("runs show " + std::to_string(id))["hang"].is_null());
}

TEST_F(CliAnalyze, RunsShowPrintsTheChronicStragglerAndTheRankBehind) {
  const int64_t id = storeRun("failed");
  const auto r = runCli("runs show " + std::to_string(id) + " --db " + db());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(rank 3 +chronic +100\.0 % +100\.0 %)")))
      << r.out;
  EXPECT_NE(r.out.find("hang: the run is failed: rank 1 hung after step 6"), std::string::npos)
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(rank 1 +node0 +6 +12 +update)"))) << r.out;
}

}  // namespace

namespace {

// Past 32 ranks `runs show` lists the ranks that waited least (the slowest) and a line on the
// others, not a row each.
TEST_F(CliAnalyze, RunsShowOfManyRanksListsTheSlowestAndSummarisesTheRest) {
  ranklab::RunStore store(db());
  const int64_t id = storeSyncRun(
      store, {.world = 40, .steps = 10, .status = "done", .compute_ns = [](int rank, int64_t) {
                return rank == 33 ? 12'000'000 : 10'000'000;
              }});
  const auto shown = runCli("runs show " + std::to_string(id) + " --db " + db());
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  EXPECT_NE(shown.out.find("40 ranks; the 10 that waited least"), std::string::npos) << shown.out;
  const std::regex first_row(R"(held MB\n +33 )");
  EXPECT_TRUE(std::regex_search(shown.out, first_row)) << shown.out;
  EXPECT_NE(shown.out.find("... 30 more ranks"), std::string::npos) << shown.out;
}

}  // namespace
