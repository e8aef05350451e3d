// Host floats for a device's buffer, for a protocol that reads and writes them on the host
// (a codec's all-reduce, a parameter server's pushes and pulls): the buffer itself where the
// device computes in host memory, else a host copy kept from call to call.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/model/device_memory.h"

namespace ranklab {

class HostCopy {
 public:
  explicit HostCopy(const DeviceMemory& memory) : memory_(memory) {}

  // Where the host reads and writes `count` floats of `device` (their values not copied).
  float* of(float* device, size_t count) {
    if (memory_.hostMemory()) return device;
    if (host_.size() < count) host_.resize(count);
    return host_.data();
  }
  // of(), holding the device's values.
  float* down(float* device, size_t count) {
    float* host = of(device, count);
    if (host != device) memory_.download(host, device, count);
    return host;
  }
  // What the host wrote, back into the device's buffer.
  void up(float* device, size_t count) const {
    if (!memory_.hostMemory()) memory_.upload(device, host_.data(), count);
  }
  size_t bytesHeld() const { return host_.size() * sizeof(float); }

 private:
  const DeviceMemory& memory_;
  std::vector<float> host_;
};

}  // namespace ranklab
