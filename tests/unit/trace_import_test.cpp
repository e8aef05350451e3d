// The PyTorch trace importer on traces written here in both of torch.profiler's forms
// (Kineto's object with distributedInfo and record_param_comms sizes; the legacy bare
// array), with planted clocks, a planted straggler and planted bad files; and the run
// analyses on the run it stores. The real PyTorch job's traces: tests/integration.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "storage/analysis/run_analysis.h"
#include "storage/trace_import/pytorch_trace.h"
#include "storage/trace_import/trace_import.h"
#include "tests/support/second_account.h"
#include "tests/support/trace_folder.h"

namespace ranklab {
namespace {

using nlohmann::json;

// One rank's DDP-like steps, in microseconds on its own clock (`clock_us` added to each).
struct PlantedRank {
  int rank = 0;
  double clock_us = 0;
  double forward_us = 1000;  // a straggler's is longer
};

constexpr int kSteps = 5;
constexpr double kStepGapUs = 50;
constexpr double kDataUs = 100, kBackwardUs = 2000, kTransferUs = 300, kUpdateUs = 200;
constexpr int64_t kElements = 1000;  // float32: 4,000 bytes per all-reduce

json complete(const std::string& name, double ts, double dur, int tid, json args = json::object(),
              const std::string& cat = "cpu_op") {
  return {{"ph", "X"},  {"name", name}, {"cat", cat}, {"pid", 7},
          {"tid", tid}, {"ts", ts},     {"dur", dur}, {"args", args}};
}

// Steps where every rank's all-reduce starts when it finished backward and ends once the
// slowest rank's has arrived and kTransferUs passed (`latest_forward_us` is the slowest's).
json plantedEvents(const PlantedRank& r, double latest_forward_us) {
  json events = json::array();
  double t = 100;  // traces' clocks count from 0: the first step a little after
  for (int step = 1; step <= kSteps; ++step) {
    const double start = t, arrival = start + kDataUs + r.forward_us + kBackwardUs;
    const double all_arrived = start + kDataUs + latest_forward_us + kBackwardUs;
    const double end_comm = all_arrived + kTransferUs, end = end_comm + kUpdateUs;
    const double c = r.clock_us;
    events.push_back(complete("ProfilerStep#" + std::to_string(step), c + start, end - start, 1));
    events.push_back(complete("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                              c + start, kDataUs, 1));
    events.push_back(
        complete("DistributedDataParallel.forward", c + start + kDataUs, r.forward_us, 1));
    events.push_back(complete("autograd::engine::evaluate_function: AddmmBackward0",
                              c + arrival - kBackwardUs, kBackwardUs, 1));
    events.push_back(complete("record_param_comms", c + arrival, 5, 1,
                              {{"In msg nelems", kElements}, {"dtype", "Float"}}));
    events.push_back(complete("gloo:all_reduce", c + arrival, end_comm - arrival, 3));
    events.push_back(complete("Optimizer.step#SGD.step", c + end_comm, kUpdateUs, 1));
    events.push_back(
        json{{"ph", "i"}, {"name", "marker"}, {"pid", 7}, {"tid", 1}, {"ts", c + end}});
    t = end + kStepGapUs;
  }
  events.push_back(complete("aten::zeros", r.clock_us + 40, 10, 1));  // before every step
  return events;
}

class TraceImportTest : public testing::TraceFolderTest {
 protected:
  std::string writeKineto(const std::string& name, const PlantedRank& r, double latest, int world) {
    const json doc{
        {"schemaVersion", 1},
        {"distributedInfo", {{"backend", "gloo"}, {"rank", r.rank}, {"world_size", world}}},
        {"traceEvents", plantedEvents(r, latest)}};
    return write(name, doc.dump());
  }
  RunStore& store() { return store_; }
};

TEST_F(TraceImportTest, KinetoTracesBecomeARunWithAlignedClocksSizesAndPhasesThatAddUp) {
  // Files in reverse order: the ranks come from distributedInfo, not the names.
  const std::string b = writeKineto("a.json", {1, 777'000.0, 1000}, 1000, 2);
  const std::string a = writeKineto("b.json", {0, 0.0, 1000}, 1000, 2);
  const ImportReport report = importPytorchTraces(store(), {b, a}, "planted");
  EXPECT_EQ(report.ranks[0], "rank 0: " + a + " (distributedInfo)");
  EXPECT_EQ(report.collective_source, "the backend's ops (gloo:/nccl: events)");
  EXPECT_EQ(report.collectives, 2 * kSteps);
  EXPECT_EQ(report.kept_other, 2);  // each rank's aten::zeros before its first step
  const auto run = store().run(report.run_id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->origin, "pytorch-import");
  EXPECT_EQ(run->strategy, "pytorch-ddp");
  EXPECT_EQ(run->algorithm, "gloo");
  EXPECT_EQ(run->world, 2);
  const auto steps = store().steps(report.run_id);
  ASSERT_EQ(steps.size(), size_t(2 * kSteps));
  const double step_us = kDataUs + 1000 + kBackwardUs + kTransferUs + kUpdateUs;
  for (const StepRow& s : steps) {
    EXPECT_EQ(s.bytes_tx, kElements * 4);
    EXPECT_EQ(s.allreduces, 1);
    EXPECT_NEAR(double(phaseTotal(s.phases()) - s.comm_hidden_ns) / 1e3, step_us, 0.01);
    EXPECT_NEAR(double(s.comm_ns) / 1e3, kTransferUs, 0.01);
    EXPECT_EQ(s.wait_ns, 0);
  }
  // 777 ms apart on their own clocks, the ranks' steps end together once aligned.
  EXPECT_EQ(steps[0].time_ns, steps[kSteps].time_ns);
}

TEST_F(TraceImportTest, AnalysesNameThePlantedStragglerItsCostAndTheCriticalPath) {
  const double slow_us = 1000 + 3000;  // rank 2's forward takes 3 ms longer
  std::vector<std::string> files;
  for (int rank = 0; rank < 3; ++rank)
    files.push_back(writeKineto("r" + std::to_string(rank) + ".json",
                                {rank, rank * 1e5, rank == 2 ? slow_us : 1000}, slow_us, 3));
  const ImportReport report = importPytorchTraces(store(), files, "");
  const RunAnalysis a = analyzeRun(store(), report.run_id);
  ASSERT_EQ(a.stragglers.size(), 3u);
  EXPECT_EQ(a.stragglers[0].rank, 2);
  EXPECT_EQ(a.stragglers[0].last_arrivals, kSteps);
  // Two ranks each wait 3 ms at every step's all-reduce.
  EXPECT_NEAR(a.stragglers[0].caused_wait_s, 2 * 3e-3 * kSteps, 1e-6);
  ASSERT_EQ(a.collectives.size(), 1u);
  EXPECT_EQ(a.collectives[0].kind, "all_reduce");
  EXPECT_NEAR(a.collectives[0].transfer_s, kTransferUs * 1e-6 * kSteps, 1e-6);
  EXPECT_NEAR(a.collectives[0].wait_s, 2 * 3e-3 * kSteps, 1e-6);
  // nccl-tests' bus bandwidth: 2 (n-1)/n S / t.
  EXPECT_NEAR(a.collectives[0].busbw_gbps, 2.0 * 2 / 3 * kElements * 4 / (kTransferUs * 1e-6) / 1e9,
              1e-6);
  for (const RankBreakdown& b : a.breakdown) {
    EXPECT_NEAR(b.wait_s, b.rank == 2 ? 0 : 3e-3 * kSteps, 1e-6) << "rank " << b.rank;
    EXPECT_NEAR(b.idle_s, kStepGapUs * 1e-6 * (kSteps - 1), 1e-6) << "rank " << b.rank;
  }
  const CriticalPath& p = a.critical_path;
  EXPECT_EQ(p.steps, kSteps);
  ASSERT_FALSE(p.shares.empty());
  EXPECT_EQ(p.shares[0].rank, 2);
  EXPECT_EQ(p.shares[0].phase, "forward");
  double total = 0;
  for (const PathShare& s : p.shares) total += s.share;
  EXPECT_NEAR(total, 1.0, 1e-9);
  EXPECT_EQ(p.what_if_rank, 2);
  EXPECT_NEAR(p.path_s - p.what_if_s, 3e-3 * kSteps, 1e-6);
}

TEST_F(TraceImportTest, TheLegacyArrayTakesItsRanksFromTheFileOrder) {
  const json r0 = plantedEvents({0, 0.0, 1000}, 1000), r1 = plantedEvents({1, 50.0, 1000}, 1000);
  const ImportReport report = importPytorchTraces(
      store(),
      {write("host_11.1.pt.trace.json", r0.dump()), write("host_12.1.pt.trace.json", r1.dump())},
      "legacy");
  EXPECT_NE(report.ranks[1].find("(file order"), std::string::npos) << report.ranks[1];
  const auto ranks = store().ranks(report.run_id);
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[1].host, "host");
  EXPECT_EQ(ranks[1].pid, 12);
}

TEST_F(TraceImportTest, BadFilesAreNamedWithTheirOffsetAndTheGoodOnesImported) {
  const std::string good = writeKineto("good.json", {0, 0.0, 1000}, 1000, 1);
  const std::string text = json{{"traceEvents", plantedEvents({0, 0.0, 1000}, 1000)}}.dump();
  write("truncated.json", text.substr(0, 1000));
  write("other-tool.json", R"({"version": 3, "frames": []})");
  write("no-steps.json", json::array({complete("aten::mm", 0, 5, 1)}).dump());
  write("far-future.json", json::array({complete("ProfilerStep#1", 1e300, 5, 1)}).dump());
  const ImportReport report = importPytorchTraces(store(), {folder_.path().string()}, "");
  EXPECT_EQ(report.ranks.size(), 1u);
  ASSERT_EQ(report.skipped.size(), 4u);
  std::string all;
  for (const auto& s : report.skipped) all += s + "\n";
  EXPECT_NE(all.find("truncated.json: not valid JSON at byte 10"), std::string::npos) << all;
  EXPECT_NE(all.find("other-tool.json: JSON, but not a Chrome trace"), std::string::npos) << all;
  EXPECT_NE(all.find("no-steps.json: a trace without ProfilerStep#N"), std::string::npos) << all;
  EXPECT_NE(all.find("far-future.json: event \"ProfilerStep#1\" near byte"), std::string::npos)
      << all;
  EXPECT_NE(all.find("(allowed: 0 to 2^61 ns)"), std::string::npos) << all;
  (void)good;
}

TEST_F(TraceImportTest, TracesOfDifferentRunsAreRefusedAndNothingStored) {
  const std::string a = writeKineto("a.json", {0, 0.0, 1000}, 1000, 2);
  const std::string b = writeKineto("b.json", {0, 0.0, 1000}, 1000, 2);
  try {
    importPytorchTraces(store(), {a, b}, "");
    FAIL() << "two rank-0 traces imported";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("both say rank 0"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(store().listRuns().empty());
  try {
    importPytorchTraces(store(), {folder_.file("missing.json")}, "");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.json: no such file"), std::string::npos);
  }
}

// Issue 57, item 5: a FIFO without a writer blocked the import for ever; a device was read
// without end. Each is refused within a second, naming the file and the cause.
TEST_F(TraceImportTest, DevicesFifosHugeAndUnreadableFilesAreRefusedWithinASecond) {
  const std::string fifo = folder_.file("pipe.json");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string huge = write("huge.json", "[");
  std::filesystem::resize_file(huge, uint64_t{5} << 30);  // sparse
  const std::pair<std::string, std::string> cases[] = {
      {fifo, fifo + ": is a FIFO (a named pipe), not a regular file"},
      {"/dev/zero", "/dev/zero: is a character device, not a regular file"},
      {"/proc/self/mem", "/proc/self/mem: cannot read: input/output error"},
      {huge, huge + ": is 5 GiB; trace files are limited to 4 GiB"}};
  for (const auto& [path, expected] : cases) {
    const auto start = std::chrono::steady_clock::now();
    try {
      importPytorchTraces(store(), {path}, "");
      ADD_FAILURE() << path << " imported";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1)) << path;
  }
  EXPECT_TRUE(store().listRuns().empty());
}

TEST_F(TraceImportTest, AFileOrFolderThisAccountMayNotReadSaysPermissionDenied) {
  if (!testing::canBecomeNobody()) GTEST_SKIP() << "needs root to become nobody (uid 65534)";
  std::filesystem::permissions(folder_.path(), std::filesystem::perms(0755));
  const std::string secret = writeKineto("secret.json", {0, 0.0, 1000}, 1000, 1);
  ASSERT_EQ(chmod(secret.c_str(), 0), 0);
  const std::filesystem::path closed = folder_.path() / "closed";
  std::filesystem::create_directory(closed);
  std::filesystem::permissions(closed, std::filesystem::perms(0700));
  const std::string inside = (closed / "a.json").string();
  auto refusedWith = [](const std::string& path, const std::string& expected) {
    try {
      readPytorchTrace(path);
    } catch (const std::runtime_error& e) {
      return std::string(e.what()) == expected;
    }
    return false;
  };
  EXPECT_TRUE(testing::asNobody(
      [&] { return refusedWith(secret, secret + ": cannot open: permission denied"); }));
  EXPECT_TRUE(testing::asNobody([&] {
    try {
      traceFilesAt(inside);
    } catch (const std::runtime_error& e) {
      return std::string(e.what()) == inside + ": cannot stat: permission denied";
    }
    return false;
  }));
}

}  // namespace
}  // namespace ranklab
