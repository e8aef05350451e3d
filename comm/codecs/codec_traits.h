// What each codec the job file can name is, apart from how it is made (codec_registry.cpp):
// the one list that the job schema, the keys' relevance, the checkpoint identity, the GPU's
// encoder and the parameter server ask, instead of comparing codec names. It lives in
// ranklab_comm (no kernels), so the job library and its fuzzer need no codec code;
// tests/unit/registry_test.cpp fails when it and the registry name different codecs.
#pragma once

#include <string>
#include <vector>

namespace ranklab {

// How a device (engine/train/device_encoder) encodes the codec where the gradient is: picks
// k indices (topk, threshold; randomk's drawn on the host), or packs every element (sign,
// qsgd, the 16-bit casts); kNone: it has no device encode (none; powersgd, whose products run
// through powersgd_sync.h).
enum class DeviceEncode { kNone, kTopk, kThreshold, kRandomk, kSign, kQsgd, kFp16, kBf16 };

// Whether a ring carries the codec's payload and re-encodes the partial sums (qsgd and the
// 16-bit casts): a device encodes a rank's own gradient first only where the host would too.
inline bool reencodedOnTheRing(DeviceEncode e) {
  return e == DeviceEncode::kQsgd || e == DeviceEncode::kFp16 || e == DeviceEncode::kBf16;
}

// What a codec does to the gradient: kPlain sends the fp32 gradient as it is (none); kFlat
// encodes the flat buffer with the registry's factory; kLowRank sends low-rank products of
// the weight matrices through float all-reduces (powersgd: a collective of its own).
enum class CodecForm { kPlain, kFlat, kLowRank };

struct CodecTraits {
  std::string name;
  CodecForm form = CodecForm::kFlat;
  // The compression.* keys that shape it, in the order its checkpoint identity names them
  // (compression.momentum_correction has its own trait below).
  std::vector<std::string> keys = {};
  bool momentum_correction = true;  // DGC's momentum correction applies (not none, powersgd)
  DeviceEncode device_encode = DeviceEncode::kNone;  // how a GPU encodes it, where it does
  // A parameter server's reply to it (comm/ps/shard_codecs.h): the codec its pulls come in,
  // "exact-delta" where none of the codecs can carry them, "" where a server cannot take it.
  std::string ps_reply = {};

  bool takes(const std::string& key) const;  // key: "bits", "ratio", ...
};

const std::vector<CodecTraits>& codecTraits();                // `none` first, as the registry
const CodecTraits* findCodecTraits(const std::string& name);  // null if unknown
// Throws std::invalid_argument naming the codec and the allowed ones.
const CodecTraits& codecTraitsOf(const std::string& name);
std::vector<std::string> codecsTaking(const std::string& key);  // in registry order
// Whether `name` changes what is sent: every codec but a plain one, and an unknown name too,
// so that the checks which ask refuse it by name rather than pass it by.
bool compressesWith(const std::string& name);
// "fp16, bf16, ... or sign": the codecs a parameter server takes (a reply codec), plain none apart.
std::string codecsAServerTakes();

}  // namespace ranklab
