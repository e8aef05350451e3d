// What each codec the job file can name is, apart from how it is made (codec_registry.cpp):
// the one list that the job schema, the keys' relevance, the checkpoint identity, the GPU's
// encoder and the parameter server ask, instead of comparing codec names. It lives in
// ranklab_comm (no kernels), so the job library and its fuzzer need no codec code;
// tests/unit/registry_test.cpp fails when it and the registry name different codecs.
#pragma once

#include <string>
#include <vector>

namespace ranklab {

struct CodecTraits {
  std::string name;
  // The compression.* keys that shape it, in the order its checkpoint identity names them
  // (compression.momentum_correction has its own trait below).
  std::vector<std::string> keys = {};
  bool momentum_correction = true;  // DGC's momentum correction applies (not none, powersgd)
  bool device_encodes = false;      // encoded where the gradient is (engine/train/device_encoder)
  // A parameter server's reply to it (comm/ps/shard_codecs.h): the codec its pulls come in,
  // "exact-delta" where none of the codecs can carry them, "" where a server cannot take it.
  std::string ps_reply = {};

  bool takes(const std::string& key) const;  // key: "bits", "ratio", ...
};

const std::vector<CodecTraits>& codecTraits();  // `none` first, as the registry
// Throws std::invalid_argument naming the codec and the allowed ones.
const CodecTraits& codecTraitsOf(const std::string& name);
std::vector<std::string> codecsTaking(const std::string& key);  // in registry order

}  // namespace ranklab
