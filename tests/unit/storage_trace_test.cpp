// The Chrome trace export: valid JSON whatever the texts hold, one process per rank, every
// step's phases back to back on the compute and communication threads, the ranks' clocks
// lined up at their first common barrier, spans and events where they happened.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "storage/chrome_trace.h"
#include "storage/run_store.h"
#include "tests/unit/storage_test_support.h"

namespace ranklab {
namespace {

using namespace storage_test;  // NOLINT: the shared examples
using nlohmann::json;

class ChromeTraceTest : public RunStoreTest {
 protected:
  // Two ranks, three steps each; rank 1's clock runs 5 ms behind rank 0's.
  int64_t storeRun(RunStore& store) {
    const int64_t id = store.createRun(exampleRun());
    RecordBatch batch;
    for (int rank = 0; rank < 2; ++rank) {
      batch.ranks.push_back(exampleRank(id, rank));
      for (int64_t step = 1; step <= 3; ++step) {
        StepRow s = exampleStep(id, rank, step);
        s.time_ns = step * 1'000'000 + (rank == 1 ? -5'000 : 0) + 100'000;
        if (rank == 1) s.wait_ns = 0;  // the late rank does not wait
        batch.steps.push_back(s);
      }
    }
    batch.spans.push_back({id, 0, 2, "evaluate", 2'200'000, 2'300'000});
    batch.events.push_back(exampleEvent(id, 1, 2, "fault", "kill: \"SIGKILL\"\nafter step 2"));
    batch.events.back().time_ns = 0;  // no time of its own: at its step's end
    batch.events.push_back(exampleEvent(id, -1, 3, "restart", "restart 1 of 2"));
    store.write(batch);
    return id;
  }

  json exported(RunStore& store, int64_t id, int64_t* count = nullptr) {
    std::ostringstream out;
    const int64_t n = writeChromeTrace(store, id, out);
    if (count) *count = n;
    return json::parse(out.str());
  }
};

TEST_F(ChromeTraceTest, NamesOneProcessPerRankWithItsThreads) {
  RunStore store(dbPath());
  int64_t count = 0;
  const json trace = exported(store, storeRun(store), &count);
  EXPECT_EQ(count, static_cast<int64_t>(trace["traceEvents"].size()));
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
    if (e["name"] == "thread_name") threads[{e["pid"], e["tid"]}] = e["args"]["name"];
  }
  EXPECT_EQ(processes, (std::map<int, std::string>{{1, "rank 0 (node0)"}, {2, "rank 1 (node1)"}}));
  EXPECT_EQ(threads[std::make_pair(2, int(kComputeThread))], "compute");
  EXPECT_EQ(threads[std::make_pair(2, int(kCommThread))], "communication");
  EXPECT_EQ(trace["otherData"]["world"], 4);
}

TEST_F(ChromeTraceTest, LaysEveryStepsPhasesBackToBackEndingAtItsEnd) {
  RunStore store(dbPath());
  const int64_t id = storeRun(store);
  const json trace = exported(store, id);
  // (pid, step) -> the phases in order, each [ts, dur] in µs.
  std::map<std::pair<int, int64_t>, std::vector<json>> phases;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["cat"] != "span") phases[{e["pid"], e["args"]["step"]}].push_back(e);
  ASSERT_EQ(phases.size(), 6u);
  for (const StepRow& s : store.steps(id)) {
    const auto& events = phases[{s.rank + 1, s.step}];
    ASSERT_EQ(events.size(), s.rank == 1 ? 6u : 7u) << "rank 1 has no wait";
    EXPECT_EQ(events.front()["name"], "data");
    EXPECT_EQ(events.back()["name"], "update");
    EXPECT_EQ(events.back()["tid"], kComputeThread);
    for (size_t i = 1; i < events.size(); ++i)
      EXPECT_NEAR(events[i]["ts"].get<double>(),
                  events[i - 1]["ts"].get<double>() + events[i - 1]["dur"].get<double>(), 1e-3);
    double total = 0;
    for (const json& e : events) {
      total += e["dur"].get<double>();
      const bool comm = e["name"] == "comm" || e["name"] == "wait";
      EXPECT_EQ(e["tid"], comm ? kCommThread : kComputeThread) << e;
    }
    EXPECT_NEAR(total, double(phaseTotal(s.phases())) / 1e3, 1e-3);
  }
  // The ranks' clocks are lined up at the first step: its comm starts at once on both.
  auto commStart = [&](int pid) {
    for (const json& e : phases[{pid, 1}])
      if (e["name"] == "comm") return e["ts"].get<double>();
    return -1.0;
  };
  EXPECT_NEAR(commStart(1), commStart(2), 1e-3);
  for (const auto& [key, events] : phases) EXPECT_GE(events.front()["ts"].get<double>(), 0);
}

TEST_F(ChromeTraceTest, SpansEventsAndLossGoWhereTheyHappened) {
  RunStore store(dbPath());
  const json trace = exported(store, storeRun(store));
  int spans = 0, losses = 0;
  bool fault = false, restart = false;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "span") {
      ++spans;
      EXPECT_EQ(e["name"], "evaluate");
      EXPECT_EQ(e["tid"], kSpanThread);
      EXPECT_NEAR(e["dur"].get<double>(), 100.0, 1e-9);
    }
    if (e["ph"] == "C") ++losses;
    if (e["ph"] == "i" && e["name"] == "fault") {
      fault = true;
      EXPECT_EQ(e["pid"], 2);
      EXPECT_EQ(e["args"]["text"], "kill: \"SIGKILL\"\nafter step 2");  // escaped and back
    }
    if (e["ph"] == "i" && e["name"] == "restart") restart = e["s"] == "g";
  }
  EXPECT_EQ(spans, 1);
  EXPECT_EQ(losses, 6) << "one a step";
  EXPECT_TRUE(fault);
  EXPECT_TRUE(restart);
}

TEST_F(ChromeTraceTest, ExportNamesAMissingRunAndLeavesNoPartFile) {
  RunStore store(dbPath());
  const std::string path = (dir_ / "trace.json").string();
  try {
    exportChromeTrace(store, 42, path);
    ADD_FAILURE() << "no error for a missing run";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("no run with id 42"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".part"));
  EXPECT_GT(exportChromeTrace(store, storeRun(store), path), 0);
  EXPECT_NO_THROW(json::parse(std::ifstream(path)));
}

}  // namespace
}  // namespace ranklab
