// libFuzzer target: a checkpoint file's bytes, as a resume reads them. Either a checkpoint or
// a CheckpointError naming what is wrong; nothing else may happen.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/train/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)ranklab::parseCheckpoint(std::string(reinterpret_cast<const char*>(data), size),
                                   "fuzz.ckpt");
  } catch (const ranklab::CheckpointError&) {
  }
  return 0;
}
