// The index/value payload shared by the sparse codecs (topk, threshold). Indices are
// sorted and stored in whichever of two forms is smaller for this payload:
//
//   u8   form: 0 = delta-packed indices, 1 = bitmap
//   u8   width: bits per delta (delta-packed), 0 (bitmap)
//   u8   value type: 0 = f32, 1 = f16
//   u32  count of entries
//   indices:
//     delta-packed: count fields of `width` bits, packed LSB-first: the first index, then
//                   each index minus the previous one minus 1; ceil(count*width/8) bytes
//     bitmap:       ceil(n/8) bytes, bit i (LSB-first) set when element i is sent
//   values: count f32 or f16 (IEEE half, round to nearest even), in index order
//
// So 1% of 235,146 elements (gaps about 100) costs about 10 bits of index and 2 or 4 bytes
// of value per entry instead of 4 + 4 with plain u32 indices, and a dense selection never
// costs more than n/8 bytes of indices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/codecs/codec.h"

namespace ranklab::sparse {

inline constexpr size_t kHeaderBytes = 7;

enum class ValueType : uint8_t { kF32 = 0, kF16 = 1 };

// Size of the payload for these sorted, distinct indices out of n elements.
size_t payloadBytes(const uint32_t* indices, size_t count, size_t n, ValueType type);

// Replaces `out` with the payload; indices must be sorted, distinct and < n.
void encode(const uint32_t* indices, const float* values, size_t count, size_t n, ValueType type,
            std::vector<uint8_t>& out);

// Writes (kAssign: zeros elsewhere) or adds the payload's entries into out (n floats).
void decode(const uint8_t* payload, size_t bytes, size_t n, float* out, DecodeMode mode,
            const char* codec);

}  // namespace ranklab::sparse
