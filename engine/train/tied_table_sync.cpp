#include "engine/train/tied_table_sync.h"

#include "comm/steady_clock.h"

namespace ranklab {

std::unique_ptr<TiedTableSync> TiedTableSync::make(const Network& stage, Communicator& stages) {
  const ParamView* table = nullptr;
  const ParamView* copy = nullptr;
  for (const ParamView& view : stage.views()) {
    if (view.name == "embed.token") table = &view;
    if (view.name == "lm_head.weight") copy = &view;
  }
  if ((table == nullptr) == (copy == nullptr) || stages.size() == 1) return nullptr;
  const ParamView& end = table ? *table : *copy;
  const int peer = table ? stages.size() - 1 : 0;
  return std::make_unique<TiedTableSync>(end.offset, end.size, peer, stages);
}

SyncStats TiedTableSync::sum(Network& stage, const DeviceMemory& device) {
  const int64_t t = steadyNowNs();
  float* grads = stage.gradientsAt(offset_);
  mine_.resize(count_);
  theirs_.resize(count_);
  device.download(mine_.data(), grads, count_);
  const size_t bytes = count_ * sizeof(float);
  stages_.sendRecv(mine_.data(), bytes, peer_, theirs_.data(), bytes, peer_);
  for (size_t i = 0; i < count_; ++i) mine_[i] += theirs_[i];
  device.upload(grads, mine_.data(), count_);
  SyncStats s;
  s.comm_ns = steadyNowNs() - t;
  s.bytes_tx = s.bytes_raw = s.bytes_rx = static_cast<int64_t>(bytes);
  s.sends = s.recvs = 1;
  return s;
}

}  // namespace ranklab
