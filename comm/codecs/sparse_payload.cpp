#include "comm/codecs/sparse_payload.h"

#include <algorithm>
#include <string>

#include "comm/codecs/wire_format.h"

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

}  // namespace

size_t payloadBytes(const uint32_t* indices, size_t count, size_t n) {
  const size_t packed = wire::packedBytes(count, deltaWidth(indices, count));
  return kHeaderBytes + std::min(packed, (n + 7) / 8) + count * sizeof(float);
}

void encode(const uint32_t* indices, const float* values, size_t count, size_t n,
            std::vector<uint8_t>& out) {
  out.clear();
  const int width = deltaWidth(indices, count);
  const bool bitmap = (n + 7) / 8 < wire::packedBytes(count, width);
  out.push_back(bitmap ? kBitmap : kDeltaPacked);
  out.push_back(static_cast<uint8_t>(bitmap ? 0 : width));
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
  wire::append(out, values, count);
}

void decode(const uint8_t* payload, size_t bytes, size_t n, float* out, DecodeMode mode,
            const char* codec) {
  wire::PayloadReader reader(payload, bytes, codec);
  const auto form = reader.scalar<uint8_t>("index form");
  const auto width = reader.scalar<uint8_t>("index width");
  const auto count = reader.scalar<uint32_t>("entry count");
  if (form != kDeltaPacked && form != kBitmap) {
    wire::badPayload(codec, "unknown index form " + std::to_string(form));
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
  const uint8_t* values = reader.take(count * sizeof(float), "values");
  reader.expectEnd();
  if (mode == DecodeMode::kAssign) std::fill(out, out + n, 0.f);
  for (size_t i = 0; i < count; ++i) {
    float v;
    std::memcpy(&v, values + i * sizeof(float), sizeof v);
    out[indices[i]] += v;
  }
}

}  // namespace ranklab::sparse
