// A device's memory and the loops the engine runs over its flat buffers: moving values
// between host and device, and the optimizer's and the loss scaler's loops, so those
// buffers never have to visit the host during a step. Pointers named `host` are host
// memory; every other pointer is this device's (from allocate() or a layer's buffers).
// Work may be queued: a download, scaleAndCheckFinite() and synchronize() return once it
// is done. One of a ComputeDevice's concerns (compute_device.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/model/device_timer.h"
#include "kernels/cpu/optimizer_update.h"

namespace ranklab {

// A run of floats in a device's memory, zeroed when made.
class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  virtual float* data() = 0;
  virtual size_t size() const = 0;
};

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual std::unique_ptr<DeviceBuffer> allocate(size_t floats) const = 0;

  // True when its buffers are host memory that code outside the device may read and write.
  virtual bool hostMemory() const = 0;
  virtual void upload(float* to, const float* host, size_t n) const = 0;
  // upload(), queued: `host` must stay unchanged until the next download() or synchronize()
  // (truly asynchronous only from memory pinHost() locked).
  virtual void uploadAsync(float* to, const float* host, size_t n) const { upload(to, host, n); }
  // Page-locks `bytes` of host memory at `host` while the result lives, so copies from it
  // run without a bounce buffer and without blocking the host; null where the device needs
  // none (the CPU). Throws std::runtime_error naming why it could not.
  virtual std::shared_ptr<void> pinHost(void* /*host*/, size_t /*bytes*/) const { return nullptr; }
  virtual void download(float* host, const float* from, size_t n) const = 0;
  // Bytes (a batch's labels) up, queued as uploadAsync(): `host` must stay unchanged until the
  // next download() or synchronize().
  virtual void uploadBytes(uint8_t* to, const uint8_t* host, size_t n) const = 0;
  virtual void copy(float* to, const float* from, size_t n) const = 0;
  virtual void fill(float* to, size_t n, float value) const = 0;
  // kernels/cpu/optimizer_update.h's updates, bit for bit where the device allows.
  virtual void sgdUpdate(float* params, const float* grads, float* velocity, size_t n, float lr,
                         float momentum, float weight_decay, bool nesterov) const = 0;
  virtual void adamUpdate(float* params, const float* grads, float* first_moment,
                          float* second_moment, size_t n, const kernels::AdamScalars& s) const = 0;
  // grads *= factor; false when any of them is then inf or NaN (AMP's unscale).
  virtual bool scaleAndCheckFinite(float* grads, size_t n, float factor) const = 0;
  // The sum of x[i]^2 in double (a gradient's squared norm): here through a host copy, which
  // any device can make; a device overrides it where it sums in place.
  virtual double sumOfSquares(const float* x, size_t n) const {
    std::vector<float> host(n);
    download(host.data(), x, n);
    double sum = 0;
    for (float v : host) sum += static_cast<double>(v) * v;
    return sum;
  }
  // Returns once the work queued on the device is done (phase timing).
  virtual void synchronize() const = 0;
  // Marks in this device's queue, timed on its clock (the host's where work is done when
  // queued, as on the CPU).
  virtual std::unique_ptr<DeviceTimer> makeTimer() const { return makeHostTimer(); }
};

}  // namespace ranklab
