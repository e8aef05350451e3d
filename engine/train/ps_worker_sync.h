// A training rank of ps-sync or ps-async: pushes its gradients to the servers and takes
// back the parameters they produced (the servers run the optimizer). Workers are world
// ranks 0..W-1, servers W..W+S-1 (see ps_server.h). With a codec, pushes and their replies
// are compressed per shard (comm/ps/shard_codecs.h); encode and decode time is compress_ns.
// On a GPU each shard of a compressed push can be encoded there (encode_on), so only the
// payloads leave it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/ps/kv_worker.h"
#include "engine/model/compute_device.h"
#include "engine/train/device_encoder.h"
#include "engine/train/gradient_sync.h"

namespace ranklab {

class ParameterServerSync : public GradientSync, public CheckpointState {
 public:
  // Collective over `world`: splits off the workers. encode_on: a device whose memory the
  // gradient handed to sync() is in, where each shard of a compressed push is encoded
  // (device_encoder.h, one encoder per shard; the job's codec must have a device encode);
  // null: host floats, encoded by the KvWorker's own encoders.
  ParameterServerSync(Communicator& world, const JobSpec& job,
                      const ComputeDevice* encode_on = nullptr);
  ~ParameterServerSync() override;

  Communicator& peers() override { return *workers_; }
  void start(float* params, size_t count) override;
  void beginStep(double lr) override { lr_ = lr; }
  SyncStats sync(float* grads, size_t count) override;
  bool updatesParameters() const override { return true; }
  void refresh(float* params, size_t count) override;
  void finish() override;
  CheckpointState* checkpointState() override { return this; }
  std::string stateNotCheckpointed() const override;
  void traceSpans(CommSpans* sink) override { trace_ = sink; }

 private:
  // A device encoder per shard, given to the KvWorker.
  void encodeOnDevice(size_t count);

  Communicator& world_;
  std::unique_ptr<Communicator> workers_;
  int servers_;
  CodecOptions codec_;  // "none": plain floats both ways
  std::unique_ptr<KvWorker> kv_;
  CommSpans* trace_ = nullptr;  // each shard's push and reply of a sampled step
  float* params_ = nullptr;
  std::string not_checkpointed_;  // stateNotCheckpointed()
  const ComputeDevice* encode_on_;
  std::vector<std::unique_ptr<DeviceEncoder>> encoders_;  // per shard, with encode_on_
  std::unique_ptr<DeviceBuffer> scratch_;  // the gradient, which the encoders change in place
  double lr_ = 0;
};

}  // namespace ranklab
