// A parameter server's compressed pushes from a device whose memory the host may not touch
// (tests/support/guarded_device.h): each shard's push encoded on the device
// (engine/train/ps_worker_sync.h with engine/train/device_encoder.h), only the payloads and
// the parameters crossing, and each run the CPU's bit for bit: every codec with a device
// encode under ps-sync, with and without error feedback and momentum correction, qsgd
// rounded stochastically, two servers' shards, and ps-async on one worker (where its order
// is fixed).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/support/guarded_device.h"
#include "tests/support/guarded_runs.h"
#include "tests/support/thread_ranks.h"

namespace ranklab {
namespace {

using testing::kSmallMlpParameters;
using testing::kSmallMlpSteps;

JobSpec psJob(const std::string& codec) {
  JobSpec job = testing::smallMlpJob();
  job.parallel.strategy = "ps-sync";
  job.compression.codec = codec;
  job.compression.ratio = 0.05;
  job.compression.threshold = 0.02;
  return job;
}

std::vector<testing::JobVariant> psVariants() {
  auto codec = [](const char* name) { return [name](JobSpec& j) { j.compression.codec = name; }; };
  return {{"topk", codec("topk")},
          {"threshold, fp16 values",
           [](JobSpec& j) {
             j.compression.codec = "threshold";
             j.compression.value_dtype = ValueDtype::kFp16;
           }},
          {"randomk", codec("randomk")},
          {"sign", codec("sign")},
          {"fp16", codec("fp16")},
          {"bf16, no error feedback",
           [](JobSpec& j) {
             j.compression.codec = "bf16";
             j.compression.error_feedback = false;
           }},
          {"qsgd", codec("qsgd")},
          {"qsgd, no error feedback: stochastic",
           [](JobSpec& j) {
             j.compression.codec = "qsgd";
             j.compression.error_feedback = false;
           }},
          {"topk, no momentum correction, 2 servers",
           [](JobSpec& j) {
             j.compression.momentum_correction = false;
             j.parallel.servers = 2;
           }},
          {"qsgd, 3 workers, 2 servers",
           [](JobSpec& j) {
             j.compression.codec = "qsgd";
             j.parallel.ranks = 3;
             j.parallel.servers = 2;
           }},
          {"ps-async, 1 worker, topk", [](JobSpec& j) {
             j.parallel.strategy = "ps-async";
             j.parallel.ranks = 1;
           }}};
}

TEST(DevicePs, PushesEncodedOnTheDeviceFollowTheCpuBitForBit) {
  testing::registerGuardedDevices();
  for (const auto& [what, apply] : psVariants()) {
    JobSpec cpu = psJob("topk");
    apply(cpu);
    const int workers = cpu.parallel.ranks;
    const auto runs = testing::runOnCpuAndGuarded(cpu, what);
    EXPECT_TRUE(testing::anyEventSays(runs.on_device[0], "pushes encoded on the GPU"))
        << what << ": no device event says where the pushes were encoded";
    for (int r = 0; r < workers; ++r) {
      // A pick or an encode per shard and step (randomk's gather is one too).
      EXPECT_EQ(runs.counted[r].codec_encodes, kSmallMlpSteps * cpu.parallel.servers)
          << what << " rank " << r;
      // The parameters come down once, at the start; a gradient never does (a host-staged
      // push would download kSmallMlpSteps * kSmallMlpParameters floats).
      const int64_t floats = runs.counted[r].floats_downloaded;
      EXPECT_EQ(floats, static_cast<int64_t>(kSmallMlpParameters)) << what << " rank " << r;
      if (r == 0) {
        std::printf("%s: %lld floats downloaded in %lld steps (the gradient: %zu)\n", what.c_str(),
                    static_cast<long long>(floats), static_cast<long long>(kSmallMlpSteps),
                    kSmallMlpParameters);
      }
    }
  }
}

}  // namespace
}  // namespace ranklab
