// A compressed sum all-reduce on the host: the job's codec, error feedback and momentum
// correction, this rank's encode, and the collective the codec's payloads need
// (payload_exchange.h: the compressed ring, an all-gather of payloads, or randomk's float
// all-reduce). Not powersgd, whose products run where the gradient is
// (engine/train/powersgd_sync.h).
// With one rank nothing moves, but the codec and error feedback still apply, so a 1-rank
// run trains on exactly what a compressed gradient carries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/codecs/codec.h"
#include "comm/codecs/error_feedback.h"
#include "comm/codecs/payload_exchange.h"
#include "comm/communicator.h"

namespace ranklab {

class AllreduceChoice;
class MomentumCorrection;

class CompressedAllreduce {
 public:
  // algorithm: the float all-reduce (ring, mpi) used by randomk; the other codecs move bytes
  // with their own collectives. count: the gradient buffer's length. Throws
  // std::invalid_argument for none and for powersgd.
  CompressedAllreduce(Communicator& comm, const AllreduceChoice& algorithm,
                      const CodecOptions& options, size_t count);
  ~CompressedAllreduce();

  // In: this rank's gradient (count floats). Out: the sum over ranks of what each sent.
  CompressedAllreduceStats run(float* data, size_t count);

  const std::string& codecName() const { return options_.codec; }
  // Checkpoints: this rank's state that carries over between steps: the codec's
  // ("codec."), the error-feedback residual ("residual"), the momentum-correction velocity
  // ("velocity"). Steps not yet run leave the tensors empty.
  CodecState saveState() const;
  // Throws std::invalid_argument naming the key that is missing or of another size.
  void restoreState(const CodecState& state);

  // Null when error feedback is off.
  const ErrorFeedback* errorFeedback() const { return feedback_.get(); }

 private:
  // Encodes data, and decodes the payload into sent_ (this rank's own contribution).
  void encodeOwn(const float* data, size_t count, CompressedAllreduceStats& stats);

  Communicator& comm_;
  CodecOptions options_;
  size_t count_;
  std::unique_ptr<GradientCodec> codec_;
  std::unique_ptr<PayloadExchange> exchange_;
  std::unique_ptr<ErrorFeedback> feedback_;
  std::vector<uint8_t> payload_;
  std::vector<float> sent_;
  std::unique_ptr<MomentumCorrection> momentum_;  // options_.local_momentum > 0
};

}  // namespace ranklab
