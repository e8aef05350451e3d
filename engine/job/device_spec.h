// What train.device names, parsed once (the job schema admits only these): "cpu", "cuda"
// (each rank's own GPU: the ranks of a host take its GPUs in turn) or "cuda:N" (GPU N).
#pragma once

#include <optional>
#include <string>

namespace ranklab {

struct DeviceSpec {
  enum class Kind { kCpu, kCuda };
  Kind kind = Kind::kCpu;
  int index = -1;  // cuda:N's N; -1 for "cuda" (the local rank's turn) and "cpu"

  bool onGpu() const { return kind == Kind::kCuda; }
  // The GPU a rank uses among a host's `gpus` (> 0).
  int gpuFor(int local_rank, int gpus) const { return index >= 0 ? index : local_rank % gpus; }
};

// nullopt when `text` is none of "cpu", "cuda", "cuda:N" (N: 0..99).
std::optional<DeviceSpec> parseDeviceSpec(const std::string& text);

}  // namespace ranklab
