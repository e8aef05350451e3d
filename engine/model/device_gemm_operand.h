// A matrix product's input on a device in the compute precision: the fp32 pointer itself, or
// a bf16/fp16 copy cast on the device, so a weight or an input is cast once per step and
// reused by the backward products (as kernels::GemmOperand does for host-only code).
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/model/compute_device.h"
#include "engine/model/device_scratch.h"

namespace ranklab {

class DeviceGemmOperand {
 public:
  explicit DeviceGemmOperand(const ComputeDevice& device) : device_(device), cast_(device) {}

  // Holds `count` floats from `data` (the device's) in `precision`.
  void set(kernels::Precision precision, const float* data, size_t count) {
    input_ = {precision, data, nullptr};
    count_ = count;
    if (precision == kernels::Precision::kFp32) return;
    uint16_t* low = cast_.ensure<uint16_t>(count);
    device_.castFromFp32(precision, data, low, count);
    input_.low = low;
  }
  // True when set() was last given this pointer and count (valid while the floats are
  // unchanged since).
  bool holds(const float* data, size_t count) const {
    return input_.f32 == data && count_ == count;
  }
  const DeviceGemmInput& input() const { return input_; }

 private:
  const ComputeDevice& device_;
  DeviceScratch cast_;
  DeviceGemmInput input_;
  size_t count_ = 0;
};

}  // namespace ranklab
