// A training rank of ps-sync or ps-async: pushes its gradients to the servers and takes
// back the parameters they produced (the servers run the optimizer). Workers are world
// ranks 0..W-1, servers W..W+S-1 (see ps_server.h). With a codec, pushes and their replies
// are compressed per shard (comm/ps/shard_codecs.h); encode and decode time is compress_ns.
// On a GPU the gradient and the parameters go through host copies, or each shard of a
// compressed push is encoded there (encode_on_device), so only the payloads leave it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/ps/kv_worker.h"
#include "engine/model/compute_device.h"
#include "engine/train/device_encoder.h"
#include "engine/train/gradient_sync.h"
#include "engine/train/host_copy.h"

namespace ranklab {

class ParameterServerSync : public GradientSync, public CheckpointState {
 public:
  // Collective over `world`: splits off the workers. `device`: where the model's parameters
  // and gradient are. encode_on_device: each shard of a compressed push is encoded there
  // (device_encoder.h, one encoder per shard; the job's codec must have a device encode);
  // else the gradient's host floats (a copy, off the host) go to the KvWorker's encoders.
  ParameterServerSync(Communicator& world, const JobSpec& job,
                      const ComputeDevice& device = cpuDevice(), bool encode_on_device = false);
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
  size_t bufferBytesHeld() const override {
    return params_copy_.bytesHeld() + grads_copy_.bytesHeld();
  }

 private:
  // A device encoder per shard, given to the KvWorker.
  void encodeOnDevice(size_t count);

  Communicator& world_;
  std::unique_ptr<Communicator> workers_;
  int servers_;
  CodecOptions codec_;  // "none": plain floats both ways
  std::unique_ptr<KvWorker> kv_;
  CommSpans* trace_ = nullptr;    // each shard's push and reply of a sampled step
  float* params_ = nullptr;       // the model's, as given to start()
  std::string not_checkpointed_;  // stateNotCheckpointed()
  const ComputeDevice& device_;
  bool encode_on_device_;
  HostCopy params_copy_, grads_copy_;  // where the KvWorker reads and writes them
  std::vector<std::unique_ptr<DeviceEncoder>> encoders_;  // per shard, encode_on_device
  std::unique_ptr<DeviceBuffer> scratch_;  // the gradient, which the encoders change in place
  double lr_ = 0;
};

}  // namespace ranklab
