// Synchronous data parallel (parallel.strategy = "allreduce"): every rank ends the step
// with the mean gradient. With bucket_kb > 0 the flat gradient is cut into buckets; a
// bucket starts its all-reduce on a communication thread as soon as backward has
// finished all of it (gradientReady), so communication hides behind the rest of backward.
// With a codec the whole gradient goes through the compressed all-reduce after backward
// (comm/codecs/compressed_allreduce.h); its encode and decode time is compress_ns.
// The buckets cross ranks over the transport (gradient_transport.h): the host's algorithm,
// its host copies of a GPU's buffers, or NCCL's all-reduce of the whole gradient.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/collectives/allreduce_registry.h"
#include "engine/train/comm_thread.h"
#include "engine/train/gradient_sync.h"
#include "engine/train/gradient_transport.h"
#include "engine/train/host_copy.h"

namespace ranklab {

class CompressedAllreduce;

class AllreduceSync : public GradientSync, public CheckpointState {
 public:
  // bucket_bytes 0, or a transport that does not overlap backward: one all-reduce of the
  // whole gradient after backward.
  AllreduceSync(std::unique_ptr<GradientTransport> transport, const AllreduceChoice& algorithm,
                size_t bucket_bytes, CodecOptions codec = {});
  ~AllreduceSync() override;

  Communicator& peers() override { return comm_; }
  void start(float* params, size_t count) override;
  void gradientReady(float* grads, size_t offset, size_t count) override;
  SyncStats sync(float* grads, size_t count) override;
  CheckpointState* checkpointState() override { return this; }
  CodecState saveCodecState() const override;
  void restoreCodecState(const CodecState& state) override;
  void traceSpans(CommSpans* sink) override;
  size_t bufferBytesHeld() const override;

 private:
  struct Bucket {
    size_t begin = 0, end = 0;
    int index = 0;     // 0 = the first to fill (the gradient's end)
    size_t ready = 0;  // floats backward has finished
    bool launched = false;
  };
  struct Span {
    int64_t begin_ns, end_ns;
  };
  void makeBuckets(size_t count);
  void launch(float* grads, Bucket& bucket);
  SyncStats bucketedSync(float* grads);
  SyncStats compressedSync(float* grads, size_t count);

  std::unique_ptr<GradientTransport> transport_;
  Communicator& comm_;
  AllreduceChoice algorithm_;
  CodecOptions codec_;
  std::unique_ptr<Allreduce> allreduce_;
  std::unique_ptr<CompressedAllreduce> compressed_;  // built in start(), when count is known
  HostCopy compressed_copy_;  // the gradient the codec reads and writes on the host
  size_t bucket_floats_;
  std::vector<Bucket> buckets_;
  std::unique_ptr<CommThread> thread_;  // null: buckets run on the caller's thread
  bool step_started_ = false;           // the step's barrier has been posted
  // Written by the communication thread, read after drain().
  std::vector<Span> wait_spans_, comm_spans_;
  int64_t bytes_tx_ = 0, bytes_rx_ = 0;
  int64_t allreduces_ = 0;
  CommSpans* trace_ = nullptr;  // appended to on the communication thread, read after drain()
};

}  // namespace ranklab
