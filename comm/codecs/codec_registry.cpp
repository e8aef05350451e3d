// The job file's codec names to codec classes. Adding a codec: its own file, one entry
// below, its test (tests/unit/codec_test.cpp).
#include <stdexcept>

#include "comm/codecs/bf16_codec.h"
#include "comm/codecs/codec.h"
#include "comm/codecs/fast_rng.h"
#include "comm/codecs/fp16_codec.h"
#include "comm/codecs/qsgd_codec.h"
#include "comm/codecs/randomk_codec.h"
#include "comm/codecs/sign_codec.h"
#include "comm/codecs/threshold_codec.h"
#include "comm/codecs/topk_codec.h"
#include "comm/registry.h"

namespace ranklab {

namespace {

using Made = std::unique_ptr<GradientCodec>;

}  // namespace

const std::vector<CodecEntry>& codecRegistry() {
  static const std::vector<CodecEntry> codecs = {
      {"none", "plain fp32 gradients", nullptr},
      {"fp16", "each element as IEEE half",
       [](const CodecOptions&, int) -> Made { return std::make_unique<Fp16Codec>(); }},
      {"bf16", "each element as bfloat16",
       [](const CodecOptions&, int) -> Made { return std::make_unique<Bf16Codec>(); }},
      // Rounding must be independent across ranks, or the errors would add up, not cancel.
      {"qsgd", "stochastic k-bit levels with one scale per bucket",
       [](const CodecOptions& o, int rank) -> Made {
         return std::make_unique<QsgdCodec>(o.bits, o.bucket, mixSeed(o.seed, 0x9519d, rank));
       }},
      {"topk", "the largest |g| elements, sorted indices",
       [](const CodecOptions& o, int) -> Made {
         return std::make_unique<TopkCodec>(o.ratio, o.half_values);
       }},
      {"randomk", "random elements, the same indices on every rank",
       [](const CodecOptions& o, int) -> Made {
         return std::make_unique<RandomkCodec>(o.ratio, mixSeed(o.seed, 0x4a2d));
       }},
      {"threshold", "elements with |g| at least a threshold",
       [](const CodecOptions& o, int) -> Made {
         return std::make_unique<ThresholdCodec>(o.threshold, o.half_values);
       }},
      {"sign", "one bit per element and a scale per bucket",
       [](const CodecOptions& o, int) -> Made { return std::make_unique<SignCodec>(o.bucket); }},
      {"powersgd", "rank-r low-rank approximation by power iteration (a collective of its own)",
       nullptr},
  };
  return codecs;
}

const std::vector<std::string>& codecNames() {
  static const std::vector<std::string> names = namesOf(codecRegistry());
  return names;
}

std::unique_ptr<GradientCodec> makeCodec(const CodecOptions& o, int rank) {
  std::string allowed;
  for (const auto& c : codecRegistry()) {
    if (c.name == o.codec && c.make) return c.make(o, rank);
    if (c.make) allowed += (allowed.empty() ? "" : ", ") + c.name;
  }
  throw std::invalid_argument("no flat-buffer codec \"" + o.codec + "\"; allowed: " + allowed +
                              " (none and powersgd are collectives of their own)");
}

}  // namespace ranklab
