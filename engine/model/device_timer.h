// Points marked in a device's queue of work, timed on the device's own clock: what the
// device spent on a piece of work, apart from the host's time launching it. CUDA events on
// a GPU; on a device that computes in the caller's thread (the CPU) the host clock is the
// device's clock, since its work is done when its call returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace ranklab {

class DeviceTimer {
 public:
  virtual ~DeviceTimer() = default;
  // A mark after all the work queued so far; its index counts from 0 since the last clear().
  virtual size_t mark() = 0;
  // ns from mark `from` to mark `to` on the device's clock, once both have passed (the
  // caller synchronizes first).
  virtual int64_t elapsedNs(size_t from, size_t to) const = 0;
  // Forgets the marks; their storage (a GPU's events) is reused.
  virtual void clear() = 0;

 protected:
  size_t count_ = 0;  // marks since the last clear()
};

// The host's steady clock as a device's: for devices whose work is done when queued.
std::unique_ptr<DeviceTimer> makeHostTimer();

}  // namespace ranklab
