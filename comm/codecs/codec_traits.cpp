// Each codec's traits. Adding a codec: its line here and its entry in codec_registry.cpp.
#include "comm/codecs/codec_traits.h"

#include <algorithm>
#include <stdexcept>

#include "comm/registry.h"

namespace ranklab {

bool CodecTraits::takes(const std::string& key) const {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

const std::vector<CodecTraits>& codecTraits() {
  static const std::vector<CodecTraits> traits = {
      {.name = "none",
       .form = CodecForm::kPlain,
       .momentum_correction = false,
       .ps_reply = "exact-delta"},
      {.name = "fp16", .device_encode = DeviceEncode::kFp16, .ps_reply = "fp16"},
      {.name = "bf16", .device_encode = DeviceEncode::kBf16, .ps_reply = "bf16"},
      {.name = "qsgd",
       .keys = {"error_feedback", "bits", "bucket"},
       .device_encode = DeviceEncode::kQsgd,
       .ps_reply = "qsgd"},
      {.name = "topk",
       .keys = {"error_feedback", "ratio", "value_dtype"},
       .device_encode = DeviceEncode::kTopk,
       .ps_reply = "exact-delta"},
      {.name = "randomk",
       .keys = {"error_feedback", "ratio"},
       .device_encode = DeviceEncode::kRandomk,
       .ps_reply = "exact-delta"},
      {.name = "threshold",
       .keys = {"error_feedback", "threshold", "value_dtype"},
       .device_encode = DeviceEncode::kThreshold,
       .ps_reply = "exact-delta"},
      {.name = "sign",
       .keys = {"error_feedback", "bucket"},
       .device_encode = DeviceEncode::kSign,
       .ps_reply = "fp16"},
      // Its products run on the GPU through their own sync (powersgd_sync.h); a
      // server cannot sum every worker's P before Q.
      {.name = "powersgd",
       .form = CodecForm::kLowRank,
       .keys = {"error_feedback", "rank", "warm_start"},
       .momentum_correction = false},
  };
  return traits;
}

const CodecTraits* findCodecTraits(const std::string& name) {
  for (const auto& t : codecTraits())
    if (t.name == name) return &t;
  return nullptr;
}

bool compressesWith(const std::string& name) {
  const CodecTraits* t = findCodecTraits(name);
  return t == nullptr || t->form != CodecForm::kPlain;
}

std::string codecsAServerTakes() {
  std::vector<std::string> names;
  for (const auto& t : codecTraits())
    if (!t.ps_reply.empty() && t.form != CodecForm::kPlain) names.push_back(t.name);
  return joinChoices(names);
}

const CodecTraits& codecTraitsOf(const std::string& name) {
  if (const CodecTraits* t = findCodecTraits(name)) return *t;
  std::string allowed;
  for (const auto& t : codecTraits()) allowed += (allowed.empty() ? "" : ", ") + t.name;
  throw std::invalid_argument("unknown codec \"" + name + "\"; allowed: " + allowed);
}

std::vector<std::string> codecsTaking(const std::string& key) {
  std::vector<std::string> names;
  for (const auto& t : codecTraits())
    if (t.takes(key)) names.push_back(t.name);
  return names;
}

}  // namespace ranklab
