#include "engine/model/device_timer.h"

#include "comm/steady_clock.h"

namespace ranklab {
namespace {

class HostTimer : public DeviceTimer {
 public:
  size_t mark() override {
    if (count_ == at_.size()) at_.push_back(0);
    at_[count_] = steadyNowNs();
    return count_++;
  }
  int64_t elapsedNs(size_t from, size_t to) const override { return at_[to] - at_[from]; }
  void clear() override { count_ = 0; }

 private:
  std::vector<int64_t> at_;  // steady-clock ns of each mark; kept across clear()
};

}  // namespace

std::unique_ptr<DeviceTimer> makeHostTimer() {
  return std::make_unique<HostTimer>();
}

}  // namespace ranklab
