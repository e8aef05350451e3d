#include "engine/model/device_trace.h"

#include <stdexcept>

#include "comm/steady_clock.h"
#include "engine/model/compute_device.h"

namespace ranklab {

DeviceTrace::DeviceTrace(const DeviceMemory& device)
    : device_(device), timer_(device.makeTimer()) {}

void DeviceTrace::begin(const char* kind, int layer) {
  if (open_) throw std::logic_error("DeviceTrace::begin inside an open piece");
  pieces_.push_back({kind, layer, timer_->mark(), 0});
  open_ = true;
}

void DeviceTrace::end() {
  if (!open_) throw std::logic_error("DeviceTrace::end without a begin");
  pieces_.back().end = timer_->mark();
  open_ = false;
}

DeviceSpans DeviceTrace::take() {
  DeviceSpans spans;
  if (open_) throw std::logic_error("DeviceTrace::take with a piece open");
  if (pieces_.empty()) return spans;
  const size_t last = timer_->mark();
  device_.synchronize();
  const int64_t now = steadyNowNs();
  spans.reserve(pieces_.size());
  for (const Piece& p : pieces_) {
    spans.push_back({p.kind, p.layer, now - timer_->elapsedNs(p.begin, last),
                     now - timer_->elapsedNs(p.end, last)});
  }
  pieces_.clear();
  timer_->clear();
  return spans;
}

}  // namespace ranklab
