// Every communication strategy through the real CLI under mpirun: accuracy against one
// rank on the same samples, a straggler's effect read back from the stored run, and
// `ranklab bench allreduce` checking its own results.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "storage/run_store.h"
#include "tests/integration/cli_runner.h"

namespace ranklab {
namespace {

using testing::runCli;

class Strategies : public testing::CliTest {
 protected:
  // Runs the quickstart with `args`, returns the stored run's summary as JSON.
  nlohmann::json runQuickstart(const std::string& args) {
    const auto r = runCli("run " + quickstart() + " " + args + " --quiet --json --db " + db());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return testing::lastJson(r.out);
  }

  // Mean wait per step (ms) of the training ranks other than `skip`, from the store.
  double meanWaitMs(int64_t run_id, int training_ranks, int skip) {
    RunStore store(db());
    double wait_ns = 0;
    int64_t steps = 0;
    for (const StepRow& s : store.steps(run_id)) {
      if (s.rank == skip || s.rank >= training_ranks) continue;
      wait_ns += static_cast<double>(s.wait_ns);
      ++steps;
    }
    return steps ? wait_ns / steps / 1e6 : 0;
  }
};

struct AccuracyCase {
  const char* strategy;
  double tolerance;  // how far below the 1-rank accuracy a 4-rank run may land
};

void PrintTo(const AccuracyCase& c, std::ostream* out) {
  *out << c.strategy << " within " << c.tolerance;
}

class StrategyAccuracy : public Strategies, public ::testing::WithParamInterface<AccuracyCase> {};

// The quickstart (2 epochs, 64 samples per rank per step) on 1 rank and on 4 ranks sees the
// same 120k samples; 4 ranks must not lose more than the tolerance.
TEST_P(StrategyAccuracy, FourRanksKeepTheOneRankAccuracy) {
  const auto [strategy, tolerance] = GetParam();
  const auto one = runQuickstart("--ranks 1");
  const auto four = runQuickstart(std::string("--ranks 4 --set parallel.strategy=") + strategy);
  const double a1 = one["test_accuracy"].get<double>(), a4 = four["test_accuracy"].get<double>();
  std::printf("%s: 1 rank %.4f, 4 ranks %.4f (%+.2f points), %lld vs %lld samples\n", strategy, a1,
              a4, 100 * (a4 - a1), one["samples"].get<long long>(),
              four["samples"].get<long long>());
  EXPECT_EQ(four["status"], "done");
  EXPECT_EQ(four["strategy"], strategy);
  EXPECT_NEAR(four["samples"].get<double>(), one["samples"].get<double>(), 4 * 64);
  EXPECT_GE(a4, a1 - tolerance);
  const bool ps = std::string(strategy).rfind("ps-", 0) == 0;
  EXPECT_EQ(four["world"], ps ? 5 : 4) << "one server rank on top of the 4 workers";
  EXPECT_EQ(four["servers"].size(), ps ? 1u : 0u);
  if (ps) {
    EXPECT_GT(four["servers"][0]["pushes"].get<int64_t>(), 4 * 400);
  }
}

INSTANTIATE_TEST_SUITE_P(Quickstart, StrategyAccuracy,
                         ::testing::Values(AccuracyCase{"allreduce", 0.01},
                                           AccuracyCase{"ps-sync", 0.01},
                                           AccuracyCase{"local-sgd", 0.01},
                                           // Unbounded staleness follows the machine's
                                           // scheduling: -0.5 and -1.3 points here, -2.2
                                           // under ASan in CI (2026-11-26).
                                           AccuracyCase{"ps-async", 0.03}),
                         [](const auto& info) {
                           std::string name = info.param.strategy;
                           std::erase(name, '-');
                           return name;
                         });

// Sums of a stored run's bytes: what the workers sent (pushes) and the servers sent
// (replies), each with what it would have been uncompressed.
struct PsBytes {
  int64_t push = 0, push_raw = 0, pull = 0, pull_raw = 0;
};

PsBytes psBytes(const nlohmann::json& summary) {
  PsBytes b;
  for (const auto& r : summary["ranks"]) {
    if (r["steps"].get<int64_t>() == 0) continue;  // a server
    b.push += r["bytes_tx"].get<int64_t>();
    b.push_raw += r["bytes_raw"].get<int64_t>();
  }
  for (const auto& v : summary["servers"]) {
    b.pull += v["bytes_tx"].get<int64_t>();
    b.pull_raw += v["bytes_raw"].get<int64_t>();
  }
  return b;
}

struct CompressedPsCase {
  const char* strategy;
  double fp16_tolerance, topk_tolerance;  // how far below uncompressed each may land
};

void PrintTo(const CompressedPsCase& c, std::ostream* out) {
  *out << c.strategy;
}

class CompressedPs : public Strategies, public ::testing::WithParamInterface<CompressedPsCase> {};

// The quickstart on 4 workers and a server, uncompressed, with fp16 and with topk 1%: the
// compressed runs land within the tolerance of the uncompressed one and store fewer bytes
// both ways (fp16 2x; topk's pushes >= 20x, its replies, the sparse change of a round,
// >= 5x). topk 1% costs about 0.9 points on this job under all-reduce too
// (bench/LOG.md), hence 1.5 under ps-sync; ps-async allows 2 as in the issue.
TEST_P(CompressedPs, TopkAndFp16TrainLikeUncompressedOnFewerBytes) {
  const auto [strategy, fp16_tolerance, topk_tolerance] = GetParam();
  const std::string ps = std::string(" --ranks 4 --set parallel.strategy=") + strategy;
  const auto plain = runQuickstart(ps);
  const PsBytes plain_bytes = psBytes(plain);
  EXPECT_EQ(plain_bytes.push, plain_bytes.push_raw);
  EXPECT_EQ(plain_bytes.pull, plain_bytes.pull_raw);
  struct Arm {
    const char* codec;
    double push_ratio, pull_ratio, tolerance;
  };
  for (const Arm& arm :
       {Arm{"fp16", 1.9, 1.9, fp16_tolerance}, Arm{"topk", 20, 5, topk_tolerance}}) {
    const auto run = runQuickstart(ps + " --set compression.codec=" + arm.codec);
    const PsBytes bytes = psBytes(run);
    const double a0 = plain["test_accuracy"].get<double>(), a = run["test_accuracy"].get<double>();
    std::printf(
        "%s + %s: accuracy %.4f vs %.4f uncompressed (%+.2f points); pushes %.1fx, replies "
        "%.1fx fewer bytes\n",
        strategy, arm.codec, a, a0, 100 * (a - a0), double(bytes.push_raw) / bytes.push,
        double(bytes.pull_raw) / bytes.pull);
    EXPECT_EQ(run["status"], "done");
    EXPECT_EQ(run["codec"], arm.codec);
    EXPECT_EQ(run["samples"], plain["samples"]);
    EXPECT_GE(a, a0 - arm.tolerance) << arm.codec;
    // The uncompressed equivalent is what the uncompressed run sent.
    EXPECT_EQ(bytes.push_raw, plain_bytes.push);
    EXPECT_GE(double(bytes.push_raw) / bytes.push, arm.push_ratio) << arm.codec;
    EXPECT_GE(double(bytes.pull_raw) / bytes.pull, arm.pull_ratio) << arm.codec;
    EXPECT_LT(run["bytes_tx"].get<int64_t>(), plain["bytes_tx"].get<int64_t>());
    EXPECT_EQ(run["bytes_raw"].get<int64_t>(), plain_bytes.push + plain_bytes.pull);
    // `runs show` prints the ratios: the run's, each worker's pushes, the server's replies.
    const auto shown =
        runCli("runs show " + std::to_string(run["id"].get<int64_t>()) + " --db " + db());
    EXPECT_NE(shown.out.find(" uncompressed ("), std::string::npos) << shown.out;
    const auto server_line = shown.out.substr(shown.out.find("server rank"));
    EXPECT_NE(server_line.find("x)"), std::string::npos) << shown.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Quickstart, CompressedPs,
                         ::testing::Values(CompressedPsCase{"ps-sync", 0.01, 0.015},
                                           CompressedPsCase{"ps-async", 0.02, 0.02}),
                         [](const auto& info) {
                           std::string name = info.param.strategy;
                           std::erase(name, '-');
                           return name;
                         });

// A rank that sleeps 100 ms per step: synchronous ranks wait for it at every step, ps-async
// workers do not (unless a staleness bound makes them). The delay is several steps of the
// others' compute even under ASan on 2 loaded cores (30 ms was not: there the fast workers
// never got 2 pushes ahead, and the bound held nothing back).
TEST_F(Strategies, StragglerMakesSyncRanksWaitButNotAsyncOnes) {
  // 12 steps a rank: the waits are means per step, and a 100 ms straggler stands out in each.
  const std::string small =
      " --ranks 4 --set data.train_limit=3200 --set data.test_limit=1000 --set train.epochs=1";
  const std::string straggler = " --set fault.straggler_rank=0 --set fault.straggler_delay_ms=100";
  struct Arm {
    std::string name, args;
    double wait_ms = 0;
  };
  std::vector<Arm> arms{
      {"sync", ""},
      {"sync + straggler", straggler},
      {"ps-async", " --set parallel.strategy=ps-async"},
      {"ps-async + straggler", " --set parallel.strategy=ps-async" + straggler},
      {"ps-async staleness 1 + straggler",
       " --set parallel.strategy=ps-async --set parallel.staleness=1" + straggler}};
  for (auto& arm : arms) {
    const auto s = runQuickstart(small + arm.args);
    ASSERT_EQ(s["status"], "done") << arm.name;
    arm.wait_ms = meanWaitMs(s["id"].get<int64_t>(), 4, 0);
    std::printf("%-34s ranks 1-3 wait %6.2f ms per step\n", arm.name.c_str(), arm.wait_ms);
  }
  EXPECT_GT(arms[1].wait_ms, arms[0].wait_ms + 50) << "sync ranks wait for the straggler";
  EXPECT_LT(arms[3].wait_ms, arms[2].wait_ms + 3) << "async workers do not";
  EXPECT_GT(arms[4].wait_ms, arms[3].wait_ms + 30) << "a staleness bound makes them wait again";
}

TEST_F(Strategies, HierarchicalAndBucketedAllreduceTrain) {
  const std::string small =
      " --ranks 4 --set data.train_limit=6400 --set data.test_limit=1000 --set train.epochs=1";
  const auto plain = runQuickstart(small);
  const auto hier = runQuickstart(small +
                                  " --set parallel.algorithm=hierarchical"
                                  " --set parallel.ranks_per_host=2");
  const auto bucketed = runQuickstart(small + " --set parallel.bucket_kb=128");
  const auto priority = runQuickstart(small +
                                      " --set parallel.comm_schedule=priority"
                                      " --set parallel.partition_kb=128");
  EXPECT_EQ(hier["algorithm"], "hierarchical");
  // Real ranks, the same 128 KiB pieces in another order, each updated as it arrives: the
  // same sums and updates as the buckets, so the same model to the bit.
  EXPECT_EQ(priority["status"], "done");
  EXPECT_EQ(priority["test_loss"], bucketed["test_loss"]);
  EXPECT_EQ(priority["test_accuracy"], bucketed["test_accuracy"]);
  EXPECT_EQ(priority["bytes_tx"], bucketed["bytes_tx"]);
  // Same samples, same mean gradient; only the order of float additions differs.
  EXPECT_NEAR(hier["test_accuracy"].get<double>(), plain["test_accuracy"].get<double>(), 0.01);
  EXPECT_NEAR(bucketed["test_accuracy"].get<double>(), plain["test_accuracy"].get<double>(), 0.01);
}

TEST_F(Strategies, BenchAllreduceVerifiesEveryRow) {
  // 10 ms batches (at least 3 all-reduces each): every row is still run and verified, and
  // the test stays short under ASan (47 s with the default 0.1 s).
  const auto r =
      runCli("bench allreduce --worlds 2,3 --max-bytes 64K --repeats 1 --seconds 0.01 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto rows = nlohmann::json::parse(r.out.substr(r.out.find('[')));
  // 15 sizes (4 B .. 64 KiB) x 5 algorithms (ring, mpi, hierarchical, shm, naive) x 2 worlds.
  ASSERT_EQ(rows.size(), 15u * 5 * 2);
  for (const auto& row : rows) {
    EXPECT_TRUE(row["verified"].get<bool>()) << row.dump();
    EXPECT_GT(row["busbw_gbs"].get<double>(), 0) << row.dump();
    const int n = row["world"].get<int>();
    // The rows carry 6 significant digits.
    const double algbw = row["algbw_gbs"].get<double>();
    EXPECT_NEAR(row["busbw_gbs"].get<double>(), algbw * 2 * (n - 1) / n, 1e-5 * algbw);
    // One host: the floor is measured; small sizes take the latency paths, 64 KiB does not.
    EXPECT_GT(row["floor_seconds"].get<double>(), 0) << row.dump();
    const std::string algorithm = row["algorithm"], path = row["path"];
    const size_t bytes = row["bytes"];
    const size_t gathered = bytes * static_cast<size_t>(n - 1);  // what a gather receives
    if (algorithm == "ring") {
      EXPECT_EQ(path, gathered <= 64 * 1024 ? "gather" : "pairwise") << row.dump();
    } else if (algorithm == "shm") {
      EXPECT_EQ(path, bytes <= 16 * 1024 ? "flags" : "chunked") << row.dump();
    }
  }
}

}  // namespace
}  // namespace ranklab
