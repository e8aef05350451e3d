// The state a compressed all-reduce carries from step to step on one rank (error-feedback
// residual, momentum-correction velocity, PowerSGD's warm-start Q, random-stream
// positions), as named float tensors and counters, so a checkpoint can hold it and a
// resumed run continue bit for bit. Bytes: for a rank to send its state to the writer.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ranklab {

struct CodecState {
  std::map<std::string, std::vector<float>> tensors;
  std::map<std::string, uint64_t> counters;

  bool empty() const { return tensors.empty() && counters.empty(); }
  // The tensor `key` (of `size` floats unless size_t(-1)). Throws std::invalid_argument
  // naming the key when it is missing or of another size.
  const std::vector<float>& tensor(const std::string& key, size_t size = size_t(-1)) const;
  // Throws std::invalid_argument naming the key when it is missing.
  uint64_t counter(const std::string& key) const;
};

std::vector<uint8_t> toBytes(const CodecState& state);
// Throws std::invalid_argument when the bytes are cut short.
CodecState codecStateFromBytes(const std::vector<uint8_t>& bytes);

}  // namespace ranklab
