// What a device computed in a sampled step, piece by piece: each layer's forward and
// backward, the loss head's, the optimizer's update, timed on the device's own clock
// (device_timer.h) and placed on the host's. The gaps between the pieces are where the
// device waited for the host: launch overhead, the host's own work, waits on peers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/model/device_timer.h"

namespace ranklab {

class DeviceMemory;

struct DeviceSpan {
  // "dev-input" (the batch's copy to the device), "dev-fwd" | "dev-bwd" (a layer's: `layer`
  // is its index in the whole model), "dev-loss" (the loss head's forward or backward),
  // "dev-update" (the optimizer's step)
  const char* kind = "";
  int layer = -1;
  int64_t begin_ns = 0, end_ns = 0;  // steady-clock ns (comm/steady_clock.h)
};
using DeviceSpans = std::vector<DeviceSpan>;

class DeviceTrace {
 public:
  explicit DeviceTrace(const DeviceMemory& device);

  // Marks the start of a piece of work about to be queued; end() closes the piece last begun.
  void begin(const char* kind, int layer = -1);
  void end();
  // After the step's work is queued: waits for the device and places each piece on the
  // host's clock, counting back from a mark that passed just before that wait returned
  // (off by the wait's wake-up, microseconds). Starts afresh for the next step.
  DeviceSpans take();

 private:
  struct Piece {
    const char* kind;
    int layer;
    size_t begin, end;
  };
  const DeviceMemory& device_;
  std::unique_ptr<DeviceTimer> timer_;
  std::vector<Piece> pieces_;
  bool open_ = false;  // the last piece begun has not ended (pieces do not nest)
};

}  // namespace ranklab
