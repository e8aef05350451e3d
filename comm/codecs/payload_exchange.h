// How a codec's payloads cross ranks and add up once each rank has encoded its own
// gradient (codec.h, CodecCollective), written once for every place the encode runs: the
// host's compressed all-reduce (compressed_allreduce.h) and the GPU's, which encodes where
// the gradient is (engine/train/device_codec_sync.h).
//   kRing       fp16 bf16 qsgd      the compressed ring over what each rank sent, re-encoding
//                                   the partial sums (CompressedRingAllreduce)
//   kAllgather  topk threshold sign every payload to every rank, decoded in rank order
//   kSummed     randomk             the job's float all-reduce over the values at the indices
//                                   every rank drew alike
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "comm/codecs/codec.h"
#include "comm/communicator.h"

namespace ranklab {

class Allreduce;
class AllreduceChoice;
class CompressedRingAllreduce;
class PayloadAllgather;

struct CompressedAllreduceStats {
  int64_t bytes_tx = 0;
  int64_t bytes_rx = 0;
  // What the same algorithm would have sent uncompressed: 2(n-1)/n * count * 4 bytes.
  int64_t bytes_raw = 0;
  int64_t codec_ns = 0;  // encoding, decoding and error feedback
  int64_t comm_ns = 0;   // everything else in run()
};

class PayloadExchange {
 public:
  // codec: the one this rank encodes with (the ring re-encodes with it, so a stream such as
  // qsgd's goes on from where the encode left it); algorithm: randomk's float all-reduce.
  PayloadExchange(Communicator& comm, const AllreduceChoice& algorithm, GradientCodec& codec);
  ~PayloadExchange();

  // sum: count host floats, holding what this rank's `payload` decodes to where
  // startsFromOwnValues(); afterwards the sum over the ranks of what each sent (every rank
  // adds the same floats in the same order). The payload may be consumed.
  void sum(std::vector<uint8_t>& payload, float* sum, size_t count,
           CompressedAllreduceStats& stats);
  // Whether sum() reads this rank's own values from `sum` (the ring's, or one rank's), rather
  // than decoding every payload over it.
  bool startsFromOwnValues() const { return ring_ || comm_.size() == 1; }
  // kRing without an encode first: the ring encodes the raw gradient's chunks itself.
  void ringOfRaw(float* data, size_t count, CompressedAllreduceStats& stats);

 private:
  void runRing(float* data, size_t count, CompressedAllreduceStats& stats);

  Communicator& comm_;
  GradientCodec& codec_;
  std::unique_ptr<Allreduce> allreduce_;           // kSummed
  std::unique_ptr<CompressedRingAllreduce> ring_;  // kRing
  std::unique_ptr<PayloadAllgather> allgather_;    // kAllgather
  std::vector<std::vector<uint8_t>> gathered_;
  std::vector<float> values_;
};

}  // namespace ranklab
