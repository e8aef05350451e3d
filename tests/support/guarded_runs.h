// Test support: a small MLP job run on the CPU and again on guarded devices
// (guarded_device.h), for the tests that a device path follows the CPU bit for bit while
// only what it must crosses between host and device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/job/job_spec.h"
#include "tests/support/guarded_device.h"
#include "tests/support/thread_ranks.h"

namespace ranklab::testing {

// smallMlpJob()'s steps, and its parameters: model.layers = [32] on 784 inputs and 10 classes.
constexpr int64_t kSmallMlpSteps = 12;
constexpr size_t kSmallMlpParameters = 784 * 32 + 32 + 32 * 10 + 10;

// kSmallMlpSteps steps of an MLP with one hidden layer of 32, in batches of 20, on 2 ranks.
inline JobSpec smallMlpJob() {
  JobSpec job;
  job.model.layers = {32};
  job.train.batch_size = 20;
  job.train.max_steps = kSmallMlpSteps;
  job.parallel.ranks = 2;
  return job;
}

// A change to a job, named for the failure messages.
using JobVariant = std::pair<std::string, std::function<void(JobSpec&)>>;

// What a rank's guarded device counted (GuardedDevice's counters).
struct DeviceCounts {
  int64_t floats_downloaded = 0;
  int gemms = 0;
  int codec_encodes = 0;
};

inline DeviceCounts countsOf(const GuardedDevice& device) {
  return {device.floats_downloaded, device.gemms, device.codec_encodes};
}

// What rank r's guarded device counted since `before`.
inline DeviceCounts countedSince(int rank, const DeviceCounts& before) {
  const DeviceCounts now = countsOf(guarded(rank));
  return {now.floats_downloaded - before.floats_downloaded, now.gemms - before.gemms,
          now.codec_encodes - before.codec_encodes};
}

// One job run on the CPU and on guarded devices, with what each training rank's device
// counted during the guarded run.
struct CpuAndGuardedRuns {
  std::vector<RunRecorder> on_cpu;
  std::vector<RunRecorder> on_device;
  std::vector<DeviceCounts> counted;
};

// Runs `cpu` as it is and with train.device = "guarded", and EXPECTs the two runs to agree
// bit for bit (expectSameRun, under `what`). registerGuardedDevices() first.
inline CpuAndGuardedRuns runOnCpuAndGuarded(const JobSpec& cpu, const std::string& what) {
  JobSpec off = cpu;
  off.train.device = "guarded";
  std::vector<DeviceCounts> before;
  for (int r = 0; r < cpu.parallel.ranks; ++r) before.push_back(countsOf(guarded(r)));
  CpuAndGuardedRuns runs;
  runs.on_cpu = trainWithThreads(cpu);
  runs.on_device = trainWithThreads(off);
  expectSameRun(runs.on_device, runs.on_cpu, what);
  for (int r = 0; r < cpu.parallel.ranks; ++r) runs.counted.push_back(countedSince(r, before[r]));
  return runs;
}

}  // namespace ranklab::testing
