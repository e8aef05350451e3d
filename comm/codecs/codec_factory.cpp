// makeCodec: the job file's codec names to codec classes.
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

namespace ranklab {

const std::vector<std::string>& codecNames() {
  static const std::vector<std::string> names = {"none",    "fp16",      "bf16", "qsgd",    "topk",
                                                 "randomk", "threshold", "sign", "powersgd"};
  return names;
}

std::unique_ptr<GradientCodec> makeCodec(const CodecOptions& o, int rank) {
  if (o.codec == "fp16") return std::make_unique<Fp16Codec>();
  if (o.codec == "bf16") return std::make_unique<Bf16Codec>();
  // Rounding must be independent across ranks, or the errors would add up instead of cancel.
  if (o.codec == "qsgd") {
    return std::make_unique<QsgdCodec>(o.bits, o.bucket, mixSeed(o.seed, 0x9519d, rank));
  }
  if (o.codec == "topk") return std::make_unique<TopkCodec>(o.ratio, o.half_values);
  if (o.codec == "randomk") return std::make_unique<RandomkCodec>(o.ratio, mixSeed(o.seed, 0x4a2d));
  if (o.codec == "threshold") return std::make_unique<ThresholdCodec>(o.threshold, o.half_values);
  if (o.codec == "sign") return std::make_unique<SignCodec>(o.bucket);
  std::string allowed;
  for (const auto& name : codecNames()) {
    if (name != "none" && name != "powersgd") allowed += (allowed.empty() ? "" : ", ") + name;
  }
  throw std::invalid_argument("no flat-buffer codec \"" + o.codec + "\"; allowed: " + allowed +
                              " (none and powersgd are collectives of their own)");
}

}  // namespace ranklab
