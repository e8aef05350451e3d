// A sampled step's work on the device, piece by piece (engine/model/device_trace.h): on the
// host clock for the CPU, with the network marking each layer pass, its input's copy and
// its loss head while a trace is set.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm/steady_clock.h"
#include "engine/model/device_trace.h"
#include "engine/model/models.h"
#include "tests/support/ledger_device.h"

namespace ranklab {
namespace {

using testing::DetachedDevice;

std::vector<std::string> kindsOf(const DeviceSpans& spans) {
  std::vector<std::string> kinds;
  for (const DeviceSpan& s : spans)
    kinds.push_back(std::string(s.kind) + (s.layer >= 0 ? " " + std::to_string(s.layer) : ""));
  return kinds;
}

TEST(DeviceTrace, PlacesEachPieceOnTheHostClockInTheOrderItRan) {
  DeviceTrace trace(cpuDevice());
  const int64_t before = steadyNowNs();
  trace.begin("dev-fwd", 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  trace.end();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a gap: the device idle
  trace.begin("dev-update");
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  trace.end();
  const DeviceSpans spans = trace.take();
  const int64_t after = steadyNowNs();
  ASSERT_EQ(kindsOf(spans), (std::vector<std::string>{"dev-fwd 0", "dev-update"}));
  EXPECT_GE(spans[0].begin_ns, before);
  EXPECT_GE(spans[0].end_ns - spans[0].begin_ns, 3'000'000);
  EXPECT_GE(spans[1].begin_ns - spans[0].end_ns, 2'000'000) << "the gap stays a gap";
  EXPECT_GE(spans[1].end_ns - spans[1].begin_ns, 1'000'000);
  EXPECT_LE(spans[1].end_ns, after);
  EXPECT_TRUE(trace.take().empty()) << "taken once";
}

TEST(DeviceTrace, PiecesDoNotNestAndEndOnlyWhatBegan) {
  DeviceTrace trace(cpuDevice());
  EXPECT_THROW(trace.end(), std::logic_error);
  trace.begin("dev-fwd", 0);
  EXPECT_THROW(trace.begin("dev-fwd", 1), std::logic_error);
  EXPECT_THROW(trace.take(), std::logic_error) << "a piece still open";
  trace.end();
  EXPECT_EQ(trace.take().size(), 1u);
}

TEST(DeviceTrace, ANetworkMarksEveryLayerPassAndItsHeadWhileTraced) {
  Network model =
      makeMlp(Shape{1, 1, 12}, {8, 6}, 4, 0.f, 3);  // fc0 relu fc2 relu fc4: ReLUs absorbed
  const std::vector<float> x(5 * 12, 0.25f);
  const std::vector<uint8_t> y = {0, 1, 2, 3, 0};
  DeviceTrace trace(cpuDevice());
  model.traceDevice(&trace);
  model.forward(x.data(), y.data(), 5);
  model.zeroGrads();
  model.backward(x.data(), y.data(), 5);
  model.evaluate(x.data(), y.data(), 5, 5);  // evaluation is not a training pass
  const DeviceSpans spans = trace.take();
  EXPECT_EQ(kindsOf(spans),
            (std::vector<std::string>{"dev-fwd 0", "dev-fwd 2", "dev-fwd 4", "dev-loss", "dev-loss",
                                      "dev-bwd 4", "dev-bwd 2", "dev-bwd 0"}));
  for (size_t i = 1; i < spans.size(); ++i)
    EXPECT_GE(spans[i].begin_ns, spans[i - 1].end_ns) << "piece " << i << " overlaps";

  model.traceDevice(nullptr);
  model.forward(x.data(), y.data(), 5);
  EXPECT_TRUE(trace.take().empty()) << "untraced passes mark nothing";
}

TEST(DeviceTrace, ADeviceOffTheHostShowsTheBatchsCopyFirst) {
  DetachedDevice device;
  Network model = makeMlp(Shape{1, 1, 12}, {8}, 4, 0.f, 3, device);
  const std::vector<float> x(2 * 12, 0.5f);
  const std::vector<uint8_t> y = {1, 2};
  DeviceTrace trace(device);
  model.traceDevice(&trace);
  model.forward(x.data(), y.data(), 2);
  const DeviceSpans spans = trace.take();
  ASSERT_FALSE(spans.empty());
  EXPECT_EQ(std::string(spans.front().kind), "dev-input");
}

}  // namespace
}  // namespace ranklab
