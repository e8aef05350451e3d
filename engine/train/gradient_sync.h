// How a step's gradients become the same on every rank. One strategy per class;
// the trainer only sees sync().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/codecs/codec.h"
#include "comm/collectives/allreduce.h"
#include "comm/communicator.h"
#include "engine/job/job_spec.h"

namespace ranklab {

class CompressedAllreduce;

struct SyncStats {
  int64_t wait_ns = 0;  // blocked until the slowest rank arrived
  int64_t comm_ns = 0;  // moving and reducing bytes
  int64_t bytes_tx = 0;
  int64_t bytes_rx = 0;
  int64_t bytes_raw = 0;    // what the same collective would have sent uncompressed
  int64_t compress_ns = 0;  // encoding, decoding, error feedback (inside comm time's span)
};

class GradientSync {
 public:
  virtual ~GradientSync() = default;
  // Replaces grads (count floats) with the average over ranks.
  virtual SyncStats sync(float* grads, size_t count) = 0;
};

// Synchronous data parallel: a barrier (measured as wait), then a sum all-reduce by the
// job's algorithm (measured as communication), then divide by the world size. With a
// codec the all-reduce is compressed (comm/codecs/compressed_allreduce.h); its encode and
// decode time is reported as compress_ns, not as communication.
class AllreduceSync : public GradientSync {
 public:
  AllreduceSync(Communicator& comm, const std::string& algorithm, CodecOptions codec = {});
  ~AllreduceSync() override;
  SyncStats sync(float* grads, size_t count) override;

 private:
  Communicator& comm_;
  std::string algorithm_;
  CodecOptions codec_;
  std::unique_ptr<Allreduce> allreduce_;
  std::unique_ptr<CompressedAllreduce> compressed_;  // built on first sync, when count is known
};

// True when the compressed all-reduce applies the momentum (compression.momentum_correction,
// any codec but powersgd, plain SGD): the optimizer must then run without it.
bool compressesWithMomentum(const JobSpec& job);

// The job's [compression] section as codec options; `matrices` are the weight matrices
// inside the gradient buffer (PowerSGD compresses those).
CodecOptions codecOptions(const JobSpec& job, std::vector<MatrixBlock> matrices = {});

std::unique_ptr<GradientSync> makeGradientSync(const JobSpec& job, Communicator& comm,
                                               std::vector<MatrixBlock> matrices = {});

}  // namespace ranklab
