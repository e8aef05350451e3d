// A parameter server's compressed pushes from a device whose memory the host may not touch
// (tests/support/guarded_device.h): each shard's push encoded on the device
// (engine/train/ps_worker_sync.h with engine/train/device_encoder.h), only the payloads and
// the parameters crossing, and each run the CPU's bit for bit: every codec with a device
// encode under ps-sync, with and without error feedback and momentum correction, qsgd
// rounded stochastically, two servers' shards, and ps-async on one worker (where its order
// is fixed).
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/guarded_device.h"
#include "tests/support/thread_ranks.h"

namespace ranklab {
namespace {

constexpr int64_t kPsSteps = 12;
constexpr size_t kPsParameters = 784 * 32 + 32 + 32 * 10 + 10;  // model.layers = [32]

JobSpec psJob(const std::string& codec) {
  JobSpec job;
  job.model.layers = {32};
  job.train.batch_size = 20;
  job.train.max_steps = kPsSteps;
  job.parallel.ranks = 2;
  job.parallel.strategy = "ps-sync";
  job.compression.codec = codec;
  job.compression.ratio = 0.05;
  job.compression.threshold = 0.02;
  return job;
}

using Variant = std::pair<std::string, std::function<void(JobSpec&)>>;

std::vector<Variant> psVariants() {
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
    JobSpec off = cpu;
    off.train.device = "guarded";
    const int workers = cpu.parallel.ranks;
    std::vector<int64_t> downloaded(workers);
    std::vector<int> encodes(workers);
    for (int r = 0; r < workers; ++r) {
      downloaded[r] = testing::guarded(r).floats_downloaded;
      encodes[r] = testing::guarded(r).codec_encodes;
    }
    const auto want = testing::trainWithThreads(cpu);
    const auto got = testing::trainWithThreads(off);
    testing::expectSameRun(got, want, what);
    EXPECT_TRUE(testing::anyEventSays(got[0], "pushes encoded on the GPU"))
        << what << ": no device event says where the pushes were encoded";
    for (int r = 0; r < workers; ++r) {
      // A pick or an encode per shard and step (randomk's gather is one too).
      EXPECT_EQ(testing::guarded(r).codec_encodes - encodes[r], kPsSteps * cpu.parallel.servers)
          << what << " rank " << r;
      // The parameters come down once, at the start; a gradient never does (a host-staged
      // push would download kPsSteps * kPsParameters floats).
      const int64_t floats = testing::guarded(r).floats_downloaded - downloaded[r];
      EXPECT_EQ(floats, static_cast<int64_t>(kPsParameters)) << what << " rank " << r;
      if (r == 0) {
        std::printf("%s: %lld floats downloaded in %lld steps (the gradient: %zu)\n", what.c_str(),
                    static_cast<long long>(floats), static_cast<long long>(kPsSteps),
                    kPsParameters);
      }
    }
  }
}

}  // namespace
}  // namespace ranklab
