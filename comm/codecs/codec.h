// Gradient codecs: how one rank's gradient (a flat float buffer) becomes a payload of
// bytes on the wire and back. One codec per class and file; each header states the
// codec's wire format and its error bound (tests/unit/codec_test.cpp checks both).
// Codecs hold state (random streams, step counters), so each rank owns its own instances.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/codecs/codec_state.h"
#include "comm/codecs/codec_traits.h"

namespace ranklab {

// How payloads of different ranks combine, which picks the collective that moves them
// (comm/codecs/compressed_allreduce.h).
enum class CodecCollective {
  // Payload size depends only on the element count, partial sums re-encode: a ring that
  // encodes every hop (fp16, bf16, qsgd).
  kRing,
  // Payloads do not add up (different indices, per-rank scales): all-gather them, every
  // rank decodes and sums them in rank order (topk, threshold, sign).
  kAllgather,
  // Payloads are float arrays that add elementwise (randomk: every rank keeps the same
  // indices): the ordinary float all-reduce sums them.
  kSummed,
};

enum class DecodeMode { kAssign, kAdd };

class GradientCodec {
 public:
  virtual ~GradientCodec() = default;

  virtual std::string name() const = 0;
  virtual CodecCollective collective() const = 0;

  // Replaces `out` with the payload of x (n floats).
  virtual void encode(const float* x, size_t n, std::vector<uint8_t>& out) = 0;

  // Writes (kAssign) or adds (kAdd) the n floats a payload of `bytes` bytes stands for.
  // Throws std::runtime_error when the payload does not fit the format or n.
  virtual void decode(const uint8_t* payload, size_t bytes, size_t n, float* out,
                      DecodeMode mode) = 0;

  // The exact payload size for n floats, or 0 when it depends on the values (kAllgather).
  virtual size_t payloadBytes(size_t n) const = 0;

  // Codecs that round stochastically (qsgd) do so to stay unbiased when nothing remembers
  // the error. Under error feedback the error is remembered, and rounding to nearest keeps
  // it small and the residual bounded (stochastic 2-bit rounding makes it grow).
  virtual void roundToNearest(bool /*nearest*/) {}

  // For a decoder on another rank than its encoder (the parameter server's): advance the
  // state an encode() of n elements would, so decode() reads that encode's payload. Only
  // randomk has such state (its indices); the other codecs decode from the payload alone.
  virtual void followEncode(size_t /*n*/) {}

  // True when a payload carries a subset of the elements exactly and nothing of the rest
  // (topk, randomk, threshold).
  virtual bool sparse() const { return false; }

  // Checkpoints: the state that carries over between steps (a random stream's position),
  // under keys that start with `prefix`. Most codecs keep none.
  virtual void saveState(CodecState& /*state*/, const std::string& /*prefix*/) const {}
  // Throws std::invalid_argument naming the key when the state lacks it.
  virtual void restoreState(const CodecState& /*state*/, const std::string& /*prefix*/) {}
};

// A weight matrix inside the flat gradient buffer, row-major (rows, cols): PowerSGD
// compresses these and sends everything else uncompressed.
struct MatrixBlock {
  size_t offset = 0;
  int rows = 0;
  int cols = 0;
};

// The job file's [compression] section, as the codecs need it (docs/job-file.md).
struct CodecOptions {
  std::string codec = "none";  // none fp16 bf16 qsgd topk randomk threshold sign powersgd
  bool error_feedback = true;  // keep what was not sent and add it to the next gradient
  int bits = 4;                // qsgd: bits per element, sign included (2, 4 or 8)
  int bucket = 512;            // qsgd, sign: elements that share one scale
  double ratio = 0.01;         // topk, randomk: fraction of elements sent
  double threshold = 0.05;     // threshold: send elements with |x| >= threshold
  bool half_values = false;    // topk, threshold: values as fp16 instead of fp32
  int rank = 2;                // powersgd: rank of the approximation
  bool warm_start = true;      // powersgd: start the power iteration from last step's Q
  // > 0: DGC's momentum correction (Lin et al. 2018). Momentum is applied to each rank's
  // gradient before compression, and the optimizer runs without it; sparse codecs clear
  // the velocity of what they sent (momentum factor masking).
  float local_momentum = 0.f;
  uint64_t seed = 1;                  // random streams (qsgd rounding, randomk indices, powersgd Q)
  std::vector<MatrixBlock> matrices;  // powersgd: which parts of the buffer are matrices

  bool compresses() const { return compressesWith(codec); }  // "none": plain fp32 gradients
};

// One codec the job file can name: what it does, and how to make it where it is a
// flat-buffer codec (`none` and `powersgd` are collectives of their own: no factory).
struct CodecEntry {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<GradientCodec>(const CodecOptions&, int rank)> make;
};

// Every codec, `none` first: the one list the job schema's test, messages and benches use.
// Adding a codec: its own file, one entry in codec_registry.cpp, its test.
const std::vector<CodecEntry>& codecRegistry();
const std::vector<std::string>& codecNames();

// The flat-buffer codec named by options.codec. `rank` separates the random streams of
// ranks where they must differ (qsgd); randomk's indices are the same on every rank by
// design. Throws std::invalid_argument naming the codec and the allowed ones.
std::unique_ptr<GradientCodec> makeCodec(const CodecOptions& options, int rank);

}  // namespace ranklab
