// A layer's working memory on its device (a dropout's mask, max-pool's winners): grown on
// demand, kept for the next pass, and counted as what the last pass used (keptBytes).
#pragma once

#include <cstddef>
#include <memory>

#include "engine/model/device_memory.h"

namespace ranklab {

class DeviceScratch {
 public:
  explicit DeviceScratch(const DeviceMemory& memory) : memory_(memory) {}

  // `count` values of T on the device; the old contents are lost when it grows.
  template <class T>
  T* ensure(size_t count) {
    used_ = count * sizeof(T);
    const size_t floats = (used_ + sizeof(float) - 1) / sizeof(float);
    if (!buffer_ || buffer_->size() < floats) {
      if (buffer_) memory_.synchronize();  // queued work may still read the old buffer
      buffer_.reset();
      buffer_ = memory_.allocate(floats);
    }
    return reinterpret_cast<T*>(buffer_->data());
  }
  template <class T>
  const T* data() const {
    return buffer_ ? reinterpret_cast<const T*>(buffer_->data()) : nullptr;
  }
  size_t usedBytes() const { return used_; }

 private:
  const DeviceMemory& memory_;
  std::unique_ptr<DeviceBuffer> buffer_;
  size_t used_ = 0;
};

}  // namespace ranklab
