#include "comm/codecs/sparse_payload.h"

#include <algorithm>
#include <string>

#include "comm/codecs/wire_format.h"
#include "kernels/cpu/low_precision.h"

namespace ranklab::sparse {

namespace {

enum Form : uint8_t { kDeltaPacked = 0, kBitmap = 1 };

// Widest gap code among the deltas: first index, then index - previous - 1.
int deltaWidth(const uint32_t* indices, size_t count) {
  uint32_t widest = 0;
  for (size_t i = 0; i < count; ++i) {
    widest = std::max(widest, i == 0 ? indices[0] : indices[i] - indices[i - 1] - 1);
  }
  return wire::bitWidth(widest);
}

size_t valueBytes(ValueType type) {
  return type == ValueType::kF16 ? sizeof(uint16_t) : sizeof(float);
}

}  // namespace

size_t payloadBytes(const uint32_t* indices, size_t count, size_t n, ValueType type) {
  const size_t packed = wire::packedBytes(count, deltaWidth(indices, count));
  return kHeaderBytes + std::min(packed, (n + 7) / 8) + count * valueBytes(type);
}

void encode(const uint32_t* indices, const float* values, size_t count, size_t n, ValueType type,
            std::vector<uint8_t>& out) {
  out.clear();
  const int width = deltaWidth(indices, count);
  const bool bitmap = (n + 7) / 8 < wire::packedBytes(count, width);
  out.push_back(bitmap ? kBitmap : kDeltaPacked);
  out.push_back(static_cast<uint8_t>(bitmap ? 0 : width));
  out.push_back(static_cast<uint8_t>(type));
  wire::append(out, static_cast<uint32_t>(count));
  if (bitmap) {
    const size_t start = out.size();
    out.resize(start + (n + 7) / 8, 0);
    for (size_t i = 0; i < count; ++i) out[start + indices[i] / 8] |= 1u << (indices[i] % 8);
  } else {
    std::vector<uint32_t> deltas(count);
    for (size_t i = 0; i < count; ++i) {
      deltas[i] = i == 0 ? indices[0] : indices[i] - indices[i - 1] - 1;
    }
    wire::packBits(deltas.data(), count, width, out);
  }
  if (type == ValueType::kF32) return wire::append(out, values, count);
  const size_t start = out.size();
  out.resize(start + count * sizeof(uint16_t));
  std::vector<uint16_t> halves(count);
  kernels::floatToFp16(values, halves.data(), count);
  std::memcpy(out.data() + start, halves.data(), count * sizeof(uint16_t));
}

void decode(const uint8_t* payload, size_t bytes, size_t n, float* out, DecodeMode mode,
            const char* codec) {
  wire::PayloadReader reader(payload, bytes, codec);
  const auto form = reader.scalar<uint8_t>("index form");
  const auto width = reader.scalar<uint8_t>("index width");
  const auto type = static_cast<ValueType>(reader.scalar<uint8_t>("value type"));
  const auto count = reader.scalar<uint32_t>("entry count");
  if (form != kDeltaPacked && form != kBitmap) {
    wire::badPayload(codec, "unknown index form " + std::to_string(form));
  }
  if (type != ValueType::kF32 && type != ValueType::kF16) {
    wire::badPayload(codec, "unknown value type " + std::to_string(static_cast<int>(type)));
  }
  if (width > 32) wire::badPayload(codec, "index width " + std::to_string(width) + " > 32");
  if (count > n) {
    wire::badPayload(codec,
                     std::to_string(count) + " entries for " + std::to_string(n) + " elements");
  }
  std::vector<uint32_t> indices(count);
  if (form == kBitmap) {
    const uint8_t* bits = reader.take((n + 7) / 8, "index bitmap");
    size_t found = 0;
    for (size_t byte = 0; byte < (n + 7) / 8; ++byte) {
      // Bits past n in the last byte must be clear.
      const unsigned valid = byte == n / 8 ? (1u << (n % 8)) - 1 : 0xffu;
      if (bits[byte] & ~valid & 0xffu) wire::badPayload(codec, "bitmap marks an index past n");
      for (unsigned b = bits[byte]; b != 0; b &= b - 1) {
        if (found < count) indices[found] = static_cast<uint32_t>(byte * 8 + __builtin_ctz(b));
        ++found;
      }
    }
    if (found != count) {
      wire::badPayload(codec, "bitmap marks " + std::to_string(found) + " entries, header says " +
                                  std::to_string(count));
    }
  } else {
    wire::unpackBits(reader.take(wire::packedBytes(count, width), "packed indices"), count, width,
                     indices.data());
    uint64_t index = 0;
    for (size_t i = 0; i < count; ++i) {
      index = i == 0 ? indices[0] : index + indices[i] + 1;
      if (index >= n) {
        wire::badPayload(codec, "index " + std::to_string(index) + " outside " + std::to_string(n) +
                                    " elements");
      }
      indices[i] = static_cast<uint32_t>(index);
    }
  }
  const uint8_t* raw = reader.take(count * valueBytes(type), "values");
  reader.expectEnd();
  std::vector<float> values(count);
  if (count == 0) {
    // nothing to copy (memcpy may not take the null pointers of empty buffers)
  } else if (type == ValueType::kF32) {
    std::memcpy(values.data(), raw, count * sizeof(float));
  } else {
    std::vector<uint16_t> halves(count);
    std::memcpy(halves.data(), raw, count * sizeof(uint16_t));
    kernels::fp16ToFloat(halves.data(), values.data(), count);
  }
  if (mode == DecodeMode::kAssign) std::fill(out, out + n, 0.f);
  for (size_t i = 0; i < count; ++i) out[indices[i]] += values[i];
}

}  // namespace ranklab::sparse
