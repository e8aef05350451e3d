#include "comm/codecs/wire_format.h"

#include <algorithm>

namespace ranklab::wire {

namespace {

// Widths that divide 8 (the codecs' 1, 2, 4 and 8 bits) fill whole bytes: no carries.
template <int kBits>
void packWhole(const uint32_t* values, size_t count, uint8_t* dst) {
  constexpr int kPerByte = 8 / kBits;
  constexpr uint32_t kMask = (1u << kBits) - 1;
  const size_t full = count / kPerByte;
  for (size_t b = 0; b < full; ++b) {
    uint32_t byte = 0;
    for (int j = 0; j < kPerByte; ++j) byte |= (values[b * kPerByte + j] & kMask) << (j * kBits);
    dst[b] = static_cast<uint8_t>(byte);
  }
  uint32_t byte = 0;
  for (size_t i = full * kPerByte; i < count; ++i) {
    byte |= (values[i] & kMask) << ((i - full * kPerByte) * kBits);
  }
  if (count % kPerByte) dst[full] = static_cast<uint8_t>(byte);
}

template <int kBits>
void unpackWhole(const uint8_t* in, size_t count, uint32_t* values) {
  constexpr int kPerByte = 8 / kBits;
  constexpr uint32_t kMask = (1u << kBits) - 1;
  for (size_t i = 0; i < count; ++i) {
    values[i] = (in[i / kPerByte] >> ((i % kPerByte) * kBits)) & kMask;
  }
}

}  // namespace

void packBits(const uint32_t* values, size_t count, int bits, std::vector<uint8_t>& out) {
  const size_t start = out.size();
  out.resize(start + packedBytes(count, bits), 0);
  if (bits == 0) return;
  uint8_t* dst = out.data() + start;
  switch (bits) {
    case 1:
      return packWhole<1>(values, count, dst);
    case 2:
      return packWhole<2>(values, count, dst);
    case 4:
      return packWhole<4>(values, count, dst);
    case 8:
      return packWhole<8>(values, count, dst);
  }
  const uint64_t mask = bits == 32 ? 0xffffffffull : (1ull << bits) - 1;
  // A 64-bit accumulator: whole bytes leave as soon as 8 bits are pending.
  uint64_t acc = 0;
  int pending = 0;
  for (size_t i = 0; i < count; ++i) {
    acc |= (values[i] & mask) << pending;
    pending += bits;
    while (pending >= 8) {
      *dst++ = static_cast<uint8_t>(acc);
      acc >>= 8;
      pending -= 8;
    }
  }
  if (pending > 0) *dst = static_cast<uint8_t>(acc);
}

void unpackBits(const uint8_t* in, size_t count, int bits, uint32_t* values) {
  if (bits == 0) {
    std::fill(values, values + count, 0u);
    return;
  }
  switch (bits) {
    case 1:
      return unpackWhole<1>(in, count, values);
    case 2:
      return unpackWhole<2>(in, count, values);
    case 4:
      return unpackWhole<4>(in, count, values);
    case 8:
      return unpackWhole<8>(in, count, values);
  }
  const uint64_t mask = bits == 32 ? 0xffffffffull : (1ull << bits) - 1;
  uint64_t acc = 0;
  int available = 0;
  for (size_t i = 0; i < count; ++i) {
    while (available < bits) {
      acc |= static_cast<uint64_t>(*in++) << available;
      available += 8;
    }
    values[i] = static_cast<uint32_t>(acc & mask);
    acc >>= bits;
    available -= bits;
  }
}

int bitWidth(uint32_t value) {
  return value == 0 ? 0 : 32 - __builtin_clz(value);
}

void badPayload(const char* codec, const std::string& why) {
  throw std::runtime_error(std::string(codec) + " payload: " + why);
}

}  // namespace ranklab::wire
